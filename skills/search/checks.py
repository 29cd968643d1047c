"""Cross-checks of the search definitions that the service (or the SDK) would not catch early.

The SDK models accept unknown keys and wrong types silently, and the service reports a
wrong mapping only when an indexer runs. These checks work on the REST JSON
(`model.as_dict()`), so they apply equally to definitions built in code, read from
files or fetched from a service. Each returns a list of problems; empty means consistent.
"""

from __future__ import annotations

import datetime
import re
from typing import TYPE_CHECKING, Any

from skills import chunk_schema
from skills.chunk_schema import chunk_member_types
from skills.skill.file_data import INPUT_FILE_DATA as FILE_DATA
from skills.skill.record_inputs import KNOWN_INPUTS, InputErrors, read_record_inputs
from skills.skill.settings import Settings

if TYPE_CHECKING:
    from collections.abc import Sequence

WireJson = dict[str, Any]
"""A definition in REST JSON form."""

WEB_API_SKILL = "#Microsoft.Skills.Custom.WebApiSkill"
MAX_SKILL_TIMEOUT_SECONDS = 230
MAX_DEGREE_OF_PARALLELISM = 10
SEMANTIC_TYPES = frozenset({"Edm.String", "Collection(Edm.String)"})
"""Field types the semantic ranker reads."""

SKILL_CHUNK_FIELDS: dict[str, str] = chunk_member_types()
"""Fields of each object in the skill's `chunks` output and the index type each fits
(`skills.chunk_schema.CHUNK_MEMBERS`, which the skill's output is tested against)."""

MEASURE_UNITS = frozenset(chunk_schema.MEASURE_UNITS)
"""Members of a chunk's `offset` and `length` (each an Edm.Int32)."""
SECTION_LEVELS = frozenset(f"h{level}" for level in range(1, 7))
"""Members of a chunk's `sections` (each an Edm.String; which ones depend on
`markdownHeaderDepth`)."""

DOCUMENT_FIELDS: dict[str, str] = {
    "content": "Edm.String",
    "metadata_storage_name": "Edm.String",
    "metadata_storage_path": "Edm.String",
    "metadata_content_type": "Edm.String",
    "metadata_storage_size": "Edm.Int64",
    "metadata_storage_last_modified": "Edm.DateTimeOffset",
}
"""Enrichment-tree fields a blob indexer always provides (custom blob metadata adds more)."""

COMPATIBLE_TYPES: dict[str, frozenset[str]] = {
    "Edm.String": frozenset({"Edm.String"}),
    "Collection(Edm.String)": frozenset({"Collection(Edm.String)"}),
    "Edm.Int32": frozenset({"Edm.Int32", "Edm.Int64", "Edm.Double", "Edm.String"}),
    "Edm.Int64": frozenset({"Edm.Int64", "Edm.Double", "Edm.String"}),
    "Edm.DateTimeOffset": frozenset({"Edm.DateTimeOffset", "Edm.String"}),
    "Collection(Edm.Single)": frozenset({"Collection(Edm.Single)"}),
    "Edm.ComplexType": frozenset({"Edm.ComplexType"}),
}
"""Source type -> index field types it can be stored in."""

MODEL_DIMENSIONS: dict[str, tuple[int, int]] = {
    "text-embedding-ada-002": (1536, 1536),
    "text-embedding-3-small": (1, 1536),
    "text-embedding-3-large": (1, 3072),
}
"""Embedding model -> (min, max) output dimensions."""

_DURATION = re.compile(
    r"^P(?:(?P<days>\d+)D)?(?:T(?:(?P<hours>\d+)H)?(?:(?P<minutes>\d+)M)?"
    r"(?:(?P<seconds>\d+(?:\.\d+)?)S)?)?$"
)


def parse_duration(text: str) -> datetime.timedelta:
    """An XSD dayTimeDuration (`PT230S`, `PT03M50S`, `P1DT2H`) as a timedelta."""
    match = _DURATION.match(text)
    if not match or text in {"P", "PT"} or text.endswith("T"):
        raise ValueError(f"not an ISO 8601 day-time duration: {text!r}")
    parts = {name: float(value) for name, value in match.groupdict().items() if value}
    return datetime.timedelta(**parts)


