"""Permission trimming, property-tested: whatever the grants, clearances, selector, instant,
scope and expansion, nothing a principal may not read is returned, cited, excerpted, shown in
the context block, walked through or named in the trace; permitted matches fill max_items; and
a forbidden element answers exactly like a missing one."""

from __future__ import annotations

import itertools
import json
import secrets
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.errors import AmeideError
from runtime import App, build_app
from service.authz import Caller
from service.settings import Settings
from tests.conftest import ADMIN
from tests.read_world import add_evidence, request, scope

LEVELS = ("public", "internal", "confidential", "restricted")
CURATOR = Caller("user:trim-curator", purpose="setup")
PUBLISHER = Caller("user:trim-publisher", purpose="setup")


@dataclass
class Doc:
    """A document of the corpus and the unique word only its body holds."""

    repo: str
    element_id: str
    classification: str
    secret: str


@dataclass
class Corpus:
    app: App
    org: str
    repos: list[str]
    docs: list[Doc] = field(default_factory=list)
    t_mid: datetime | None = None

    def readable(self, grants: dict[str, str]) -> set[str]:
        """Element ids a principal with ``grants`` (repo → clearance) may read."""
        return {
            d.element_id
            for d in self.docs
            if d.repo in grants and LEVELS.index(d.classification) <= LEVELS.index(grants[d.repo])
        }


def _body(title: str, secret: str, n: int) -> str:
    words = " ".join(f"w{n}x{i}" for i in range(12))
    return f"# {title}\n\nzebra crossing notes {secret} {words}.\n"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Corpus]:
    """Three repositories of one organization, canonical and evidence documents of every
    classification, relationships across classifications, two promotions."""
    app = build_app(Settings(home=tmp_path_factory.mktemp("trim") / "home"), migrate=True)
    svc = app.service
    svc.bootstrap_admin(ADMIN.principal_id)
    org = f"trim{secrets.token_hex(3)}/eng"
    c = Corpus(app, org, [f"{org}/r{i}" for i in range(3)])
    for repo in c.repos:
        svc.create_repository(ADMIN, repo)
        svc.grant(ADMIN, CURATOR.principal_id, "curator", repo, "restricted")
        svc.grant(ADMIN, PUBLISHER.principal_id, "publisher", repo, "restricted")
    n = itertools.count()
    for repo, level, kind in itertools.product(c.repos, LEVELS, ("canonical", "evidence")):
        i = next(n)
        secret = f"secret{i}q"
        if kind == "canonical":
            out = svc.create_element(
                CURATOR, repo, title=f"Doc {i}", body=_body("Doc", secret, i), classification=level
            )
            element_id = out["element"]["element_id"]
        else:
            element_id, _ = add_evidence(
                app, repo, f"d{i}.md", _body("Ev", secret, i), classification=level
            )
        c.docs.append(Doc(repo, element_id, level, secret))
    for repo in c.repos:
        mine = [d for d in c.docs if d.repo == repo]
        for a, b in itertools.pairwise(mine):
            svc.add_relationship(
                CURATOR, a.element_id, b.element_id, kind="REFERENCE", type_key="ameide:cites"
            )
    for repo in c.repos[:2]:
        baseline = svc.create_baseline(PUBLISHER, repo)["baseline_id"]
        svc.promote(PUBLISHER, baseline, repo, "first")
    c.t_mid = svc.clock.now()
    yield c
    app.close()


def _forbidden_text(c: Corpus, readable: set[str]) -> list[str]:
    hidden = [d for d in c.docs if d.element_id not in readable]
    return [d.secret for d in hidden] + [d.element_id for d in hidden]


