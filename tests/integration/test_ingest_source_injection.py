"""The service reads backlogs through the ``BacklogSource`` factory it is given, and routing
rules as text: it opens no git repository and reads no rule file itself."""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from pathlib import Path

import pytest

from domain.errors import InvalidArgument
from ingest.source import BacklogSource, BacklogSourceFactory, SourceError
from runtime import App
from runtime.compose import compose
from service.app import MemoryService
from service.authz import Caller
from tests.conftest import World, make_world
from tests.unit.ingest.test_ingest_plan import FakeSource

RULES = "defaults: {classification: public, tags: [mirrored]}\n"


def _ingesting_from(world: World, open_source: BacklogSourceFactory) -> MemoryService:
    """A service on the world's database whose ingest opens backlogs with ``open_source``."""
    service, _ = compose(world.app.uow, world.app.clock, backlog_sources=open_source)
    return service


@pytest.fixture
def mirror(sqlite_app: App):
    world = make_world(sqlite_app)
    ingestor = Caller(f"service:ingest-{world.repo.split('/')[0]}")
    world.svc.admin.grant(world.admin, ingestor.principal_id, "ingestor", world.repo)
    return world, ingestor


def test_a_run_reads_the_backlog_that_the_injected_factory_opens(mirror) -> None:
    world, ingestor = mirror
    source = FakeSource({"c1": {"backlog/a.md": b"# A\n\nAn in-memory backlog.\n"}})
    opened: list[tuple[str, Path | None]] = []

    def open_source(
        name: str, *, cache_dir: Path | None = None
    ) -> AbstractContextManager[BacklogSource]:
        opened.append((name, cache_dir))
        return nullcontext(source)

    report = _ingesting_from(world, open_source).ingest.ingest_backlog(
        ingestor, "memory:backlog", world.repo, ref="c1", routing=RULES
    )
    assert opened == [("memory:backlog", None)]
    assert report["counts"]["new"] == 1
    assert report["source_repo"] == source.source_repo


def test_a_source_the_factory_cannot_open_is_an_invalid_source(mirror) -> None:
    world, ingestor = mirror

    def refuse(
        name: str, *, cache_dir: Path | None = None
    ) -> AbstractContextManager[BacklogSource]:
        raise SourceError(f"cannot open {name}")

    with pytest.raises(InvalidArgument, match="cannot open nowhere") as caught:
        _ingesting_from(world, refuse).ingest.ingest_backlog(ingestor, "nowhere", world.repo)
    assert caught.value.details["field"] == "source"


def test_routing_rules_are_text_and_a_path_is_not_read(mirror, tmp_path: Path) -> None:
    world, _ = mirror
    rules = tmp_path / "routing.yaml"
    rules.write_text(RULES, "utf-8")
    with pytest.raises(InvalidArgument, match="YAML text") as caught:
        world.svc.ingest.routing_explain(None, rules, "a.md", b"# A\n")  # type: ignore[arg-type]
    assert caught.value.details["field"] == "routing"
    with pytest.raises(InvalidArgument, match=r"invalid routing rules: team\.yaml: not valid YAML"):
        world.svc.ingest.routing_explain(
            None, "rules: [", "a.md", b"# A\n", routing_name="team.yaml"
        )
