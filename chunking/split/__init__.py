"""The structure strategy's machinery (`chunking.strategies.structure` uses it): the
splitter, falling back from sections to blocks, lines, sentences (`sentences`) and words."""
