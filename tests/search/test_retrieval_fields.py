"""Query-time merging selects the chunk index's fields by the chunk schema's names."""

from __future__ import annotations

import pytest

from skills import chunk_schema
from skills.search.retrieval import INDEX_FIELDS, OFFSET_FIELDS, RETRIEVED_MEMBERS, SPAN_MEMBERS


def test_retrieval_fields_are_the_schema_fields_of_the_members_it_reads() -> None:
    fields = {field.name: field for field in chunk_schema.INDEX_FIELDS}
    members = {member.name for member in chunk_schema.CHUNK_MEMBERS}
    assert INDEX_FIELDS[:2] == (chunk_schema.KEY_FIELD, chunk_schema.PARENT_KEY_FIELD)
    read = (*RETRIEVED_MEMBERS, *SPAN_MEMBERS)
    assert tuple(fields[name].source for name in (*INDEX_FIELDS[2:], *OFFSET_FIELDS)) == read
    assert {source.partition("/")[0] for source in read} <= members
    assert all(fields[name].retrievable is not False for name in (*INDEX_FIELDS, *OFFSET_FIELDS))


def test_retrieval_selects_what_it_always_selected() -> None:
    assert INDEX_FIELDS == (
        "chunk_id", "parent_id", "content", "title", "headings", "url", "anchor", "ordinal"
    )  # fmt: skip
    assert OFFSET_FIELDS == ("offset", "length")


def test_a_member_no_field_reads_is_named() -> None:
    assert chunk_schema.index_field_for("offset/codePoint").name == "offset"
    with pytest.raises(KeyError, match="no index field reads chunk member 'size'"):
        chunk_schema.index_field_for("size")