def web_api_skills(skillset: WireJson) -> list[WireJson]:
    """The skillset's custom Web API skills."""
    return [s for s in skillset.get("skills", []) if s.get("@odata.type") == WEB_API_SKILL]


def literal_value(source: str) -> object:
    """The value of a literal input source: `='pages'` -> 'pages', `=512` -> 512."""
    body = source[1:].strip()
    if len(body) >= 2 and body[0] == body[-1] and body[0] in "'\"":
        return body[1:-1]
    if body in {"true", "false"}:
        return body == "true"
    try:
        return int(body)
    except ValueError:
        return float(body)


def check_definitions(
    data_source: WireJson,
    index: WireJson,
    skillset: WireJson,
    indexer: WireJson,
    *,
    embedding_dimensions: int,
    embedding_model: str | None = None,
    allow_http: bool = False,
) -> list[str]:
    """Every inconsistency between the four definitions and the embedding configuration."""
    problems: list[str] = []
    problems += _check_names(data_source, index, skillset, indexer)
    problems += check_index(index, embedding_dimensions, embedding_model)
    problems += check_semantic(index)
    problems += _check_skills(skillset, indexer, allow_http)
    problems += check_projection(skillset, index)
    problems += _check_indexer(indexer, _reads_file_data(skillset))
    return problems


def _reads_file_data(skillset: WireJson) -> bool:
    """Whether a skill takes the raw file (`file_data`) instead of `text`."""
    return any(
        i.get("name") == FILE_DATA
        for skill in skillset.get("skills", [])
        for i in skill.get("inputs", [])
    )


def check_partitions(
    partitions: Sequence[tuple[WireJson, WireJson, WireJson, WireJson]],
) -> list[str]:
    """What goes wrong between partitions (data source, index, skillset, indexer each):
    shared names, indexers that write elsewhere, and folders that overlap or miss."""
    problems: list[str] = []
    if len(partitions) < 2:
        return problems
    for kind, names in (
        ("data source", [ds.get("name") for ds, _, _, _ in partitions]),
        ("indexer", [ix.get("name") for _, _, _, ix in partitions]),
    ):
        repeated = sorted({str(n) for n in names if names.count(n) > 1})
        if repeated:
            problems.append(f"partitions share the {kind} name(s) {', '.join(repeated)}")
    for key in ("targetIndexName", "skillsetName"):
        targets = {str(ix.get(key)) for _, _, _, ix in partitions}
        if len(targets) > 1:
            problems.append(f"partition indexers differ in {key}: {', '.join(sorted(targets))}")
    used = [ix.get("dataSourceName") for _, _, _, ix in partitions]
    if len(set(used)) != len(used):
        problems.append("two partition indexers read the same data source")
    places: list[tuple[str, str]] = []
    for data_source, _, _, _ in partitions:
        container = data_source.get("container") or {}
        folder = str(container.get("query") or "").strip("/")
        if not folder:
            problems.append(
                f"partition data source {data_source.get('name')!r} has no folder (container "
                "query): it reads the whole container, which the other partitions also read"
            )
        places.append((str(container.get("name")), folder))
    for number, (container, folder) in enumerate(places):
        for other_container, other in places[number + 1 :]:
            if (
                container == other_container
                and folder
                and other
                and (
                    folder == other
                    or other.startswith(f"{folder}/")
                    or folder.startswith(f"{other}/")
                )
            ):
                problems.append(
                    f"partition folders {folder!r} and {other!r} overlap in container "
                    f"{container!r}: their documents would be indexed twice"
                )
    return problems


def _check_names(
    data_source: WireJson, index: WireJson, skillset: WireJson, indexer: WireJson
) -> list[str]:
    problems = []
    for key, actual in (
        ("dataSourceName", data_source.get("name")),
        ("targetIndexName", index.get("name")),
        ("skillsetName", skillset.get("name")),
    ):
        if indexer.get(key) != actual:
            problems.append(
                f"indexer {key} is {indexer.get(key)!r}, but the definition is {actual!r}"
            )
    if data_source.get("type") != "azureblob":
        problems.append(f"data source type is {data_source.get('type')!r}, expected 'azureblob'")
    if not data_source.get("dataDeletionDetectionPolicy"):
        problems.append("data source has no dataDeletionDetectionPolicy: deleted blobs would stay")
    return problems


