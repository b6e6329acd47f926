"""``ameide test``: the reference scenario passes end to end (phases 0-2, and phase 2 against a
running server), and a fault injected between two steps fails the next step, named, exit 11."""

from __future__ import annotations

import functools
import json
import re
import shutil
import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import smoke.run
from cli.commands.smoke import EXIT_SMOKE_FAILED
from domain.errors import InvalidArgument
from smoke.content import ADMIN
from smoke.embedded import EmbeddedInstance, serving
from smoke.run import Smoke
from smoke.surface import ServiceSurface
from tests.e2e.conftest import Cli, Repo

SCENARIO = [
    "setup", "ingest", "publish-sop", "read-published", "propose", "stale", "refused-accept",
    "rebase", "accept", "promote", "read-new", "as-of-old", "no-grant-read", "no-grant-propose",
    "on-behalf-refused",
    "verify-citations-rejects", "sync-and-drift",
]  # fmt: skip
PHASE0 = ["phase0.config", "phase0.migrations", "phase0.index", "phase0.generated-code"]


@pytest.fixture(autouse=True)
def _no_token(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AMEIDE_TOKEN", raising=False)
    monkeypatch.delenv("AMEIDE_INDEX_DIR", raising=False)


def _report(result) -> dict:
    return json.loads(result.stdout)


def test_the_smoke_passes_every_phase_on_an_initialised_home(repo: Repo) -> None:
    repo.canonical()  # the configured home has content, so its index is checked too

    result = repo.cli("test", "--json")

    assert result.exit_code == 0, result.stderr or result.stdout
    report = _report(result)
    assert report["ok"] is True
    assert report["failed_step"] is None
    names = [s["name"] for s in report["steps"]]
    assert names == [
        *PHASE0,
        "phase1.instance",
        *(f"phase1.{n}" for n in SCENARIO),
        "phase2.server",
        *(f"phase2.{n}" for n in SCENARIO),
    ]
    assert {s["status"] for s in report["steps"]} == {"ok"}, report["steps"]
    server = next(s for s in report["steps"] if s["name"] == "phase2.server")
    assert "(2 worker processes)" in server["detail"]  # phase 2 runs `ameide serve --workers 2`


def test_the_human_output_lists_each_step_and_a_verdict(cli: Cli) -> None:
    result = cli("test", "--phase", "0")

    assert result.exit_code == 0, result.stderr
    steps = re.findall(r"^(ok|skip|FAIL) +(\S+) +\(\d+\.\d\ds\) ", result.stdout, re.MULTILINE)
    assert steps == [("ok", name) for name in PHASE0]
    assert result.stdout.splitlines()[-1].startswith("smoke passed: 4 steps ok, 0 skipped in ")


def test_a_deleted_index_of_the_configured_home_fails_phase0_index(repo: Repo) -> None:
    repo.canonical()
    shutil.rmtree(repo.cli.home / "index")

    result = repo.cli("test", "--json")

    assert result.exit_code == EXIT_SMOKE_FAILED
    report = _report(result)
    assert report["failed_step"] == "phase0.index"
    assert "missing" in report["reason"]
    assert report["steps"][-1]["name"] == "phase0.index"  # nothing ran after it
    assert result.stderr.startswith("error: SMOKE_FAILED: phase0.index: ")


@pytest.fixture
def inject(monkeypatch: pytest.MonkeyPatch) -> Callable[[str, Callable[[Smoke], None]], None]:
    """``inject(step, fault)``: the CLI's smoke calls ``fault(smoke)`` after ``step`` passes."""

    def arrange(step: str, fault: Callable[[Smoke], None]) -> None:
        def after_step(name: str, run: Smoke) -> None:
            if name == step:
                fault(run)

        patched = functools.partial(smoke.run.run_smoke, after_step=after_step)
        monkeypatch.setattr(smoke.run, "run_smoke", patched)

    return arrange


def _delete_index(run: Smoke) -> None:
    assert run.instance is not None
    upkeep = run.instance.app.status_upkeep
    assert upkeep is not None
    assert upkeep.wait_idle()  # deleted between two batches, not under one being written
    # In phase 2 the server's worker processes apply the same writes from their own upkeep:
    # wait until the index covers them, and delete again should a late commit add a file.
    indexer = run.instance.app.indexer
    assert indexer is not None
    deadline = time.monotonic() + 30
    while indexer.status()["pending"] and time.monotonic() < deadline:
        time.sleep(0.05)
    for _ in range(40):
        try:
            shutil.rmtree(run.instance.settings.index_dir)
            return
        except OSError:  # "Directory not empty": a worker's commit landed a file meanwhile
            time.sleep(0.05)
    shutil.rmtree(run.instance.settings.index_dir)


def _set_pin(version: Callable[[Smoke, int], str]) -> Callable[[Smoke], None]:
    """A fault writing another target version into the agent's proposal, in SQLite directly."""

    def fault(run: Smoke) -> None:
        assert run.instance is not None
        phase = max(run.states)
        state = run.states[phase]
        with sqlite3.connect(run.instance.settings.home / "ameide.db") as conn:
            changed = conn.execute(
                "UPDATE proposals SET target_version_id = ? WHERE proposal_id = ?",
                (version(run, phase), state.proposal),
            ).rowcount
        assert changed == 1

    return fault


INVENTED = "ver_" + "1" * 24


@pytest.mark.parametrize(
    ("phase", "after", "fault", "broken"),
    [
        ("1", "phase1.publish-sop", _delete_index, "phase1.read-published"),
        ("2", "phase2.publish-sop", _delete_index, "phase2.read-published"),
        ("1", "phase1.propose", _set_pin(lambda run, p: INVENTED), "phase1.stale"),
        ("2", "phase2.propose", _set_pin(lambda run, p: INVENTED), "phase2.stale"),
        (
            "1",
            "phase1.stale",
            _set_pin(lambda run, p: run.states[p].v2),  # the stale proposal made to look fresh
            "phase1.refused-accept",
        ),
    ],
    ids=["index-deleted", "index-deleted-phase2", "pin-altered", "pin-altered-phase2",
         "pin-moved-to-head"],
)  # fmt: skip
def test_a_fault_between_steps_fails_the_next_step_by_name(
    bare_cli: Cli,
    inject: Callable[[str, Callable[[Smoke], None]], None],
    phase: str,
    after: str,
    fault: Callable[[Smoke], None],
    broken: str,
) -> None:
    inject(after, fault)

    result = bare_cli("test", "--phase", phase, "--json")

    assert result.exit_code == EXIT_SMOKE_FAILED, result.stdout
    report = _report(result)
    assert report["failed_step"] == broken, json.dumps(report)[-3000:]
    statuses = [(s["name"], s["status"]) for s in report["steps"]]
    assert statuses[-1] == (broken, "fail")
    assert all(status == "ok" for _, status in statuses[:-1])
    assert result.stderr.startswith(f"error: SMOKE_FAILED: {broken}: ")
    assert "\n" not in result.stderr.rstrip("\n")


@pytest.fixture
def running_server(tmp_path: Path) -> Iterator[tuple[str, str, str]]:
    """A real server on loopback over its own home: (base URL, gRPC address, admin token)."""
    instance = EmbeddedInstance.create(tmp_path / "server")
    try:
        admin = instance.service.tokens.create(ServiceSurface.caller(ADMIN), ADMIN)["token"]
        with serving(instance) as endpoints:
            yield endpoints.rest.removesuffix("/v1"), endpoints.grpc, admin
    finally:
        instance.close()


def test_phase_2_runs_against_a_running_server_with_target(
    bare_cli: Cli, running_server: tuple[str, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    base, grpc_address, token = running_server
    monkeypatch.setenv("AMEIDE_TOKEN", token)

    result = bare_cli("test", "--phase", "2", "--target", base, "--grpc-target", grpc_address,
                      "--json")  # fmt: skip

    assert result.exit_code == 0, result.stderr or result.stdout
    report = _report(result)
    steps = {s["name"]: s for s in report["steps"]}
    assert list(steps) == ["phase2.server", *(f"phase2.{n}" for n in SCENARIO)]
    assert steps["phase2.ingest"]["status"] == "skip"
    assert steps["phase2.sync-and-drift"]["status"] == "skip"  # sources are local, like ingest
    local = {"phase2.ingest", "phase2.sync-and-drift"}
    assert all(s["status"] == "ok" for n, s in steps.items() if n not in local)
    assert report["repositories"]["phase2"].startswith("smoke/eng/run-")
    assert "cleanup_error" not in report


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--token", "amt_x"], "only apply with --target"),
        (["--target", "http://127.0.0.1:1"], "needs --token"),
        (["--target", "ftp://example"], "must be an http(s):// URL"),
        (["--phase", "3"], "phases must be among 0, 1, 2"),
    ],
)
def test_contradictory_options_are_refused_before_anything_runs(
    bare_cli: Cli, args: list[str], message: str
) -> None:
    result = bare_cli("test", *args)

    assert result.exit_code == 2
    assert result.stdout == ""
    assert message in result.stderr


def test_target_takes_the_grpc_port_from_ameide_grpc_port(monkeypatch: pytest.MonkeyPatch) -> None:
    """`ameide test --target URL` finds gRPC where `ameide serve` put it (AMEIDE_GRPC_PORT)."""
    from cli.commands.smoke import _grpc_port
    from smoke.run import DEFAULT_GRPC_PORT, SmokeOptions

    monkeypatch.delenv("AMEIDE_GRPC_PORT", raising=False)
    assert _grpc_port() == DEFAULT_GRPC_PORT
    monkeypatch.setenv("AMEIDE_GRPC_PORT", "50999")
    options = SmokeOptions(target="http://127.0.0.1:8080", grpc_port=_grpc_port())
    assert options.grpc_address == "127.0.0.1:50999"
    explicit = SmokeOptions(target="http://h:1", grpc_target="g:2", grpc_port=_grpc_port())
    assert explicit.grpc_address == "g:2"
    monkeypatch.setenv("AMEIDE_GRPC_PORT", "port")
    with pytest.raises(InvalidArgument, match="AMEIDE_GRPC_PORT"):
        _grpc_port()
