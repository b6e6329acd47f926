"""Routing cannot declassify evidence (issue #16, item 2), on real git repositories.

An ingest run whose routing default classified ``plan.md`` restricted, re-run with the default
lowered to public, used to make the element public *and* let a public reader read the restricted
version with ``element show EL --version V1``. Now every version keeps the level it was written
at, the change needs a caller cleared for both levels, it is audited, and ingest never writes a
classification above the ingestor's clearance.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from domain.errors import NotFound
from edge.results import as_json
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
    w.svc.admin.grant(w.admin, ingestor.principal_id, "ingestor", w.repo, clearance="restricted")
    public = Caller(f"user:public-{w.repo.split('/')[0]}")
    w.svc.admin.grant(w.admin, public.principal_id, "reader", w.repo, clearance="public")
    git = GitRepo(tmp_path / "backlog")
    git.write("plan.md", SECRET_PLAN)
    git.commit("plan")
    return w, git, ingestor, public


def run(w: World, git: GitRepo, who: Caller, routing_file: Path, **kw: Any) -> dict[str, Any]:
    rules = routing_file.read_text("utf-8")  # the service takes the rule file's text
    return w.svc.ingest.ingest_backlog(who, str(git.root), w.repo, routing=rules, **kw)


def test_lowering_by_routing_never_exposes_earlier_versions(setup, tmp_path: Path) -> None:
    w, git, ingestor, public = setup
    run(w, git, ingestor, routing(tmp_path, "restricted"))
    el = element_id_for(w.repo, str(git.root.resolve()), "plan.md")
    v1 = w.svc.elements.element_history(w.admin, el)["versions"][0]["version_id"]
    with pytest.raises(NotFound):
        w.svc.elements.get_element(public, el)

    report = run(w, git, ingestor, routing(tmp_path, "public"), full_scan=True)
    assert report["counts"]["skipped"] == 0
    # the element is public now, with a new version at that level ...
    shown = w.svc.elements.get_element(public, el)
    assert shown["element"]["classification"] == "public"
    assert shown["version"]["version_id"] != v1
    # ... but what was written while restricted stays restricted, on every path
    with pytest.raises(NotFound):
        w.svc.elements.get_element(public, el, version_id=v1)
    with pytest.raises(NotFound):
        w.svc.reading.get_version(public, v1)
    listed = [v["version_id"] for v in w.svc.elements.element_history(public, el)["versions"]]
    assert v1 not in listed
    assert v1 in [v["version_id"] for v in w.svc.elements.element_history(w.admin, el)["versions"]]
    read = w.svc.reading.read_context(
        public,
        request(
            w.repo, "acquisition falcon", selector={"kind": "version_ref", "version_ids": [v1]}
        ),
    )
    assert v1 not in [i["version_id"] for i in read["items"]]
    # and the change is audited with both levels
    events = [
        e
        for e in w.svc.history.history(w.admin, w.repo)
        if e["event_type"] == "element.reclassified"
    ]
    assert events[-1]["payload"]["from"] == "restricted"
    assert events[-1]["payload"]["to"] == "public"
    assert events[-1]["payload"]["versions_kept_at_from"] == 1


def test_raising_a_classification_raises_every_version(setup, tmp_path: Path) -> None:
    w, git, ingestor, public = setup
    run(w, git, ingestor, routing(tmp_path, "public"))
    el = element_id_for(w.repo, str(git.root.resolve()), "plan.md")
    v1 = w.svc.elements.get_element(public, el)["version"]["version_id"]
    run(w, git, ingestor, routing(tmp_path, "restricted"), full_scan=True)
    for read in (
        lambda: w.svc.elements.get_element(public, el),
        lambda: w.svc.elements.get_element(public, el, version_id=v1),
        lambda: w.svc.reading.get_version(public, v1),
    ):
        with pytest.raises(NotFound):
            read()


def test_ingest_never_writes_above_the_ingestors_clearance(setup, tmp_path: Path) -> None:
    w, git, _, _ = setup
    low = Caller(f"service:low-{w.repo.split('/')[0]}")
    w.svc.admin.grant(w.admin, low.principal_id, "ingestor", w.repo, clearance="internal")
    report = run(w, git, low, routing(tmp_path, "restricted"))
    assert [s["code"] for s in report["skipped"]] == ["above_clearance"]
    assert "restricted" in report["skipped"][0]["reason"]
    el = element_id_for(w.repo, str(git.root.resolve()), "plan.md")
    with pytest.raises(NotFound):
        w.svc.elements.get_element(w.admin, el)


def test_only_a_caller_cleared_for_both_levels_may_lower(setup, tmp_path: Path) -> None:
    w, git, ingestor, public = setup
    run(w, git, ingestor, routing(tmp_path, "restricted"))
    el = element_id_for(w.repo, str(git.root.resolve()), "plan.md")
    low = Caller(f"service:low-{w.repo.split('/')[0]}")
    w.svc.admin.grant(w.admin, low.principal_id, "ingestor", w.repo, clearance="internal")
    report = run(w, git, low, routing(tmp_path, "public"), full_scan=True)
    assert [s["code"] for s in report["skipped"]] == ["above_clearance"]
    assert w.svc.elements.get_element(w.admin, el)["element"]["classification"] == "restricted"
    with pytest.raises(NotFound):
        w.svc.elements.get_element(public, el)


def test_history_names_no_restricted_version_to_a_lower_clearance_reader(
    setup, tmp_path: Path
) -> None:
    """Issue 28 item 9: after a lowering, the restricted v1's id, hash and level stay out of
    the repository history (and the element's) of a public reader, and an auditor cleared
    below it sees its events redacted."""
    w, git, ingestor, public = setup
    run(w, git, ingestor, routing(tmp_path, "restricted"))
    el = element_id_for(w.repo, str(git.root.resolve()), "plan.md")
    v1 = w.svc.elements.get_element(w.admin, el)["version"]
    git.write("plan.md", SECRET_PLAN.replace("March", "April"))  # v2 has a hash of its own
    git.commit("plan moves")
    run(w, git, ingestor, routing(tmp_path, "public"), full_scan=True)
    assert (
        w.svc.elements.get_element(public, el)["version"]["content_sha256"] != v1["content_sha256"]
    )
    auditor = Caller(f"user:public-auditor-{w.repo.split('/')[0]}")
    w.svc.admin.grant(w.admin, auditor.principal_id, "auditor", w.repo, clearance="public")
    for who in (public, auditor, w.reader, w.auditor):  # public and internal clearances
        for events in (
            w.svc.history.history(who, w.repo),
            w.svc.history.history(who, w.repo, element_id=el),
        ):
            text = json.dumps(as_json(events))
            assert v1["version_id"] not in text
            assert v1["content_sha256"] not in text
            assert all(e["payload"].get("classification") != "restricted" for e in events)
            assert any(e["element_id"] == el for e in events)  # the public version's events
        head = w.svc.elements.get_element(who, el)["version"]
        for read in (
            w.svc.elements.element_history(who, el),  # v2 names no parent it may not read
            head,
            w.svc.reading.get_version(who, head["version_id"]),
        ):
            assert v1["version_id"] not in json.dumps(as_json(read))
    redacted = [
        e for e in w.svc.history.history(auditor, w.repo) if e["payload"] == {"redacted": True}
    ]
    assert redacted, "an auditor sees that the trail has no gap"
    shown = json.dumps(as_json(w.svc.history.history(w.admin, w.repo, element_id=el)))
    assert v1["version_id"] in shown
    assert v1["content_sha256"] in shown


def test_as_of_reads_name_no_restricted_version_to_a_lower_clearance_reader(
    setup, tmp_path: Path
) -> None:
    """At an instant when the lowered element's head was its restricted v1, a public reader's
    ``as_of`` reads (the element, a neighbourhood through it) answer as if there were no
    version then: neither v1's id nor its title."""
    w, git, ingestor, public = setup
    run(w, git, ingestor, routing(tmp_path, "restricted"))
    el = element_id_for(w.repo, str(git.root.resolve()), "plan.md")
    v1 = w.svc.elements.get_element(w.admin, el)["version"]
    w.svc.admin.grant(w.admin, w.curator.principal_id, "curator", w.repo, clearance="restricted")
    hub, _ = w.canonical(title="Hub", body="# Hub\n\nlinks\n", classification="public")
    w.svc.elements.add_relationship(w.curator, hub, el, kind="REFERENCE", type_key="ameide:cites")
    then = w.app.clock.now()
    git.write("plan.md", SECRET_PLAN.replace("March", "April"))
    git.commit("plan moves")
    run(w, git, ingestor, routing(tmp_path, "public"), full_scan=True)
    with pytest.raises(NotFound) as caught:
        w.svc.elements.get_element(public, el, as_of=then)
    assert v1["version_id"] not in json.dumps(as_json(caught.value.to_dict()))
    hood = json.dumps(as_json(w.svc.reading.expand(public, hub, as_of=then)))
    assert v1["version_id"] not in hood
    assert "Plan" not in hood.replace(hub, "")  # the restricted v1's title
    # an admin reads both
    assert (
        w.svc.elements.get_element(w.admin, el, as_of=then)["version"]["version_id"]
        == v1["version_id"]
    )
    assert v1["version_id"] in json.dumps(as_json(w.svc.reading.expand(w.admin, hub, as_of=then)))
