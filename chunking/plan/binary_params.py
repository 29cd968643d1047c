"""The `binary` strategy's parameters (`chunking.plan.binary`), validated when built."""

from __future__ import annotations

from dataclasses import dataclass

from chunking.options.errors import OptionError, shown_integer

BINARY_SCORERS = ("embeddings", "crossEncoder", "rerank")
"""What scores a split of the `binary` strategy: cosine between the two halves'
embeddings (the default), a local cross-encoder, or a rerank endpoint."""
DEFAULT_BINARY_CANDIDATES = 16
"""Split positions scored per level of the recursion, at most."""
MAX_BINARY_CANDIDATES = 256


@dataclass(frozen=True, slots=True)
class BinarySplit:
    """The `binary` strategy's own parameters."""

    scorer: str = "embeddings"
    """`binaryScorer`: one of `BINARY_SCORERS`."""
    candidates: int = DEFAULT_BINARY_CANDIDATES
    """`binaryCandidates`: split positions scored per part, evenly spread over its sentence
    boundaries, so a part of n sentences costs min(n - 1, candidates) scores."""

    def __post_init__(self) -> None:
        if self.scorer not in BINARY_SCORERS:
            raise OptionError(
                f"binaryScorer must be one of {', '.join(BINARY_SCORERS)} (got {self.scorer!r})"
            )
        if not 1 <= self.candidates <= MAX_BINARY_CANDIDATES:
            raise OptionError(
                f"binaryCandidates must be from 1 to {MAX_BINARY_CANDIDATES} "
                f"(got {shown_integer(self.candidates)})"
            )
