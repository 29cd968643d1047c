"""The parse stage: one subpackage or module per input format, each turning a text into
an `Outline` (a source text with its headings, blocks and regions as spans).

`decode` turns a file's bytes into text, `detect` picks the format, `markdown/` and
`html/` parse those formats, `text` reads plain text, and `front_matter` / `titles` find
the document's title.  Parsers are
imported on use (see `chunking.pipeline`), so a markdown-only Function never loads lxml.
"""
