"""The contextualize stage: what a planned span of the source needs to be read as a chunk.

`prefix` puts the title and heading path in front of the content (the text to embed),
and `continuations` finds the table header rows and fence lines a chunk's reader text
repeats when it continues a table or code block.
"""