def fields_by_name(index: WireJson) -> dict[str, WireJson]:
    """The index's top-level fields by name."""
    return {f["name"]: f for f in index.get("fields", [])}


def check_index(
    index: WireJson, embedding_dimensions: int, embedding_model: str | None = None
) -> list[str]:
    """Key, vector fields, profiles and vectorizers of the chunk index."""
    problems = []
    fields = fields_by_name(index)
    keys = [f for f in fields.values() if f.get("key")]
    if len(keys) != 1:
        problems.append(f"index must have exactly one key field (has {len(keys)})")
    for key in keys:
        if key.get("type") != "Edm.String" or key.get("analyzer") != "keyword":
            problems.append(
                f"key field {key['name']!r} must be Edm.String with the keyword analyzer "
                "(index projections generate the keys)"
            )
        if key.get("searchable") is False:
            problems.append(f"key field {key['name']!r} must be searchable for projections")
    search = index.get("vectorSearch") or {}
    profiles = {p["name"]: p for p in search.get("profiles", [])}
    algorithms = {a["name"] for a in search.get("algorithms", [])}
    vectorizers = {v["name"]: v for v in search.get("vectorizers", [])}
    vector_fields = [f for f in fields.values() if f.get("type") == "Collection(Edm.Single)"]
    if not vector_fields:
        problems.append("index has no vector field (Collection(Edm.Single))")
    for vector in vector_fields:
        name = vector["name"]
        if vector.get("dimensions") != embedding_dimensions:
            problems.append(
                f"vector field {name!r} has {vector.get('dimensions')} dimensions, but the "
                f"embeddings have {embedding_dimensions}"
            )
        profile = profiles.get(vector.get("vectorSearchProfile", ""))
        if profile is None:
            problems.append(
                f"vector field {name!r} uses profile {vector.get('vectorSearchProfile')!r}, "
                "which the index does not define"
            )
            continue
        if profile.get("algorithm") not in algorithms:
            problems.append(f"profile {profile['name']!r} names an undefined algorithm")
        vectorizer = vectorizers.get(profile.get("vectorizer", ""))
        if vectorizer is None:
            problems.append(f"profile {profile['name']!r} has no defined vectorizer for queries")
            continue
        parameters = vectorizer.get("azureOpenAIParameters") or {}
        model = parameters.get("modelName")
        if embedding_model is not None and model != embedding_model:
            problems.append(
                f"vectorizer {vectorizer['name']!r} uses model {model!r}, but the skill embeds "
                f"with {embedding_model!r}"
            )
        low, high = MODEL_DIMENSIONS.get(model or "", (1, 1 << 16))
        if not low <= embedding_dimensions <= high:
            problems.append(
                f"model {model!r} gives {low}..{high} dimensions, not {embedding_dimensions}"
            )
    return problems


def check_semantic(index: WireJson) -> list[str]:
    """The semantic configuration: present, the default one defined, and every field it
    names a searchable string field of the index (the ranker reads text only)."""
    semantic = index.get("semantic") or {}
    configurations = {c.get("name"): c for c in semantic.get("configurations") or []}
    if not configurations:
        return ["index has no semantic configuration (queries cannot use the semantic ranker)"]
    problems: list[str] = []
    default = semantic.get("defaultConfiguration")
    if default is not None and default not in configurations:
        problems.append(f"semantic defaultConfiguration {default!r} is not defined")
    fields = fields_by_name(index)
    for name, configuration in configurations.items():
        prioritized = configuration.get("prioritizedFields") or {}
        title = prioritized.get("titleField")
        named = [
            *([title] if title else []),
            *(prioritized.get("prioritizedContentFields") or []),
            *(prioritized.get("prioritizedKeywordsFields") or []),
        ]
        if not prioritized.get("prioritizedContentFields"):
            problems.append(f"semantic configuration {name!r} names no content field")
        for entry in named:
            field_name = entry.get("fieldName")
            field = fields.get(field_name or "")
            if field is None:
                problems.append(
                    f"semantic configuration {name!r} names {field_name!r}, which is not an "
                    "index field"
                )
            elif field.get("type") not in SEMANTIC_TYPES or field.get("searchable") is False:
                problems.append(
                    f"semantic configuration {name!r} names {field_name!r}, which is not a "
                    "searchable string field"
                )
    return problems


