"""Schemathesis over the whole REST API with every check (``--checks all``): generated requests
never cause a 5xx, every response matches the OpenAPI document (status, content type, headers,
body schema), every request the schema admits is accepted and every request it excludes is
refused (``positive_data_acceptance`` / ``negative_data_rejection``), and a 405 lists every
method of its path in ``Allow``.

The run uses an administrator's token and pins the path parameters to a real repository,
element, version, baseline, proposal, relationship, stored context and a drifted citation of the
element (on evidence ingested from a real git repository, then changed), so generated requests
reach the service's logic instead of stopping at "not found". Examples are bounded (and seeded)
so it stays well under a minute.

One allowance: a schema-valid request may meet 412 ``FAILED_PRECONDITION``. That answer is about
the state the earlier generated requests left (the pinned element already retired, the baseline
already published, no earlier baseline to roll back to), not about the request's shape, which
no schema can describe; it is the state counterpart of the 409 schemathesis already expects.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ingest.plan import element_id_for
from server.rest.app import create_app
from service.authz import Caller
from tests.conftest import ADMIN, World
from tests.e2e.rest_harness import running
from tests.integration.ingest.conftest import GitRepo

pytestmark = pytest.mark.slow

CHECKS = "all"
OPERATIONS = 56  # + POST /v1/sources/{source_id}/hook
"""Every operation of the document (a new endpoint must be counted here, so it is fuzzed)."""
MAX_EXAMPLES = 5
SEED = 20261121
ACCEPTED = ["2XX", "3XX", "401", "403", "404", "409", "412", "429", "5XX"]
"""Schemathesis's default answers to a schema-valid request, plus 412 (see the docstring)."""


ONE_SHOT = [
    "retire_element",
    "retire_relationship",
    "erase_version",
    "accept",
    "reject",
    "rebase",
    "revise",
    "withdraw",
    "rollback",
    "promote",
    "drift_review",
]
"""Operations whose first success uses up the pinned object: every later schema-valid request
meets 412 or 409 (already retired, erased, decided, published; nothing left to roll back to).
Schemathesis reads "most positive cases answered 4xx" as a schema mismatch, missing test data
or a low valid-input rate; for these operations that reading is wrong. They run apart, with
those three warnings off (failures are still reported); every other operation runs with every
warning on."""
STATEFUL_WARNINGS = ("missing_test_data", "validation_mismatch", "low_valid_rate")
WARNINGS = (
    "missing_auth",
    "missing_deserializer",
    "unused_openapi_auth",
    "unsupported_regex",
    "base_url_mismatch",
    "rate_limited",
    *STATEFUL_WARNINGS,
)


def _config(pinned: dict[str, str], spare: tuple[str, str, str]) -> str:
    statuses = ", ".join(f'"{s}"' for s in ACCEPTED)
    return (
        "[checks.positive_data_acceptance]\n"
        f"expected-statuses = [{statuses}]\n\n"
        "[parameters]\n"
        + "".join(f'"{k}" = "{v}"\n' for k, v in pinned.items())
        + "\n[[operations]]\n"
        'include-operation-id = "retire_element"\n'
        f'parameters = {{ "path.element_id" = "{spare[0]}" }}\n'
        "\n[[operations]]\n"
        'include-operation-id = "erase_version"\n'
        f'parameters = {{ "path.version_id" = "{spare[1]}" }}\n'
        "\n[[operations]]\n"
        'include-operation-id = "add_relationship"\n'
        f'parameters = {{ "body.source_element_id" = "{pinned["path.element_id"]}", '
        f'"body.target_element_id" = "{spare[0]}" }}\n'
        "\n[[operations]]\n"  # a review settles its drift: the other operations keep theirs
        'include-operation-id = "drift_review"\n'
        f'parameters = {{ "path.evidence_element_id" = "{spare[2]}" }}\n'
        "\n[[operations]]\n"  # the body's principal may only be the caller (a token's owner)
        'include-operation-id = "read_context"\n'
        f'parameters = {{ "body.principal.principal_id" = "{ADMIN.principal_id}" }}\n'
    )


def _drifted_evidence(world: World, page: str, tmp_path: Path, name: str = "guide.md") -> str:
    """An evidence element ``page`` cites at its first version, which then changed in git."""
    ingestor = Caller("service:fuzz-ingest")
    world.svc.admin.grant(world.admin, ingestor.principal_id, "ingestor", world.repo)
    git = GitRepo(tmp_path / f"backlog-{name}")
    evidence = element_id_for(world.repo, str(git.root.resolve()), name)
    for n, text in enumerate(("Run phase 0.", "Run phase 0 and 1.")):
        git.write(name, f"# Guide\n\n{text}\n")
        git.commit("guide")
        world.svc.ingest.ingest_backlog(ingestor, str(git.root), world.repo)
        if n == 0:
            pinned = world.svc.elements.get_element(world.curator, evidence)["version"][
                "version_id"
            ]
            world.svc.elements.add_relationship(
                world.curator, page, evidence, kind="REFERENCE", type_key="ameide:cites",
                metadata={"target_version_id": pinned},
            )  # fmt: skip
    return evidence


