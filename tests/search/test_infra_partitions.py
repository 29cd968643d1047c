"""Partitioned indexers: N data sources over blob folders and N indexers into one index."""

from __future__ import annotations

import copy
import json
from typing import TYPE_CHECKING, Any

import pytest

from infra import deploy
from skills.search.checks import check_definitions, check_partitions
from skills.search.definitions import build_definitions, partition_folders, partition_setups
from skills.search.indexer import read_blob_documents, replay, replay_setup
from skills.skill.settings import Settings
from tests.infra.test_infra_deploy import ADMIN_KEY, environment, resource, writes
from tests.infra_helpers import RecordingService
from tests.paths import ROOT

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator
    from pathlib import Path

    from tests.conftest import LiveServers

pytestmark = pytest.mark.integration

Wire = dict[str, Any]
Parts = list[tuple[Wire, Wire, Wire, Wire]]
SAMPLES = ROOT / "samples"


@pytest.fixture
def service() -> Iterator[RecordingService]:
    with RecordingService() as recording:
        yield recording


def _parts(count: int = 3, endpoint: str = "https://func-x.azurewebsites.net/api/chunk") -> Parts:
    setup = replay_setup(
        endpoint, embedding_dimensions=1536, embedding_model="text-embedding-3-small"
    )
    return [
        (
            d.data_source.as_dict(),
            d.index.as_dict(),
            d.skillset.as_dict(),
            d.indexer.as_dict(),
        )
        for d in map(build_definitions, partition_setups(setup, partition_folders(count)))
    ]


def test_apply_with_three_partitions_writes_three_pairs_and_one_index_and_skillset(
    service: RecordingService,
) -> None:
    assert deploy.main(["apply", "--partitions", "3"], environ=environment(service)) == 0
    assert writes(service) == [
        "PUT datasources",
        "PUT datasources",
        "PUT datasources",
        "PUT indexes",
        "PUT skillsets",
        "PUT indexers",
        "PUT indexers",
        "PUT indexers",
    ]
    puts = [c for c in service.calls if c.method == "PUT"]
    sources = [c.body for c in puts if resource(c.path) == "datasources"]
    indexers = [c.body for c in puts if resource(c.path) == "indexers"]
    assert [s["name"] for s in sources] == ["chunks-blob-0", "chunks-blob-1", "chunks-blob-2"]
    assert [s["container"]["query"] for s in sources] == ["part-0", "part-1", "part-2"]
    assert {s["container"]["name"] for s in sources} == {"documents"}
    assert [i["dataSourceName"] for i in indexers] == [s["name"] for s in sources]
    assert {i["targetIndexName"] for i in indexers} == {"chunks"}
    assert {i["skillsetName"] for i in indexers} == {"chunks-skillset"}
    # Schedules and change tracking are every partition's, as for one indexer.
    assert {i["schedule"]["interval"] for i in indexers} == {indexers[0]["schedule"]["interval"]}
    assert indexers[0]["schedule"]["interval"]
    assert all(s["dataDeletionDetectionPolicy"] for s in sources)
    for call in service.calls:
        assert call.headers["api-key"] == ADMIN_KEY


def test_the_environment_names_the_folders_and_status_shows_every_indexer(
    service: RecordingService, capsys: pytest.CaptureFixture[str]
) -> None:
    env = environment(service, SEARCH_PARTITIONS="2", SEARCH_PARTITION_FOLDERS="2024/,2025")
    assert deploy.main(["apply"], environ=env) == 0
    sources = [
        c.body for c in service.calls if c.method == "PUT" and resource(c.path) == "datasources"
    ]
    assert [s["container"]["query"] for s in sources] == ["2024", "2025"]
    service.calls.clear()
    code = deploy.main(["status"], environ=env)
    out = capsys.readouterr().out
    # The recording service keeps definitions, not run history: both are asked for.
    assert code == 1
    assert out.count("not found") == 2
    looked_up = [c.path for c in service.calls if c.method == "GET"]
    assert any("chunks-indexer-0" in path for path in looked_up)
    assert any("chunks-indexer-1" in path for path in looked_up)


def test_one_partition_keeps_the_unpartitioned_names(service: RecordingService) -> None:
    assert deploy.main(["apply", "--partitions", "1"], environ=environment(service)) == 0
    names = [c.body["name"] for c in service.calls if c.method == "PUT"]
    assert names == ["chunks-blob", "chunks", "chunks-skillset", "chunks-indexer"]
    source = next(c.body for c in service.calls if resource(c.path) == "datasources")
    assert source["container"].get("query") is None