def _check_skills(skillset: WireJson, indexer: WireJson, allow_http: bool) -> list[str]:
    problems = []
    skills = web_api_skills(skillset)
    if not skills:
        return ["skillset has no custom Web API skill"]
    indexer_batch = ((indexer.get("parameters") or {}).get("batchSize")) or 10
    for skill in skills:
        name = skill.get("name", "?")
        uri = str(skill.get("uri", ""))
        if not uri.startswith("https://") and not (allow_http and uri.startswith("http://")):
            problems.append(f"skill {name!r}: the service calls only https URIs (got {uri!r})")
        seconds = parse_duration(skill.get("timeout") or "PT30S").total_seconds()
        if not 1 <= seconds <= MAX_SKILL_TIMEOUT_SECONDS:
            problems.append(f"skill {name!r}: timeout {seconds:g} s is outside 1..230 s")
        batch = skill.get("batchSize") or 1000
        if batch > indexer_batch:
            problems.append(
                f"skill {name!r}: batchSize {batch} exceeds the indexer's batchSize "
                f"{indexer_batch}, so skill requests never fill"
            )
        parallelism = skill.get("degreeOfParallelism") or 5
        if not 1 <= parallelism <= MAX_DEGREE_OF_PARALLELISM:
            problems.append(f"skill {name!r}: degreeOfParallelism {parallelism} not in 1..10")
        if skill.get("authResourceId") and (skill.get("httpHeaders") or {}):
            problems.append(f"skill {name!r}: set authResourceId or a key header, not both")
        inputs = {i["name"]: i.get("source", "") for i in skill.get("inputs", [])}
        unknown = sorted(set(inputs) - set(KNOWN_INPUTS))
        if unknown:
            problems.append(f"skill {name!r}: inputs {unknown} are not inputs the skill reads")
        if "text" not in inputs and FILE_DATA not in inputs:
            problems.append(f"skill {name!r}: the 'text' input (or 'file_data') is missing")
        elif "text" in inputs and FILE_DATA in inputs:
            problems.append(f"skill {name!r}: map 'text' or 'file_data', not both")
        problems += _check_literal_inputs(name, inputs)
    return problems


def _check_literal_inputs(name: str, inputs: dict[str, str]) -> list[str]:
    """The skill's literal inputs (`=512`, `='pages'`) read as the skill reads a record's
    (`read_record_inputs`, with the default app settings): one validation, so a value the
    skill would refuse in every record is refused here, at deploy time."""
    literals = {k: literal_value(v) for k, v in inputs.items() if v.startswith("=")}
    if not literals:
        return []
    read = read_record_inputs({**literals, "text": ""}, Settings())
    if isinstance(read, InputErrors):
        return [f"skill {name!r}: chunk settings are invalid: {'; '.join(read.messages)}"]
    return []


def skill_output_paths(skillset: WireJson) -> set[str]:
    """Enrichment paths the skills create: `<context>/<targetName>`."""
    return {path for skill in skillset.get("skills", []) for path in _output_paths(skill)}


def _output_paths(skill: WireJson) -> set[str]:
    context = skill.get("context") or "/document"
    return {f"{context}/{o.get('targetName') or o['name']}" for o in skill.get("outputs", [])}


def source_type(source: str, source_context: str, skillset: WireJson) -> str | None:
    """The type a mapping source yields, or None when nothing produces that path."""
    if source.startswith(source_context + "/"):
        collection = source_context.removesuffix("/*")
        if collection not in skill_output_paths(skillset):
            return None
        member = source[len(source_context) + 1 :]
        if "/" not in member:
            return SKILL_CHUNK_FIELDS.get(member)
        # Only the measures and sections nest: `offset/codePoint`, `sections/h1`.
        outer, _, unit = member.partition("/")
        if outer == "sections":
            depth = _section_depth(skillset, collection)
            known = unit in SECTION_LEVELS and int(unit[1:]) <= depth
            return "Edm.String" if known else None
        known = SKILL_CHUNK_FIELDS.get(outer) == "Edm.ComplexType" and unit in MEASURE_UNITS
        return "Edm.Int32" if known else None
    if source.startswith("/document/") and "*" not in source:
        return DOCUMENT_FIELDS.get(source.removeprefix("/document/"), "Edm.String")
    return None


