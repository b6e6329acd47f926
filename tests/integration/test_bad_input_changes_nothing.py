"""Bad input at service level: a clear InvalidArgument (NotFound for unknown ids); no change."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

import pytest
import sqlalchemy as sa

from domain.errors import AmeideError, InvalidArgument, NotFound
from domain.values import MAX_BODY_BYTES, new_id
from service.authz import Caller
from storage.schema import metadata
from tests.conftest import World

TOO_BIG = "x" * (MAX_BODY_BYTES + 1)
NAIVE = datetime(2026, 1, 1, 12, 0)  # no timezone: ambiguous

Case = Callable[[World, dict[str, str]], Any]
INVALID: dict[str, tuple[Case, str]] = {
    # malformed TENANT/ORG/REPO
    "repository with two parts": (
        lambda w, c: w.svc.admin.create_repository(w.admin, "acme/eng"),
        "TENANT/ORG/REPO",
    ),
    "repository with four parts": (
        lambda w, c: w.svc.elements.create_element(w.curator, "a/b/c/d", title="t", body="b"),
        "TENANT/ORG/REPO",
    ),
    "repository with an empty segment": (
        lambda w, c: w.svc.curation.propose(
            w.agent, "acme//platform", body="b", summary="s", change_kind="CREATE", title="t"
        ),
        "TENANT/ORG/REPO",
    ),
    "repository with a space": (
        lambda w, c: w.svc.publishing.published(w.reader, "acme/eng/plat form"),
        "TENANT/ORG/REPO",
    ),
    "repository with a path traversal": (
        lambda w, c: w.svc.history.history(w.auditor, "../eng/platform"),
        "TENANT/ORG/REPO",
    ),
    # bodies
    "empty body": (
        lambda w, c: w.svc.elements.create_element(w.curator, w.repo, title="t", body=""),
        "body is empty",
    ),
    "blank body": (
        lambda w, c: w.svc.curation.propose(
            w.agent,
            w.repo,
            body="  \n\t",
            summary="s",
            element_id=c["el"],
            target_version_id=c["ver"],
        ),
        "body is empty",
    ),
    "oversized body on create": (
        lambda w, c: w.svc.elements.create_element(w.curator, w.repo, title="t", body=TOO_BIG),
        "limit is 2097152 bytes (2 MiB)",
    ),
    "oversized body on propose": (
        lambda w, c: w.svc.curation.propose(
            w.agent,
            w.repo,
            body=TOO_BIG,
            summary="s",
            element_id=c["el"],
            target_version_id=c["ver"],
        ),
        "2 MiB",
    ),
    "oversized body on revise": (
        lambda w, c: w.svc.curation.revise(w.agent, c["prop"], TOO_BIG),
        "2 MiB",
    ),
    "body with NUL": (
        lambda w, c: w.svc.elements.create_element(w.curator, w.repo, title="t", body="a\x00b"),
        "NUL",
    ),
    # enumerations
    "unknown role": (
        lambda w, c: w.svc.admin.grant(w.admin, "user:x", "superuser", w.repo),
        "unknown role 'superuser'",
    ),
    "unknown classification": (
        lambda w, c: w.svc.elements.create_element(
            w.curator, w.repo, title="t", body="b", classification="secret"
        ),
        "unknown classification 'secret'",
    ),
    "unknown clearance": (
        lambda w, c: w.svc.admin.grant(w.admin, "user:x", "reader", w.repo, clearance="top"),
        "unknown classification 'top'",
    ),
    "unknown element kind": (
        lambda w, c: w.svc.elements.create_element(
            w.curator, w.repo, title="t", body="b", element_kind="X"
        ),
        "unknown element_kind",
    ),
    "unknown change kind": (
        lambda w, c: w.svc.curation.propose(
            w.agent, w.repo, body="b", summary="s", change_kind="DELETE"
        ),
        "unknown change_kind",
    ),
    "malformed type key": (
        lambda w, c: w.svc.elements.create_element(
            w.curator, w.repo, title="t", body="b", type_key="doc"
        ),
        "namespace:name",
    ),
    "claimed unknown role": (
        lambda w, c: w.svc.elements.get_element(
            Caller(w.reader.principal_id, roles=("god",)), c["el"]
        ),
        "unknown role 'god'",
    ),
    "malformed principal": (
        lambda w, c: w.svc.elements.get_element(Caller("root"), c["el"]),
        "malformed principal 'root'",
    ),
    # proposals
    "update proposal without a pin": (
        lambda w, c: w.svc.curation.propose(
            w.agent, w.repo, body="b", summary="s", element_id=c["el"]
        ),
        "must be pinned",
    ),
    "update proposal without a target": (
        lambda w, c: w.svc.curation.propose(w.agent, w.repo, body="b", summary="s"),
        "must be pinned",
    ),
    "proposal without a summary": (
        lambda w, c: w.svc.curation.propose(
            w.agent, w.repo, body="b", summary=" ", element_id=c["el"], target_version_id=c["ver"]
        ),
        "summary is required",
    ),
    "baseline_ref selector without a baseline": (
        lambda w, c: w.svc.curation.propose(
            w.agent,
            w.repo,
            body="b",
            summary="s",
            element_id=c["el"],
            target_version_id=c["ver"],
            selector="baseline_ref",
        ),
        "needs a baseline_id",
    ),
    "rejecting without a rationale": (
        lambda w, c: w.svc.review.reject(w.curator, c["prop"], ""),
        "rationale is required",
    ),
    # metadata and instants
    "metadata that is not an object": (
        lambda w, c: w.svc.elements.create_element(
            w.curator, w.repo, title="t", body="b", metadata=[1]
        ),
        "JSON object",
    ),
    "metadata that is not JSON": (
        lambda w, c: w.svc.curation.propose(
            w.agent,
            w.repo,
            body="b",
            summary="s",
            element_id=c["el"],
            target_version_id=c["ver"],
            metadata={"at": NAIVE},
        ),
        "JSON values only",
    ),
    "naive as_of for an element": (
        lambda w, c: w.svc.elements.get_element(w.reader, c["el"], as_of=NAIVE),
        "timezone-aware",
    ),
    "naive as_of for the pointer": (
        lambda w, c: w.svc.publishing.published(w.reader, w.repo, as_of=NAIVE),
        "timezone-aware",
    ),
    "naive history range": (
        lambda w, c: w.svc.history.history(w.auditor, w.repo, since=NAIVE),
        "timezone-aware",
    ),
    "explicit pins that are not a mapping": (
        lambda w, c: w.svc.publishing.create_baseline(w.publisher, w.repo, pins=[c["el"]]),
        "mapping of element_id to version_id",
    ),
    "malformed scope": (
        lambda w, c: w.svc.admin.grant(w.admin, "user:x", "reader", ""),
        "malformed scope",
    ),
    # malformed ids
    "malformed element id": (
        lambda w, c: w.svc.elements.get_element(w.reader, "../../etc/passwd"),
        "malformed element id",
    ),
    "malformed version id": (
        lambda w, c: w.svc.elements.get_element(w.reader, c["el"], version_id="ver_' OR 1=1 --"),
        "malformed version id",
    ),
    "malformed proposal id": (
        lambda w, c: w.svc.review.accept(w.curator, "prop_XYZ"),
        "malformed proposal id",
    ),
    "malformed baseline id": (
        lambda w, c: w.svc.publishing.promote(w.publisher, "baseline-1"),
        "malformed baseline id",
    ),
    "malformed relationship id": (
        lambda w, c: w.svc.elements.retire_relationship(w.curator, "rel_"),
        "malformed relationship id",
    ),
    "malformed pinned version": (
        lambda w, c: w.svc.curation.propose(
            w.agent, w.repo, body="b", summary="s", element_id=c["el"], target_version_id="v1"
        ),
        "malformed version id",
    ),
}

UNKNOWN: dict[str, Case] = {
    "unknown element": lambda w, c: w.svc.elements.get_element(w.reader, new_id("el")),
    "unknown version of a known element": lambda w, c: w.svc.elements.get_element(
        w.reader, c["el"], version_id=new_id("ver")
    ),
    "unknown proposal": lambda w, c: w.svc.review.accept(w.curator, new_id("prop")),
    "unknown baseline": lambda w, c: w.svc.publishing.promote(w.publisher, new_id("bl")),
    "unknown repository": lambda w, c: w.svc.elements.create_element(
        w.curator, "nowhere/eng/platform", title="t", body="b"
    ),
    "proposal pinned to an unknown version": lambda w, c: w.svc.curation.propose(
        w.agent, w.repo, body="b", summary="s", element_id=c["el"], target_version_id=new_id("ver")
    ),
    "baseline pinning an unknown element": lambda w, c: w.svc.publishing.create_baseline(
        w.publisher, w.repo, pins={new_id("el"): c["ver"]}
    ),
}


def row_counts(w: World) -> dict[str, int]:
    upkeep = w.app.status_upkeep
    if upkeep is not None:  # the chunk rows of earlier writes are written in the background
        assert upkeep.wait_idle()
    with w.app.engine.connect() as conn:
        return {
            name: conn.execute(sa.select(sa.func.count()).select_from(table)).scalar_one()
            for name, table in metadata.tables.items()
        }


@pytest.fixture
def ctx(any_world: World) -> dict[str, str]:
    w = any_world
    el, ver = w.canonical()
    prop = w.svc.curation.propose(
        w.agent, w.repo, body="b\n", summary="s", element_id=el, target_version_id=ver
    )
    return {"el": el, "ver": ver, "prop": prop["proposal_id"]}


def test_each_kind_of_bad_input_is_refused_clearly_and_changes_nothing(
    any_world: World, ctx: dict[str, str]
):
    w = any_world
    before = row_counts(w)
    problems = []
    for name, (case, expected) in INVALID.items():
        try:
            case(w, ctx)
            problems.append(f"{name}: accepted")
        except InvalidArgument as exc:
            if expected not in exc.message:
                problems.append(f"{name}: message {exc.message!r} lacks {expected!r}")
            if "field" not in exc.details:
                problems.append(f"{name}: no field in details {exc.details}")
        except Exception as exc:  # a raw or mistyped error is a finding too
            problems.append(f"{name}: {type(exc).__name__}: {str(exc)[:120]}")
    assert problems == []
    assert row_counts(w) == before


def test_unknown_ids_are_not_found_and_change_nothing(any_world: World, ctx: dict[str, str]):
    w = any_world
    before = row_counts(w)
    problems = []
    for name, case in UNKNOWN.items():
        try:
            case(w, ctx)
            problems.append(f"{name}: accepted")
        except NotFound:
            pass
        except AmeideError as exc:
            problems.append(f"{name}: {exc.code} {exc.message}")
    assert problems == []
    assert row_counts(w) == before
