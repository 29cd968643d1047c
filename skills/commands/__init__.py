"""The command lines over the chunking core: `python -m chunking` and the chunk map."""
