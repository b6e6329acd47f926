"""Routing cannot declassify evidence (issue #16, item 2), on real git repositories.

An ingest run whose routing default classified ``plan.md`` restricted, re-run with the default
lowered to public, used to make the element public *and* let a public reader read the restricted
version with ``element show EL --version V1``. Now every version keeps the level it was written
at, the change needs a caller cleared for both levels, it is audited, and ingest never writes a
classification above the ingestor's clearance.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from domain.errors import NotFound
from ingest.plan import element_id_for
from runtime import App
from service.authz import Caller
from tests.conftest import World, make_world
from tests.integration.ingest.conftest import GitRepo
from tests.read_world import request

SECRET_PLAN = "# Plan\n\nThe acquisition closes in March; codename falcon.\n"


def routing(tmp: Path, level: str) -> Path:
    path = tmp / f"routing-{level}.yaml"
    path.write_text(f"defaults: {{classification: {level}, policy: store}}\n", "utf-8")
    return path


@pytest.fixture
def setup(sqlite_app: App, tmp_path: Path) -> tuple[World, GitRepo, Caller, Caller]:
    w = make_world(sqlite_app)
    ingestor = Caller(f"service:ingest-{w.repo.split('/')[0]}", purpose="mirror")
    w.svc.grant(w.admin, ingestor.principal_id, "ingestor", w.repo, clearance="restricted")
    public = Caller(f"user:public-{w.repo.split('/')[0]}")
    w.svc.grant(w.admin, public.principal_id, "reader", w.repo, clearance="public")
    git = GitRepo(tmp_path / "backlog")
    git.write("plan.md", SECRET_PLAN)
    git.commit("plan")
    return w, git, ingestor, public


def run(w: World, git: GitRepo, who: Caller, routing_file: Path, **kw: Any) -> dict[str, Any]:
    rules = routing_file.read_text("utf-8")  # the service takes the rule file's text
    return w.svc.ingest_backlog(who, str(git.root), w.repo, routing=rules, **kw)


def test_lowering_by_routing_never_exposes_earlier_versions(setup, tmp_path: Path) -> None:
    w, git, ingestor, public = setup
    run(w, git, ingestor, routing(tmp_path, "restricted"))
    el = element_id_for(w.repo, str(git.root.resolve()), "plan.md")
    v1 = w.svc.element_history(w.admin, el)["versions"][0]["version_id"]
    with pytest.raises(NotFound):
        w.svc.get_element(public, el)

    report = run(w, git, ingestor, routing(tmp_path, "public"), full_scan=True)
    assert report["counts"]["skipped"] == 0
    # the element is public now, with a new version at that level ...
    shown = w.svc.get_element(public, el)
    assert shown["element"]["classification"] == "public"
    assert shown["version"]["version_id"] != v1
    # ... but what was written while restricted stays restricted, on every path
    with pytest.raises(NotFound):
        w.svc.get_element(public, el, version_id=v1)
    with pytest.raises(NotFound):
        w.svc.get_version(public, v1)
    listed = [v["version_id"] for v in w.svc.element_history(public, el)["versions"]]
    assert v1 not in listed
    assert v1 in [v["version_id"] for v in w.svc.element_history(w.admin, el)["versions"]]
    read = w.svc.read_context(
        public,
        request(
            w.repo, "acquisition falcon", selector={"kind": "version_ref", "version_ids": [v1]}
        ),
    )
    assert v1 not in [i["version_id"] for i in read["items"]]
    # and the change is audited with both levels
    events = [
        e for e in w.svc.history(w.admin, w.repo) if e["event_type"] == "element.reclassified"
    ]
    assert events[-1]["payload"]["from"] == "restricted"
    assert events[-1]["payload"]["to"] == "public"
    assert events[-1]["payload"]["versions_kept_at_from"] == 1


def test_raising_a_classification_raises_every_version(setup, tmp_path: Path) -> None:
    w, git, ingestor, public = setup
    run(w, git, ingestor, routing(tmp_path, "public"))
    el = element_id_for(w.repo, str(git.root.resolve()), "plan.md")
    v1 = w.svc.get_element(public, el)["version"]["version_id"]
    run(w, git, ingestor, routing(tmp_path, "restricted"), full_scan=True)
    for read in (
        lambda: w.svc.get_element(public, el),
        lambda: w.svc.get_element(public, el, version_id=v1),
        lambda: w.svc.get_version(public, v1),
    ):
        with pytest.raises(NotFound):
            read()


def test_ingest_never_writes_above_the_ingestors_clearance(setup, tmp_path: Path) -> None:
    w, git, _, _ = setup
    low = Caller(f"service:low-{w.repo.split('/')[0]}")
    w.svc.grant(w.admin, low.principal_id, "ingestor", w.repo, clearance="internal")
    report = run(w, git, low, routing(tmp_path, "restricted"))
    assert [s["code"] for s in report["skipped"]] == ["above_clearance"]
    assert "restricted" in report["skipped"][0]["reason"]
    el = element_id_for(w.repo, str(git.root.resolve()), "plan.md")
    with pytest.raises(NotFound):
        w.svc.get_element(w.admin, el)


def test_only_a_caller_cleared_for_both_levels_may_lower(setup, tmp_path: Path) -> None:
    w, git, ingestor, public = setup
    run(w, git, ingestor, routing(tmp_path, "restricted"))
    el = element_id_for(w.repo, str(git.root.resolve()), "plan.md")
    low = Caller(f"service:low-{w.repo.split('/')[0]}")
    w.svc.grant(w.admin, low.principal_id, "ingestor", w.repo, clearance="internal")
    report = run(w, git, low, routing(tmp_path, "public"), full_scan=True)
    assert [s["code"] for s in report["skipped"]] == ["above_clearance"]
    assert w.svc.get_element(w.admin, el)["element"]["classification"] == "restricted"
    with pytest.raises(NotFound):
        w.svc.get_element(public, el)