def _pinned(world: World, tmp_path: Path) -> tuple[dict[str, str], tuple[str, str, str]]:
    """Real objects for every path parameter (and the query's version and instant)."""
    element_id, version_id = world.canonical(body="# Testing SOP\n\n## Phases\n\nRun them.\n")
    evidence = _drifted_evidence(world, element_id, tmp_path)
    reviewed = _drifted_evidence(world, element_id, tmp_path, "steps.md")  # drift_review's
    other_id, other_version = world.canonical(
        title="Release SOP", body="# Release SOP\n\nShip it.\n"
    )
    baseline = world.svc.publishing.create_baseline(world.publisher, world.repo)["baseline_id"]
    world.svc.publishing.promote(world.publisher, baseline, world.repo)
    relationship = world.svc.elements.add_relationship(
        world.curator, element_id, other_id, kind="REFERENCE", type_key="ameide:cites"
    )["relationship_id"]
    proposal = world.svc.curation.propose(
        world.agent,
        world.repo,
        body="# Testing SOP\n\nRun them twice.\n",
        summary="twice",
        element_id=element_id,
        target_version_id=version_id,
    )["proposal_id"]
    tenant, org, repo = world.repo.split("/")
    context = world.svc.reading.read_context(
        world.admin,
        {"scope": {"tenant_id": tenant, "organization_id": org, "repository_id": repo},
         "query": "testing"},
    )["context_id"]  # fmt: skip
    now = world.svc.elements.get_element(world.admin, element_id)["version"]["recorded_at"]
    return {
        "path.tenant": tenant,
        "path.org": org,
        "path.repo": repo,
        "path.element_id": element_id,
        "path.evidence_element_id": evidence,
        "path.version_id": version_id,
        "path.baseline_id": baseline,
        "path.other_baseline_id": baseline,
        "path.relationship_id": relationship,
        "path.proposal_id": proposal,
        "path.context_id": context,
        "query.version_id": version_id,
        "query.as_of": now,
    }, (other_id, other_version, reviewed)  # retired and erased: the rest read the first


def run_schemathesis(world: World, tmp_path: Path) -> list[subprocess.CompletedProcess[str]]:
    """Schemathesis against a live app over ``world``: the one-shot operations, then the rest."""
    token = world.svc.tokens.create(world.admin, world.admin.principal_id)["token"]
    config = _config(*_pinned(world, tmp_path))
    schemathesis = Path(sys.executable).with_name("schemathesis")
    app = create_app(world.svc, settings=world.app.settings)
    one_shot = "^(" + "|".join(ONE_SHOT) + ")$"
    runs = {
        "one-shot": ["--include-operation-id-regex", one_shot, "--warnings",
                     ",".join(w for w in WARNINGS if w not in STATEFUL_WARNINGS)],
        "the-rest": ["--exclude-operation-id-regex", one_shot, "--warnings", ",".join(WARNINGS)],
    }  # fmt: skip
    done = []
    with running(app) as base_url:
        for name, options in runs.items():
            # the rest also follows the document's links (the queue's and history's pages)
            phases = "coverage,fuzzing" + (",stateful" if name == "the-rest" else "")
            cwd = tmp_path / name
            cwd.mkdir()
            (cwd / "schemathesis.toml").write_text(config, encoding="utf-8")
            done.append(
                subprocess.run(
                    [
                        str(schemathesis),
                        "run",
                        f"{base_url}/openapi.json",
                        "--header",
                        f"Authorization: Bearer {token}",
                        "--checks",
                        CHECKS,
                        "--max-examples",
                        str(MAX_EXAMPLES),
                        "--seed",
                        str(SEED),
                        "--no-shrink",
                        "--phases",
                        phases,
                        "--workers",
                        "1",  # CPython 3.11 AST is not thread-safe (cpython#106905)
                        *options,
                    ],
                    cwd=cwd,
                    capture_output=True,
                    text=True,
                    timeout=300,
                    check=False,
                )
            )
    return done


def test_schemathesis_all_checks_find_no_failure_and_no_warning(
    world: World, tmp_path: Path
) -> None:
    one_shot, rest = run_schemathesis(world, tmp_path)

    for run, selected in ((one_shot, len(ONE_SHOT)), (rest, OPERATIONS - len(ONE_SHOT))):
        report = run.stdout[-6000:] + run.stderr[-2000:]
        assert run.returncode == 0, report
        assert f"Operations:       {selected} selected / {OPERATIONS} total" in run.stdout, report
        assert "Warnings:" not in run.stdout, report