def _section_depth(skillset: WireJson, collection: str) -> int:
    """The deepest `sections` key of the chunks at `collection`: the literal
    `markdownHeaderDepth` of the skill that makes them, else h6 (the skill's default;
    an app setting may lower it, which the definitions cannot see)."""
    for skill in skillset.get("skills", []):
        if collection not in _output_paths(skill):
            continue
        for entry in skill.get("inputs", []):
            source = str(entry.get("source", ""))
            if entry.get("name") == "markdownHeaderDepth" and source.startswith("="):
                value = str(literal_value(source))
                if value in SECTION_LEVELS:
                    return int(value[1:])
    return len(SECTION_LEVELS)


def check_projection(skillset: WireJson, index: WireJson) -> list[str]:
    """Every projection mapping lands on a real, compatible, non-key index field."""
    projection = skillset.get("indexProjections")
    if not projection:
        return ["skillset has no indexProjections"]
    problems = []
    mode = (projection.get("parameters") or {}).get("projectionMode")
    if mode != "skipIndexingParentDocuments":
        problems.append(
            f"projectionMode is {mode!r}: parents would be indexed as empty chunk documents"
        )
    fields = fields_by_name(index)
    key_names = {name for name, f in fields.items() if f.get("key")}
    for selector in projection.get("selectors", []):
        if selector.get("targetIndexName") != index.get("name"):
            problems.append(
                f"projection targets index {selector.get('targetIndexName')!r}, "
                f"not {index.get('name')!r}"
            )
        parent = selector.get("parentKeyFieldName", "")
        parent_field = fields.get(parent)
        if parent_field is None:
            problems.append(f"parentKeyFieldName {parent!r} is not an index field")
        elif (
            parent_field.get("type") != "Edm.String"
            or not parent_field.get("filterable")
            or parent in key_names
        ):
            problems.append(
                f"parent key field {parent!r} must be a filterable Edm.String, not the key"
            )
        context = selector.get("sourceContext", "")
        if context.removesuffix("/*") not in skill_output_paths(skillset):
            problems.append(f"projection sourceContext {context!r} is not produced by any skill")
        for mapping in selector.get("mappings", []):
            name, source = mapping["name"], mapping.get("source", "")
            target = fields.get(name)
            if target is None:
                problems.append(
                    f"projection maps {source!r} to {name!r}, which is not an index field"
                )
                continue
            if name in key_names:
                problems.append(f"projection maps {source!r} to the key field {name!r}")
            if name == parent:
                problems.append(f"projection maps {source!r} to the parent key field {name!r}")
            produced = source_type(source, context, skillset)
            if produced is None:
                problems.append(f"projection source {source!r} (for {name!r}) is not produced")
            elif target.get("type") not in COMPATIBLE_TYPES.get(produced, frozenset({produced})):
                problems.append(
                    f"projection source {source!r} is {produced}, index field {name!r} is "
                    f"{target.get('type')}"
                )
    return problems


def _check_indexer(indexer: WireJson, reads_file_data: bool = False) -> list[str]:
    configuration = ((indexer.get("parameters") or {}).get("configuration")) or {}
    problems = []
    if reads_file_data:
        # The indexer sends /document/file_data only so, and only in the default mode.
        if configuration.get("allowSkillsetToReadFileData") is not True:
            problems.append(
                "a skill reads 'file_data' but the indexer does not set "
                "allowSkillsetToReadFileData: true"
            )
        if configuration.get("parsingMode", "default") != "default":
            problems.append(
                f"indexer parsingMode is {configuration.get('parsingMode')!r}: file_data "
                "needs the default parsing mode"
            )
    elif configuration.get("parsingMode") != "text":
        problems.append(
            f"indexer parsingMode is {configuration.get('parsingMode')!r}: only 'text' hands "
            "the skill the raw markdown and HTML with their headings"
        )
    if not configuration.get("indexedFileNameExtensions"):
        problems.append("indexer has no indexedFileNameExtensions: every blob would be sent")
    return problems
