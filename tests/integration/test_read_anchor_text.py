"""Anchor text (issue 32): the words other pages use to link to a page find that page, and only
anchors the caller may read, selected at the read's instant, count — on both index engines
(this file is in ``ENGINE_SENSITIVE``).

Every scenario ingests a real git repository: the links become ``REFERENCE`` relationships,
and their anchor text comes from the linking version the read selected.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from ingest.plan import element_id_for
from service.authz import Caller
from tests.conftest import World
from tests.integration.ingest.conftest import GitRepo
from tests.read_world import request

ROUTING = """
version: 1
defaults: {classification: internal, policy: store}
rules:
  - name: restricted-notes
    match: {any: [{field: path, glob: "backlog/secret/**"}]}
    actions: {classification: confidential}
"""
ARGO = "# Argo CD\n\nSync waves, app-of-apps layout and the health checks of each application.\n"
FILLER = {
    "backlog/kafka.md": "# Kafka\n\nTopics, partitions and consumer groups of the event bus.\n",
    "backlog/vault.md": "# Vault\n\nSecrets engines, leases and the unseal ceremony.\n",
    "backlog/grafana.md": "# Grafana\n\nDashboards and alert rules for every service.\n",
}


class Linked:
    """A world, a backlog repository and an ingestor that may write up to confidential."""

    def __init__(self, world: World, root: Path) -> None:
        self.w, self.git = world, GitRepo(root)
        # the anchor field's own weight, whatever the default (docs/eval.md has the measured one)
        world.app.reads.configure_ranking({"anchor": 0.3, "replacement": 1})
        self.ingestor = Caller("service:ingest-anchors")
        ingestor, repo = self.ingestor.principal_id, world.repo
        world.svc.admin.grant(world.admin, ingestor, "ingestor", repo, clearance="confidential")
        # a second reader cleared for confidential content
        self.cleared = Caller("user:cleared-reader")
        world.svc.admin.grant(
            world.admin, self.cleared.principal_id, "reader", world.repo, clearance="confidential"
        )

    def commit(self, files: dict[str, str | None]) -> None:
        for path, content in files.items():
            if content is None:
                (self.git.root / path).unlink()
            else:
                self.git.write(path, content)
        self.git.commit("change")
        self.w.svc.ingest.ingest_backlog(
            self.ingestor, str(self.git.root), self.w.repo, routing=ROUTING
        )

    def eid(self, path: str) -> str:
        return element_id_for(self.w.repo, str(self.git.root.resolve()), path)

    def read(self, query: str, caller: Caller | None = None, **fields: Any) -> dict[str, Any]:
        return self.w.svc.reading.read_context(
            caller or self.w.reader, request(self.w.repo, query, explain=True, **fields)
        )

    def anchored(self, out: dict[str, Any], path: str) -> float | None:
        """The anchor score of ``path``'s candidate in a read, ``None`` when not a candidate."""
        for candidate in out["trace"]["candidates"]:
            element = _element_of(out, candidate["version_id"])
            if element == self.eid(path):
                return float(candidate["anchor_score"])
        return None


def _element_of(out: dict[str, Any], version_id: str) -> str | None:
    return next((i["element_id"] for i in out["items"] if i["version_id"] == version_id), None)


@pytest.fixture
def linked(world: World, tmp_path: Path) -> Linked:
    return Linked(world, tmp_path / "backlog")


def test_the_words_of_a_link_find_the_page_it_points_at(linked: Linked) -> None:
    linked.commit(
        {
            **FILLER,
            "backlog/argo.md": ARGO,
            "backlog/guide.md": "# Release guide\n\n"
            "Releases go out through [our continuous delivery tool](argo.md), nightly.\n",
        }
    )
    out = linked.read("which continuous delivery tool do we run")
    items = [i["element_id"] for i in out["items"]]
    assert linked.eid("backlog/argo.md") in items  # none of the question's words is in its text
    assert (linked.anchored(out, "backlog/argo.md") or 0) > 0
    assert "continuous" not in ARGO.lower()


