"""The cross-encoder `PairClient`, loading a tiny ONNX model the test builds (issue 16, item 3).

The model is a real ONNX graph in the layout Hugging Face exports ship (`model.onnx` or
`onnx/model.onnx`, `tokenizer.json`), made here with the `onnx` helper and the
`tokenizers` library: word embeddings of one dimension, averaged over the attention
mask, through a linear layer, to logits [batch, 1]. "good" weighs +1, "bad" -1, every
other word 0, so a pair's score is (goods - bads) / tokens, an order the test knows.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from typing import TYPE_CHECKING

import pytest

from chunking import ChunkOptions, Limits, Unit
from chunking.pipeline import chunk_document
from chunking.plan.binary_params import BinarySplit
from chunking.plan.scoring import ScoringError
from skills.embedding.scoring import ScoringService, blocking_scoring, build_pair_client
from skills.embedding.scoring.cross_encoder import CrossEncoderClient, onnx_files
from skills.skill.settings import load_settings

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
tokenizers = pytest.importorskip("tokenizers")

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
WORDS = ["good", "bad", "cat", "mat", "sea", "ship", "the", "a", "on", "sails", "purrs"]
WEIGHTS = {"good": 1.0, "bad": -1.0}


def write_tokenizer(path: Path) -> None:
    """A WordLevel tokenizer.json with BERT's pair template: [CLS] a [SEP] b [SEP]."""
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    vocabulary = {token: index for index, token in enumerate(SPECIAL + WORDS)}
    tokenizer = Tokenizer(models.WordLevel(vocabulary, unk_token="[UNK]"))
    tokenizer.pre_tokenizer = pre_tokenizers.Whitespace()
    tokenizer.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", 2), ("[SEP]", 3)],
    )
    tokenizer.save(str(path))


