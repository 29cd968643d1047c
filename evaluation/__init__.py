"""Retrieval evaluation of chunk settings: `python -m evaluation DOCS QUESTIONS`.

Chunks a folder of documents at every setting of a grid, embeds the chunks and the
questions, retrieves by exact cosine top-k, and scores each setting by whether the
retrieved chunks hold the reference answers. Uses `chunking` and the embedders in
`skills`; nothing imports this package.
"""
