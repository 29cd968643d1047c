"""Markdown: `outline` builds the outline from the blocks a parser finds (`pulldown_parser`,
on pulldown-cmark; `markdown_it_parser`, on markdown-it-py, the reference and fallback),
with `blocks` as the parsers' common result; `docfx` (tab groups, zone pivots), `mdx`
(MDX markup) and `pages` (Document Layout page markers, figures) are the dialects the
outline knows."""
