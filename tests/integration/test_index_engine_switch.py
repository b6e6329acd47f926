"""A home kept by one keyword index engine, opened with the other (issue 31 §2: tantivy became
the default, so every Whoosh home switches): the process says so at start, a server builds the
new engine's index from the database in the background, and reads meanwhile wait for it or are
refused with ``IndexBuilding`` (503 / UNAVAILABLE) — never answered from the other engine's
files nor from a partial index."""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any

import pytest

from domain.errors import IndexBuilding
from projection.tantivy import TantivyKeywordIndex
from projection.whoosh import WhooshKeywordIndex
from runtime import build_app
from service.indexing.upkeep import IndexMaintainer
from service.settings import Settings
from tests.conftest import make_world
from tests.read_world import request


def test_a_home_of_the_other_engine_is_rebuilt_in_the_background_never_read_partially(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    whoosh = Settings(home=home, index_engine="whoosh")
    world = make_world(build_app(whoosh, migrate=True))
    world.canonical("Testing SOP", "# Testing SOP\n\n## Phases\n\nRun phase tests 1 and 2.\n")
    ask = request(world.repo, "phase tests", selector="head")
    before = world.svc.reading.read_context(world.agent, ask)["items"]
    assert [item["title"] for item in before] == ["Testing SOP"]
    world.app.close()

    # the background build is held back until the reads below have met the index unbuilt
    entered, release = threading.Event(), threading.Event()
    build = IndexMaintainer._rebuild_covering

    def held_back(self: IndexMaintainer[Any]) -> int:
        entered.set()
        release.wait(120)
        return build(self)

    monkeypatch.setattr(IndexMaintainer, "_rebuild_covering", held_back)
    tantivy = Settings(home=home, index_engine="tantivy")
    with caplog.at_level(logging.WARNING, logger="ameide.index"):
        world.app = build_app(tantivy)  # a server's: its upkeep starts the build at once
    try:
        assert "keyword index is of the whoosh engine; this process uses tantivy" in caplog.text
        assert entered.wait(60), "the server did not start building in the background"
        with pytest.raises(IndexBuilding) as refused:
            world.svc.reading.read_context(world.agent, ask)  # waits 5 s, then refuses
        assert refused.value.code == "UNAVAILABLE"
        status = world.svc.index.index_status(world.admin, catch_up=False)
        assert (status["engine"], status["consistent"]) == ("tantivy", False)

        release.set()
        assert world.app.status_upkeep is not None
        assert world.app.status_upkeep.wait_idle(120), "the background build did not finish"
        after = world.svc.reading.read_context(world.agent, ask)["items"]
        assert [item["title"] for item in after] == ["Testing SOP"]
        status = world.svc.index.index_status(world.admin, catch_up=False)
        assert (status["engine"], status["consistent"]) == ("tantivy", True)
    finally:
        release.set()
        world.app.close()


def test_state_json_names_its_engine_and_an_engine_sets_aside_another_engines_files(
    tmp_path: Path,
) -> None:
    directory = tmp_path / "index"
    whoosh = WhooshKeywordIndex(directory)
    whoosh.close()
    assert json.loads((directory / "state.json").read_text())["engine"] == "whoosh"
    misplaced = TantivyKeywordIndex(directory)  # e.g. a registry entry pointing at its directory
    try:
        assert misplaced.needs_rebuild() is True
        misplaced.rebuild((), position=0)
        assert misplaced.needs_rebuild() is False
        assert json.loads((directory / "state.json").read_text())["engine"] == "tantivy"
    finally:
        misplaced.close()
