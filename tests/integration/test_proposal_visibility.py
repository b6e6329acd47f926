"""One visibility rule for proposals on every path (issue 12, item 7; docs/product.md §3): curators,
publishers, admins and auditors read every proposal; an agent reads its own; a reader or another
agent learns nothing of one — not through the queue, the proposal view, the proposal's element,
its versions, the relationships and neighbourhood of the page it targets, the history, a read,
or the proposal queue size ``/metrics`` counts. Each path is asked for each role; any
disagreement with the rule fails."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from domain.errors import NotFound, PermissionDenied
from service.authz import Caller
from tests.conftest import World
from tests.read_world import request

MARKER = "quokkaproposalmarker"
SEES = {"proposer": True, "curator": True, "publisher": True, "auditor": True, "admin": True,
        "reader": False, "other_agent": False}  # fmt: skip


class Scene:
    def __init__(self, w: World) -> None:
        self.w = w
        self.other_agent = Caller(w.agent.principal_id.replace("agent:", "agent:other-"))
        w.svc.admin.grant(w.admin, self.other_agent.principal_id, "agent", w.repo)
        self.target, v1 = w.canonical("Runbook", "# Runbook\n\nStep one.\n")
        body = f"# Runbook\n\nStep one. {MARKER}\n"
        p = w.svc.curation.propose(
            w.agent, w.repo, body=body, summary="marker", element_id=self.target,
            target_version_id=v1,
        )  # fmt: skip
        self.proposal_id = p["proposal_id"]
        self.element_id = p["proposal_element_id"]
        self.version_id = p["proposal_version_id"]

    def caller(self, role: str) -> Caller:
        return {"proposer": self.w.agent, "other_agent": self.other_agent, "admin": self.w.admin,
                }.get(role) or getattr(self.w, role)  # fmt: skip


def _found(call: Callable[[], Any]) -> bool:
    try:
        call()
    except (NotFound, PermissionDenied):
        return False
    return True


def _in_queue(queue: list[dict[str, Any]], proposal_id: str) -> None:
    if proposal_id not in {p["proposal_id"] for p in queue}:
        raise NotFound("not in the queue")


PATHS: dict[str, Callable[[Scene, Caller], bool]] = {
    "proposal show": lambda s, c: _found(lambda: s.w.svc.curation.proposal_show(c, s.proposal_id)),
    "proposal queue": lambda s, c: _found(
        lambda: _in_queue(s.w.svc.curation.proposal_list(c, s.w.repo), s.proposal_id)
    ),
    "element show": lambda s, c: _found(lambda: s.w.svc.elements.get_element(c, s.element_id)),
    "element history": lambda s, c: _found(
        lambda: s.w.svc.elements.element_history(c, s.element_id)
    ),
    "version show": lambda s, c: _found(lambda: s.w.svc.reading.get_version(c, s.version_id)),
    "relationships of the target": lambda s, c: any(
        s.element_id in (r["source_element_id"], r["target_element_id"])
        for r in s.w.svc.elements.list_relationships(c, s.target)
    ),
    "neighbourhood of the target": lambda s, c: any(
        n["element_id"] == s.element_id for n in s.w.svc.reading.expand(c, s.target)["nodes"]
    ),
    "history": lambda s, c: any(
        e["proposal_id"] == s.proposal_id or e["element_id"] == s.element_id
        for e in s.w.svc.history.history(c, s.w.repo)
    ),
    "read_context": lambda s, c: (
        MARKER in str(s.w.svc.reading.read_context(c, request(s.w.repo, MARKER, selector="head")))
    ),
    "metrics queue count": lambda s, c: (
        s.w.svc.index.open_proposal_counts(c).root.get(s.w.repo, 0) == 1
    ),
}


@pytest.fixture
def scene(world: World) -> Scene:
    return Scene(world)


@pytest.mark.parametrize("role", list(SEES))
def test_every_path_agrees_with_the_proposal_visibility_rule(scene: Scene, role: str) -> None:
    caller = scene.caller(role)
    answers = {name: path(scene, caller) for name, path in PATHS.items()}
    expected = SEES[role]
    # a proposal is never part of a read_context: low-trust drafts are not context for anyone
    expected_by_path = {n: (False if n == "read_context" else expected) for n in PATHS}
    assert answers == expected_by_path


def test_the_metrics_queue_count_leaves_out_proposals_above_clearance(world: World) -> None:
    """A curator cleared for ``internal`` does not count a proposal on a restricted page; one
    cleared for ``restricted`` does (the count is of what each may read, like every read)."""
    svc = world.svc
    svc.admin.grant(world.admin, world.agent.principal_id, "agent", world.repo, "restricted")
    top = Caller(world.curator.principal_id.replace("user:", "user:top-"))
    svc.admin.grant(world.admin, top.principal_id, "curator", world.repo, "restricted")
    for level in ("internal", "restricted"):
        out = svc.elements.create_element(
            top, world.repo, title=f"Doc {level}", body=f"# Doc {level}\n\nText.\n",
            classification=level,
        )  # fmt: skip
        el, v1 = out["element"]["element_id"], out["version"]["version_id"]
        svc.curation.propose(
            world.agent, world.repo, body=f"# Doc {level}\n\nMore text.\n", summary="edit",
            element_id=el, target_version_id=v1,
        )  # fmt: skip
    assert svc.index.open_proposal_counts(world.curator).root == {world.repo: 1}
    assert svc.index.open_proposal_counts(top).root == {world.repo: 2}
    assert svc.index.open_proposal_counts(world.agent).root == {
        world.repo: 2
    }  # its own, cleared for both
    assert svc.index.open_proposal_counts(world.reader).root == {}