def test_an_anchor_from_a_page_the_caller_cannot_read_counts_for_nothing(linked: Linked) -> None:
    linked.commit({**FILLER, "backlog/argo.md": ARGO})
    before = linked.read("blue-green rollout engine")
    assert linked.eid("backlog/argo.md") not in [i["element_id"] for i in before["items"]]
    seen = _scores(linked.read("sync waves rollout"))

    linked.commit(
        {
            "backlog/secret/plan.md": "# Plan\n\n"
            "Cut-over runs on the [blue-green rollout engine](../argo.md) we chose.\n"
            "The [sync waves rollout](../argo.md) keeps order.\n"
        }
    )
    # the restricted page is confidential: the internal reader gets nothing from its anchors ...
    trimmed = linked.read("blue-green rollout engine")
    assert linked.eid("backlog/argo.md") not in [i["element_id"] for i in trimmed["items"]]
    assert not any(c["anchor_score"] for c in trimmed["trace"]["candidates"])
    # ... nor do its anchors move any score the reader sees (statistics come from readable
    # anchors only)
    assert _scores(linked.read("sync waves rollout")) == seen
    # a reader cleared for it finds the page by those words
    cleared = linked.read("blue-green rollout engine", linked.cleared)
    assert linked.eid("backlog/argo.md") in [i["element_id"] for i in cleared["items"]]
    assert (linked.anchored(cleared, "backlog/argo.md") or 0) > 0


def test_anchors_follow_the_linking_page_through_edits_retirement_and_time(
    linked: Linked,
) -> None:
    guide = "# Guide\n\nWe ship with [our {words}](argo.md) every night.\n"
    linked.commit(
        {**FILLER, "backlog/argo.md": ARGO, "backlog/guide.md": guide.format(words="shipyard")}
    )
    first = linked.w.app.clock.now()
    linked.commit({"backlog/guide.md": guide.format(words="conductor")})
    argo = linked.eid("backlog/argo.md")

    def finds(query: str, **fields: Any) -> bool:
        out = linked.read(query, **fields)
        return argo in [i["element_id"] for i in out["items"]]

    assert finds("conductor")
    assert not finds("shipyard")  # the link's old words left with the old version
    assert finds("shipyard", as_of=first.isoformat())  # ... and are there in the past
    assert not finds("conductor", as_of=first.isoformat())

    linked.commit({"backlog/guide.md": None})  # the linking page is retired
    assert not finds("conductor")


def _scores(out: dict[str, Any]) -> list[tuple[str, float, str]]:
    return [(i["element_id"], i["score"], repr(i["score_breakdown"])) for i in out["items"]]


def test_a_replaced_page_brings_the_head_of_its_chain(linked: Linked) -> None:
    linked.commit(
        {
            **FILLER,
            "backlog/adr-1.md": "# ADR 1: queues\n\n## Status\n\n"
            "Superseded by [ADR 2](adr-2.md)\n\nWe use a zebrafish broker for every queue.\n",
            "backlog/adr-2.md": "# ADR 2: queues\n\n## Status\n\n"
            "Superseded by [ADR 3](adr-3.md)\n\nMessages move to the event bus.\n",
            "backlog/adr-3.md": "# ADR 3: queues\n\nAccepted. Streams replace the bus.\n",
        }
    )
    out = linked.read("zebrafish broker")
    items = {i["element_id"]: i for i in out["items"]}
    head = items[linked.eid("backlog/adr-3.md")]  # no word of the question in it
    assert head["why_included"] == "relationship_path"
    assert len(head["relationship_path"]) == 2  # ADR 1 → ADR 2 → ADR 3, in one step
    linked.w.app.reads.configure_ranking({"anchor": 0.3, "replacement": 0})
    assert linked.eid("backlog/adr-3.md") not in {
        i["element_id"] for i in linked.read("zebrafish broker")["items"]
    }