def test_show_writes_one_loadable_folder_per_partition(tmp_path: Path) -> None:
    assert deploy.main(["show", "--partitions", "3", "--out", str(tmp_path)], environ={}) == 0
    for number in range(3):
        folder = tmp_path / f"partition-{number}"
        data_source = json.loads((folder / "data-source.json").read_text())
        assert data_source["container"]["query"] == f"part-{number}"
        assert (folder / "skillset.json").exists()


@pytest.mark.parametrize(
    ("count", "folders"),
    [(0, None), (201, None), (2, "a"), (2, "a,a"), (2, "docs,docs/2024"), (2, "a,")],
)
def test_bad_partition_settings_are_refused(count: int, folders: str | None) -> None:
    with pytest.raises(ValueError, match="partition"):
        partition_folders(count, folders)


def test_the_cross_checks_accept_the_partitions() -> None:
    parts = _parts()
    for part in parts:
        assert check_definitions(*part, embedding_dimensions=1536) == []
    assert check_partitions(parts) == []


def _rename_source(parts: Parts) -> None:
    parts[1][0]["name"] = parts[0][0]["name"]
    parts[1][3]["dataSourceName"] = parts[0][0]["name"]


def _rename_indexer(parts: Parts) -> None:
    parts[2][3]["name"] = parts[0][3]["name"]


def _other_index(parts: Parts) -> None:
    parts[1][3]["targetIndexName"] = "elsewhere"


def _other_skillset(parts: Parts) -> None:
    parts[1][3]["skillsetName"] = "elsewhere-skillset"


def _shared_source(parts: Parts) -> None:
    parts[2][3]["dataSourceName"] = parts[0][3]["dataSourceName"]


def _no_folder(parts: Parts) -> None:
    parts[1][0]["container"]["query"] = None


def _nested_folder(parts: Parts) -> None:
    parts[1][0]["container"]["query"] = parts[0][0]["container"]["query"] + "/deeper"


@pytest.mark.parametrize(
    ("mistake", "complaint"),
    [
        (_rename_source, "share the data source name"),
        (_rename_indexer, "share the indexer name"),
        (_other_index, "differ in targetIndexName"),
        (_other_skillset, "differ in skillsetName"),
        (_shared_source, "read the same data source"),
        (_no_folder, "reads the whole container"),
        (_nested_folder, "overlap"),
    ],
)
def test_each_kind_of_partition_mistake_fails_the_checks(
    mistake: Callable[[Parts], None], complaint: str
) -> None:
    parts = copy.deepcopy(_parts())
    mistake(parts)
    problems = check_partitions(parts)
    assert any(complaint in problem for problem in problems), problems


def test_the_replay_runs_against_every_partitions_skillset_with_unique_keys(
    live_servers: LiveServers, tmp_path: Path
) -> None:
    skill = live_servers.start(Settings(chunk_workers=0))
    # The same files in every partition's folder: the blob paths differ by the folder.
    for folder in partition_folders(3):
        (tmp_path / folder).mkdir()
        for sample in sorted(SAMPLES.glob("*.md")) + sorted(SAMPLES.glob("*.html")):
            (tmp_path / folder / sample.name).write_bytes(sample.read_bytes())
    keys: list[str] = []
    parents: set[str] = set()
    for number, part in enumerate(_parts(3, f"{skill}/api/chunk")):
        data_source, index, skillset, indexer = part
        folder = data_source["container"]["query"]
        documents = [
            doc
            for doc in read_blob_documents([tmp_path])
            if f"/{folder}/" in str(doc.fields["metadata_storage_path"])
        ]
        report = replay(
            documents,
            data_source,
            index,
            skillset,
            indexer,
            embedding_dimensions=1536,
            retry_delay=0.001,
        )
        assert report.problems == [], (number, report.problems)
        assert report.failed == {}
        keys += [doc["chunk_id"] for doc in report.documents]
        parents |= {doc["parent_id"] for doc in report.documents}
    assert len(keys) == len(set(keys)) > 0
    assert len(parents) == 3 * (len(list(SAMPLES.glob("*.md"))) + len(list(SAMPLES.glob("*.html"))))
