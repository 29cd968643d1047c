"""`python -m chunking.report`: the chunk map command; the map itself is
`skills.commands.chunk_map`."""
