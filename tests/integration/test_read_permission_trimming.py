"""Permission trimming, property-tested: whatever the grants, clearances, selector, instant,
scope and expansion, nothing a principal may not read is returned, cited, excerpted, shown in
the context block, walked through or named in the trace; permitted matches fill max_items; and
a forbidden element answers exactly like a missing one."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.errors import AmeideError
from edge.results import as_json
from runtime import build_app
from service.authz import Caller
from service.settings import Settings
from tests.conftest import ADMIN
from tests.read_world import request, scope
from tests.trimming_model import (
    LEVELS,
    QUERIES,
    ROLES,
    SELECTORS,
    Case,
    Corpus,
    Grants,
    build_corpus,
    describe,
    run_case,
)

EXAMPLES = int(os.environ.get("AMEIDE_PROPERTY_EXAMPLES", "80"))
"""Generated reads per run; CI keeps the default, ``bench.bench_trimming`` runs >= 10,000."""


@pytest.fixture(scope="module")
def corpus(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Corpus]:
    """Three repositories of one organization, canonical and evidence documents of every
    classification, relationships across classifications, two promotions."""
    app = build_app(Settings(home=tmp_path_factory.mktemp("trim") / "home"), migrate=True)
    yield build_corpus(app)
    app.close()


# Several grants per repository, each with its own role and clearance: a principal's grants
# are modelled per role (an ingestor grant at restricted must not raise what it may read).
role_grants = st.lists(
    st.tuples(
        st.integers(min_value=0, max_value=2), st.sampled_from(ROLES), st.sampled_from(LEVELS)
    ),
    max_size=4,
).map(tuple)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    case=st.builds(
        Case,
        grants=role_grants,
        org_wide=st.booleans(),
        selector=st.sampled_from(SELECTORS),
        past=st.booleans(),
        hops=st.integers(min_value=0, max_value=2),
        max_items=st.integers(min_value=1, max_value=12),
        query=st.sampled_from(QUERIES),
        probe=st.integers(min_value=0, max_value=25),
        stats_probe=st.booleans(),
    )
)
def test_nothing_unreadable_ever_shows(corpus: Corpus, case: Case) -> None:
    problems = run_case(corpus, case)
    assert problems == [], json.dumps(as_json(describe(case)))


def test_a_mixed_reader_and_ingestor_grant_reads_only_at_the_reader_clearance(
    corpus: Corpus,
) -> None:
    """The case the property found 51 times before clearance became per action."""
    grants = ((0, "reader", "public"), (0, "ingestor", "restricted"))
    for probe in range(len(corpus.docs)):
        for selector in SELECTORS:
            case = Case(grants=grants, selector=selector, hops=2, max_items=12, probe=probe)
            assert run_case(corpus, case) == [], json.dumps(as_json(describe(case)))


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(grants=role_grants, org_wide=st.booleans(), max_items=st.integers(1, 30))
def test_permitted_matches_fill_max_items(
    corpus: Corpus, grants: Grants, org_wide: bool, max_items: int
) -> None:
    c, svc = corpus, corpus.app.service
    caller = Caller(f"agent:p{secrets.token_hex(5)}", purpose="property")
    for i, role, level in grants:
        svc.admin.grant(ADMIN, caller.principal_id, role, c.repos[i], level)
    by_repo = c.read_clearance(grants)
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
    out = svc.reading.read_context(caller, req)
    in_scope = {d.element_id for d in c.docs if org_wide or d.repo == c.repos[0]}
    permitted = c.readable(grants) & in_scope
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
    svc.admin.grant(ADMIN, caller.principal_id, "reader", c.repos[0], level)
    hidden = [d for d in c.docs if d.element_id not in c.readable(((0, "reader", level),))]
    missing = "el_" + secrets.token_hex(12)
    answers = []
    for element_id in (hidden[0].element_id, missing):
        read = request(c.repos[0], element_ids=[element_id], selector=selector, explain=True)
        out = as_json(svc.reading.read_context(caller, read))
        out["selector_used"]["resolved_at"] = None
        answers.append(json.dumps({**out, "context_id": None}).replace(element_id, "X"))
    assert answers[0] == answers[1]
    errors = []
    for repo in (c.repos[2], f"{c.org}/nowhere"):
        with pytest.raises(AmeideError) as caught:
            svc.reading.read_context(caller, {"scope": scope(repo), "query": "zebra"})
        errors.append((caught.value.code, caught.value.message.replace(repo, "R")))
    assert errors[0] == errors[1]
    assert errors[0][0] == "NOT_FOUND"