def write_model(path: Path) -> None:
    """input_ids, attention_mask, token_type_ids -> gather -> masked mean -> linear."""
    from onnx import TensorProto, helper

    vocabulary = SPECIAL + WORDS
    embedding = [WEIGHTS.get(token, 0.0) for token in vocabulary]
    initializers = [
        helper.make_tensor("embedding", TensorProto.FLOAT, [len(vocabulary), 1], embedding),
        helper.make_tensor("types", TensorProto.FLOAT, [2, 1], [0.0, 0.0]),
        helper.make_tensor("weight", TensorProto.FLOAT, [1, 1], [1.0]),
        helper.make_tensor("bias", TensorProto.FLOAT, [1], [0.0]),
        helper.make_tensor("axis_tokens", TensorProto.INT64, [1], [1]),
        helper.make_tensor("axis_last", TensorProto.INT64, [1], [2]),
    ]
    nodes = [
        helper.make_node("Gather", ["embedding", "input_ids"], ["words"]),
        helper.make_node("Gather", ["types", "token_type_ids"], ["kinds"]),
        helper.make_node("Add", ["words", "kinds"], ["tokens"]),
        helper.make_node("Cast", ["attention_mask"], ["mask"], to=TensorProto.FLOAT),
        helper.make_node("Unsqueeze", ["mask", "axis_last"], ["mask3"]),
        helper.make_node("Mul", ["tokens", "mask3"], ["masked"]),
        helper.make_node("ReduceSum", ["masked", "axis_tokens"], ["summed"], keepdims=0),
        helper.make_node("ReduceSum", ["mask3", "axis_tokens"], ["count"], keepdims=0),
        helper.make_node("Div", ["summed", "count"], ["mean"]),
        helper.make_node("MatMul", ["mean", "weight"], ["linear"]),
        helper.make_node("Add", ["linear", "bias"], ["logits"]),
    ]
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, ["batch", "sequence"])
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch", 1])
    graph = helper.make_graph(nodes, "tiny-cross-encoder", inputs, [output], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    path.parent.mkdir(parents=True, exist_ok=True)
    onnx.save(model, str(path))


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    write_model(tmp_path / "model.onnx")
    write_tokenizer(tmp_path / "tokenizer.json")
    return tmp_path


def expected(left: str, right: str) -> float:
    tokens = [*left.split(), *right.split()]
    return sum(WEIGHTS.get(t, 0.0) for t in tokens) / (len(tokens) + 3)  # CLS, SEP, SEP


def score(
    client: CrossEncoderClient, pairs: Sequence[tuple[str, str]], timeout: float = 10.0
) -> list[float]:
    async def run() -> list[float]:
        try:
            return await client.score(pairs, timeout)
        finally:
            await client.aclose()

    return asyncio.run(run())


PAIRS = [
    ("good cat", "good mat"),
    ("the cat", "a mat"),
    ("bad sea", "bad ship bad"),
    ("good", "bad"),
    ("unknown words here", "good"),
]


def test_scores_are_finite_deterministic_and_ordered_as_the_weights_say(folder: Path) -> None:
    first = score(CrossEncoderClient(folder), PAIRS)
    again = score(CrossEncoderClient(folder), PAIRS)
    assert first == again
    assert all(math.isfinite(value) for value in first)
    for value, (left, right) in zip(first, PAIRS, strict=True):
        assert value == pytest.approx(expected(left, right), abs=1e-6)
    assert first[0] > first[4] > first[1] == first[3] > first[2]


def test_the_onnx_folder_layout_of_hugging_face_exports_loads(tmp_path: Path) -> None:
    write_model(tmp_path / "onnx" / "model.onnx")
    write_tokenizer(tmp_path / "tokenizer.json")
    assert onnx_files(tmp_path) == (tmp_path / "onnx" / "model.onnx", tmp_path / "tokenizer.json")
    assert score(CrossEncoderClient(tmp_path), PAIRS[:1])[0] == pytest.approx(
        expected(*PAIRS[0]), abs=1e-6
    )


def test_a_folder_without_a_model_is_a_scoring_error_that_names_it(tmp_path: Path) -> None:
    with pytest.raises(ScoringError, match=f"CROSS_ENCODER_PATH {tmp_path} holds no ONNX export"):
        score(CrossEncoderClient(tmp_path), PAIRS[:1])
    with pytest.raises(ScoringError, match="is not a folder"):
        score(CrossEncoderClient(tmp_path / "missing"), PAIRS[:1])


class SlowCrossEncoder(CrossEncoderClient):
    """The real client whose model takes `seconds` per call."""

    def __init__(self, folder: Path, seconds: float) -> None:
        super().__init__(folder)
        self.seconds = seconds

    def _predict(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        time.sleep(self.seconds)
        return super()._predict(pairs)


def test_the_model_runs_off_the_event_loop_and_within_the_timeout(folder: Path) -> None:
    async def run() -> tuple[int, float]:
        client = SlowCrossEncoder(folder, 1.0)
        ticks = 0

        async def tick() -> None:
            nonlocal ticks
            while True:
                await asyncio.sleep(0.01)
                ticks += 1

        ticker = asyncio.create_task(tick())
        began = time.monotonic()
        with pytest.raises(ScoringError, match=r"did not score 1 pairs within 0\.2 s"):
            await client.score(PAIRS[:1], 0.2)
        took = time.monotonic() - began
        ticker.cancel()
        await client.aclose()
        return ticks, took

    ticks, took = asyncio.run(run())
    assert took < 0.8
    assert ticks >= 5  # the loop went on while the model ran


class Recording(CrossEncoderClient):
    """The real client, keeping every pair it scored with its score."""

    def __init__(self, folder: Path) -> None:
        super().__init__(folder)
        self.scored: list[list[tuple[tuple[str, str], float]]] = []

    def _predict(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        scores = super()._predict(pairs)
        self.scored.append(list(zip(pairs, scores, strict=True)))
        return scores


def test_the_settings_build_it_and_the_binary_strategy_splits_where_it_scores_lowest(
    folder: Path,
) -> None:
    settings = load_settings({"CROSS_ENCODER_PATH": str(folder)}, lambda model: False)
    assert isinstance(build_pair_client(settings), CrossEncoderClient)
    client = Recording(folder)
    good = [f"good cat {n} purrs on the mat." for n in range(12)]
    bad = [f"bad ship {n} sails the sea." for n in range(12)]
    text = " ".join(good + bad)
    options = ChunkOptions(
        limits=Limits(Unit.CHARACTERS, 500, 0),
        title_prefix=False,
        strategy="binary",
        parameters=BinarySplit(scorer="crossEncoder", candidates=64),
    )
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    service = ScoringService(pairs=client)
    try:
        scoring = blocking_scoring(service, loop, time.monotonic() + 30)
        document = chunk_document(text, options=options, scoring=scoring)
    finally:
        asyncio.run_coroutine_threadsafe(service.aclose(), loop).result(5)
        loop.call_soon_threadsafe(loop.stop)
        thread.join(5)
    assert len(document.chunks) >= 2
    # Each split's lowest-scored boundary starts a chunk: the model's scores decide.
    starts = {c.start for c in document.chunks}
    for scored in client.scored:
        (_, right), _ = min(scored, key=lambda item: item[1])
        assert text.index(right) in starts
