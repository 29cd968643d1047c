"""Front matter titles: the direct reading of flat entries against PyYAML's."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bench.documents import DEFAULT_CORPUS, load_corpus
from chunking.parse import front_matter
from chunking.parse.front_matter import front_matter_title
from chunking.parse.markdown.pulldown_parser import _front_matter

KEYS = ["title", "Title", "description", "ms.date", "yes", "null", "_x", "a-b", "title "]
VALUES = [
    *("", "plain text", "Plain: colon", "with #hash", "a #comment", "ends:", "  spaced  "),
    *("yes", "No", "on", "OFF", "~", "null", "Null", "true", "42", "0x1F", "0o17", "1_000"),
    *("1:30", ".inf", "-.5", "+1", "1e3", ".NaN", "2024-02-30", "2024-01-01", "05/28/2024"),
    *('"quoted"', "'single'", "'it''s'", '"say \\"hi\\""', '"open', "'bad'quote'", '""'),
    *("[x]", "{a: 1}", "- item", "-dash", "? q", ":x", "*alias", "&anchor v", "!tag v", "|"),
    *(">", "%x", "@x", "`x", "=", "<<", "x,y", "[Link](https://example.com)", "Über straße"),
    *("tab\there", "nbsp\u00a0here", "ctrl\x07", "' spaced '", '"   "', "'  '"),
]
ENTRIES = st.builds(
    lambda key, value: f"{key}: {value}".rstrip(" ") if value else f"{key}:",
    st.sampled_from(KEYS),
    st.sampled_from(VALUES),
)
UNSPACED = st.builds(
    lambda key, value: f"{key}:{value}", st.sampled_from(KEYS), st.sampled_from(VALUES)
)
OTHER_LINES = st.sampled_from(
    [
        *("# comment", "", "  - nested", "  continued", "\tkey: v", "---", "...", "%YAML 1.1"),
        *("key: value # trailing", "title: a\r", "title:  two  spaces ", "title: 'x' # c"),
    ]
)
LINES = st.one_of(ENTRIES, UNSPACED, OTHER_LINES)
EXAMPLES = int(os.environ.get("PROPERTY_EXAMPLES", "60")) * 10


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(LINES, max_size=12).map("\n".join))
def test_the_direct_reading_agrees_with_yaml(content: str) -> None:
    assert front_matter_title(content) == front_matter._yaml_title(content), repr(content)


@pytest.mark.parametrize("key", KEYS)
def test_every_key_and_value_reads_as_yaml_reads_it(key: str) -> None:
    # Alone, and after a title that a refused value elsewhere would lose.
    for value in VALUES:
        for content in (f"{key}: {value}", f"{key}:{value}", f"title: x\n{key}: {value}\n"):
            assert front_matter_title(content) == front_matter._yaml_title(content), content


@pytest.mark.parametrize(
    ("content", "title"),
    [
        ("title: Hello world\nms.date: 05/28/2024\n", "Hello world"),
        ("title: 'It''s here'\n", "It's here"),
        ('title: "Quoted: yes"\n', "Quoted: yes"),
        ("title: first\ntitle: second\n", "second"),
        ("title: yes\n", None),
        ("title: 2024\n", None),
        ("# comment\ndescription: x\n", None),
    ],
)
def test_flat_entries_are_read_directly(content: str, title: str | None) -> None:
    # Read without YAML (the fast path raises nothing), and as YAML reads them.
    front_matter._flat_title(content)
    assert front_matter_title(content) == (title, None)
    assert front_matter._yaml_title(content) == (title, None)


@pytest.mark.parametrize(
    "content",
    ["tags:\n  - a\n", "title: >\n  folded\n", "date: 2024-02-30\ntitle: x\n", "title: *ref\n"],
)
def test_anything_else_goes_to_yaml(content: str) -> None:
    with pytest.raises(front_matter._NeedsYaml):
        front_matter._flat_title(content)


def test_every_corpus_front_matter_reads_the_same_both_ways() -> None:
    documents = load_corpus(DEFAULT_CORPUS, "markdown")
    if not documents:
        pytest.skip(f"corpus not present at {DEFAULT_CORPUS}")
    contents = [found[1] for d in documents if (found := _front_matter(d.text)[0]) is not None]
    direct = 0
    for content in contents:
        assert front_matter_title(content) == front_matter._yaml_title(content), content[:200]
        try:
            front_matter._flat_title(content)
            direct += 1
        except front_matter._NeedsYaml:
            continue
    # Most real front matter takes the direct path (else it saves nothing).
    assert direct > len(contents) * 0.8
