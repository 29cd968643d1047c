"""Measuring text: characters (UTF-16 code units) or tokens, and the shipped tiktoken tables."""