grants_strategy = st.dictionaries(
    st.integers(min_value=0, max_value=2), st.sampled_from(LEVELS), max_size=3
)


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    grants=grants_strategy,
    org_wide=st.booleans(),
    selector=st.sampled_from(["published", "head"]),
    past=st.booleans(),
    hops=st.integers(min_value=0, max_value=2),
    max_items=st.integers(min_value=1, max_value=12),
    query=st.sampled_from(["zebra crossing", "secret0q secret5q secret9q", "zebra title:secret3q"]),
)
def test_nothing_unreadable_ever_shows(
    corpus: Corpus,
    grants: dict[int, str],
    org_wide: bool,
    selector: str,
    past: bool,
    hops: int,
    max_items: int,
    query: str,
) -> None:
    c, svc = corpus, corpus.app.service
    caller = Caller(f"agent:p{secrets.token_hex(5)}", purpose="property")
    by_repo = {c.repos[i]: level for i, level in grants.items()}
    for repo, level in by_repo.items():
        svc.grant(ADMIN, caller.principal_id, "reader", repo, level)
    readable = c.readable(by_repo)
    req = request(
        c.repos[0],
        query,
        selector=selector,
        explain=True,
        expand={"hops": hops, "max_nodes": 5},
        budget={"max_items": max_items, "max_chars": 100_000},
        as_of=c.t_mid.isoformat() if past else None,
    )
    if org_wide:
        req["scope"].pop("repository_id")
    if not (by_repo if org_wide else c.repos[0] in by_repo):
        with pytest.raises(AmeideError, match="not found"):
            svc.read_context(caller, req)
        return
    out = svc.read_context(caller, req)
    text = json.dumps({**out, "trace": {**out["trace"], "query_rewrite": None}})  # not the query
    for leaked in _forbidden_text(c, readable):
        assert leaked not in text
    for item in out["items"]:
        assert item["element_id"] in readable
        assert all(cit["element_id"] in readable for cit in item["citations"])
        for step in item["relationship_path"]:
            assert {step["from_element_id"], step["to_element_id"]} <= readable


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(grants=grants_strategy, org_wide=st.booleans(), max_items=st.integers(1, 30))
def test_permitted_matches_fill_max_items(
    corpus: Corpus, grants: dict[int, str], org_wide: bool, max_items: int
) -> None:
    c, svc = corpus, corpus.app.service
    caller = Caller(f"agent:p{secrets.token_hex(5)}", purpose="property")
    by_repo = {c.repos[i]: level for i, level in grants.items()}
    for repo, level in by_repo.items():
        svc.grant(ADMIN, caller.principal_id, "reader", repo, level)
    req = request(
        c.repos[0],
        "zebra crossing",
        selector="head",
        budget={"max_items": max_items, "max_chars": 100_000},
    )
    if org_wide:
        req["scope"].pop("repository_id")
    if not (by_repo if org_wide else c.repos[0] in by_repo):
        return
    out = svc.read_context(caller, req)
    in_scope = {d.element_id for d in c.docs if org_wide or d.repo == c.repos[0]}
    permitted = c.readable(by_repo) & in_scope
    assert len(out["items"]) == min(max_items, len(permitted))
    assert {i["element_id"] for i in out["items"]} <= permitted


@settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(level=st.sampled_from(LEVELS), selector=st.sampled_from(["published", "head"]))
def test_a_forbidden_element_answers_like_a_missing_one(
    corpus: Corpus, level: str, selector: str
) -> None:
    c, svc = corpus, corpus.app.service
    caller = Caller(f"agent:p{secrets.token_hex(5)}", purpose="property")
    svc.grant(ADMIN, caller.principal_id, "reader", c.repos[0], level)
    hidden = [d for d in c.docs if d.element_id not in c.readable({c.repos[0]: level})]
    missing = "el_" + secrets.token_hex(12)
    answers = []
    for element_id in (hidden[0].element_id, missing):
        out = svc.read_context(
            caller, request(c.repos[0], element_ids=[element_id], selector=selector, explain=True)
        )
        out["selector_used"]["resolved_at"] = None
        answers.append(json.dumps({**out, "context_id": None}).replace(element_id, "X"))
    assert answers[0] == answers[1]
    errors = []
    for repo in (c.repos[2], f"{c.org}/nowhere"):
        with pytest.raises(AmeideError) as caught:
            svc.read_context(caller, {"scope": scope(repo), "query": "zebra"})
        errors.append((caught.value.code, caught.value.message.replace(repo, "R")))
    assert errors[0] == errors[1]
    assert errors[0][0] == "NOT_FOUND"
