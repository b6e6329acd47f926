"""Schemathesis over the whole REST API: generated requests never cause a 5xx, and every
response matches the OpenAPI document (status, content type, headers, body schema).

The run uses an administrator's token and pins the path parameters to a real repository,
element, version and baseline, so generated bodies reach the service's logic instead of
stopping at "not found". Examples are bounded (and seeded) so it stays well under a minute.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from server.rest import create_app
from tests.conftest import World
from tests.e2e.rest_harness import running

pytestmark = pytest.mark.slow

CHECKS = ",".join(
    [
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_headers_conformance",
        "response_schema_conformance",
    ]
)
MAX_EXAMPLES = 5
SEED = 20261121


def _config(world: World, element_id: str, version_id: str, baseline_id: str) -> str:
    tenant, org, repo = world.repo.split("/")
    pinned = {
        "path.tenant": tenant,
        "path.org": org,
        "path.repo": repo,
        "path.element_id": element_id,
        "path.version_id": version_id,
        "path.baseline_id": baseline_id,
        "path.other_baseline_id": baseline_id,
    }
    return "[parameters]\n" + "".join(f'"{k}" = "{v}"\n' for k, v in pinned.items())


def test_schemathesis_finds_no_server_error_and_no_schema_violation(
    world: World, tmp_path: Path
) -> None:
    element_id, version_id = world.canonical(body="# Testing SOP\n\n## Phases\n\nRun them.\n")
    baseline = world.svc.create_baseline(world.publisher, world.repo)["baseline_id"]
    world.svc.promote(world.publisher, baseline, world.repo)
    token = world.svc.create_token(world.admin, world.admin.principal_id)["token"]
    (tmp_path / "schemathesis.toml").write_text(
        _config(world, element_id, version_id, baseline), encoding="utf-8"
    )
    schemathesis = Path(sys.executable).with_name("schemathesis")
    app = create_app(world.svc, settings=world.app.settings)

    with running(app) as base_url:
        run = subprocess.run(
            [
                str(schemathesis), "run", f"{base_url}/openapi.json",
                "--header", f"Authorization: Bearer {token}",
                "--checks", CHECKS,
                "--max-examples", str(MAX_EXAMPLES),
                "--seed", str(SEED),
                "--no-shrink",
                "--phases", "coverage,fuzzing",  # no links to follow: stateful adds nothing
                "--workers", "1",  # CPython 3.11 AST is not thread-safe (cpython#106905)
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )  # fmt: skip

    report = run.stdout[-6000:] + run.stderr[-2000:]
    assert run.returncode == 0, report
    assert "Operations:       45 selected / 45 total" in run.stdout, report
