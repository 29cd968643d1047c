"""A local cross-encoder as a `PairClient`: `binaryScorer` crossEncoder, CROSS_ENCODER_PATH.

The folder is one the user downloaded (a bge-reranker or ms-marco MiniLM model); nothing
is fetched at run time. Two layouts load:

- an ONNX export, the layout Hugging Face Optimum writes and those model repositories
  ship: `model.onnx` or `onnx/model.onnx`, with `tokenizer.json` beside it (or in the
  folder above `onnx/`). It runs on onnxruntime with the `tokenizers` library, about
  115 MB installed, no torch (requirements-local.txt);
- without an ONNX file, a sentence-transformers model folder, through its
  `CrossEncoder` (needs sentence-transformers and torch, requirements-local-minilm.txt).

The model is loaded at the first score, not before (nothing at import or start-up time),
and runs in a thread of its own, off the event loop, one batch at a time; a call that
overruns its timeout fails with `ScoringError` (the thread finishes the batch it is on).
A score is the model's logit for the pair: higher means the second text follows the
first more closely. Only the order of scores matters to the `binary` strategy, so no
sigmoid is applied (sentence-transformers' one is monotonic anyway).
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from chunking.plan.scoring import ScoringError

if TYPE_CHECKING:
    from collections.abc import Sequence

MAX_TOKENS = 512
"""Word pieces per pair, both texts together (cut longest first): what BERT-sized
cross-encoders read; the `binary` strategy sends about 250 tokens a side."""
BATCH_PAIRS = 32
"""Pairs per model call: a split's 16 candidates in one."""
ONNX_FILES = ("model.onnx", "onnx/model.onnx")
"""Where an ONNX export keeps the model, in the order they are looked for."""


class PairModel(Protocol):
    """A loaded cross-encoder: scores for pairs, in order."""

    def predict(self, pairs: Sequence[tuple[str, str]]) -> list[float]: ...


def onnx_files(folder: Path) -> tuple[Path, Path] | None:
    """(model, tokenizer.json) of an ONNX export in `folder`, or None."""
    for name in ONNX_FILES:
        model = folder / name
        if model.is_file():
            for tokenizer in (model.parent / "tokenizer.json", folder / "tokenizer.json"):
                if tokenizer.is_file():
                    return model, tokenizer
    return None


class OnnxCrossEncoder:
    """An ONNX cross-encoder: tokenizers for the pairs, onnxruntime for the logits."""

    def __init__(self, model: Path, tokenizer: Path, max_tokens: int = MAX_TOKENS) -> None:
        # Optional packages (requirements-local.txt), typed as Any whether or not they are
        # installed, so mypy gives the same answer either way.
        try:
            import numpy as np  # noqa: PLC0415

            onnxruntime: Any = importlib.import_module("onnxruntime")
            tokenizers: Any = importlib.import_module("tokenizers")
        except ImportError as error:
            raise ScoringError(
                f"the cross-encoder in {model.parent} is an ONNX export, which needs "
                f"onnxruntime and tokenizers (pip install -r requirements-local.txt): {error}"
            ) from None
        self._np = np
        self.tokenizer = tokenizers.Tokenizer.from_file(str(tokenizer))
        self.tokenizer.enable_truncation(max_tokens)
        self.tokenizer.enable_padding(pad_id=self.tokenizer.token_to_id("[PAD]") or 0)
        options = onnxruntime.SessionOptions()
        # One thread: the machine's cores serve the skill's workers, not one model call.
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        self.session = onnxruntime.InferenceSession(
            str(model), options, providers=["CPUExecutionProvider"]
        )
        self.inputs = {item.name for item in self.session.get_inputs()}

    def predict(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """The logit of each pair (the last column when the model has several)."""
        np = self._np
        scores: list[float] = []
        for start in range(0, len(pairs), BATCH_PAIRS):
            encodings = self.tokenizer.encode_batch(list(pairs[start : start + BATCH_PAIRS]))
            feed: dict[str, Any] = {
                "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
            }
            outputs = self.session.run(None, {k: v for k, v in feed.items() if k in self.inputs})
            logits = np.asarray(outputs[0], dtype=np.float64)
            logits = logits.reshape(len(encodings), -1)[:, -1]
            scores.extend(float(value) for value in logits)
        return scores


class SentenceTransformersCrossEncoder:
    """A sentence-transformers model folder, through its `CrossEncoder`, offline."""

    def __init__(self, folder: Path, max_tokens: int = MAX_TOKENS) -> None:
        sentence_transformers: Any = importlib.import_module("sentence_transformers")
        self.model = sentence_transformers.CrossEncoder(
            str(folder), max_length=max_tokens, local_files_only=True
        )

    def predict(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        scores = self.model.predict(list(pairs), batch_size=BATCH_PAIRS, show_progress_bar=False)
        return [float(value) for value in scores]


def load_cross_encoder(folder: Path) -> PairModel:
    """The cross-encoder in `folder`: its ONNX export, else sentence-transformers'."""
    if not folder.is_dir():
        raise ScoringError(f"CROSS_ENCODER_PATH {folder} is not a folder")
    found = onnx_files(folder)
    if found is not None:
        return OnnxCrossEncoder(*found)
    if importlib.util.find_spec("sentence_transformers") is None:
        raise ScoringError(
            f"CROSS_ENCODER_PATH {folder} holds no ONNX export (model.onnx or "
            "onnx/model.onnx, with tokenizer.json), and sentence-transformers, which would "
            "load another layout, is not installed"
        )
    try:
        return SentenceTransformersCrossEncoder(folder)
    except (OSError, ValueError) as error:
        raise ScoringError(f"no cross-encoder could be loaded from {folder}: {error}") from None


class CrossEncoderClient:
    """`PairClient` of a local cross-encoder, loaded at first use, run off the event loop."""

    source = "crossEncoder"

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)
        self._model: PairModel | None = None
        self._lock = threading.Lock()
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cross-encoder")
        """One model call at a time: each already uses the thread it gets."""

    def _predict(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        with self._lock:
            if self._model is None:
                self._model = load_cross_encoder(self.folder)
        scores = self._model.predict(pairs)
        if len(scores) != len(pairs):
            raise ScoringError(
                f"the cross-encoder returned {len(scores)} scores for {len(pairs)} pairs"
            )
        return scores

    async def score(self, pairs: Sequence[tuple[str, str]], timeout: float) -> list[float]:
        """One score per pair, within `timeout` seconds; raises `ScoringError`."""
        if not pairs:
            return []
        loop = asyncio.get_running_loop()
        future = loop.run_in_executor(self._executor, self._predict, list(pairs))
        try:
            return await asyncio.wait_for(future, max(timeout, 0.0))
        except TimeoutError:
            raise ScoringError(
                f"the cross-encoder did not score {len(pairs)} pairs within {timeout:.1f} s"
            ) from None
        except ScoringError:
            raise
        except Exception as error:  # onnxruntime and torch raise their own kinds
            raise ScoringError(
                f"the cross-encoder failed: {type(error).__name__}: {error}"[:300]
            ) from None

    async def aclose(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
