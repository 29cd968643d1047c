"""The split stage: strategies (`strategies`) that cut an outline into spans within the
limit; `splitter` is the structure-aware one, falling back from sections to blocks,
lines, sentences (`sentences`) and words."""
