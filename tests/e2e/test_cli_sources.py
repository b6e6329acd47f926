"""``ameide source …`` through the CLI: add (the generated secret printed once, credentials by
reference), list, run (a failed run exits non-zero naming the run), status, pause, resume,
remove — every document JSON with ``--json``."""

from __future__ import annotations

import json
from pathlib import Path

from tests.integration.ingest.conftest import GitRepo


def test_the_source_commands_register_run_and_remove_a_git_backlog(repo, tmp_path: Path) -> None:
    cli = repo.cli
    git = GitRepo(tmp_path / "backlog")
    git.write("docs/a.md", "# Alpha\n\nA page.\n")
    git.commit("first")
    added = cli.ok(
        "source", "add", "backlog", "--repo", repo.key, "--path", str(git.root),
        "--interval", "600", "--credential-env", "BACKLOG_TOKEN",
    )  # fmt: skip
    source_id = added["source_id"]
    assert added["credential"] == "env:BACKLOG_TOKEN"
    assert added["hook_secret"]
    assert added["hook_path"] == f"/v1/sources/{source_id}/hook"
    listed = cli.ok("source", "list", "--repo", repo.key)
    assert [s["source_id"] for s in listed["sources"]] == [source_id]
    assert added["hook_secret"] not in json.dumps(listed)

    failed = cli("source", "run", source_id, "--json")  # BACKLOG_TOKEN is unset
    assert failed.exit_code == 5
    error = json.loads(failed.stdout)["error"]
    assert error["code"] == "FAILED_PRECONDITION"
    assert "BACKLOG_TOKEN" in error["message"]

    plain = cli.ok(
        "source", "add", "plain", "--repo", repo.key, "--path", str(git.root),
        "--hook-secret-env", "HOOK_SECRET",
    )  # fmt: skip
    assert plain["hook_secret"] is None
    run = cli.ok("source", "run", plain["source_id"])
    assert run["status"] == "ok"
    assert run["report"]["counts"]["new"] == 1
    status = cli.ok("source", "status", plain["source_id"])
    assert status["last_run"]["run_id"] == run["run_id"]
    assert status["last_error"] is None
    assert cli.ok("source", "pause", plain["source_id"])["paused"] is True
    assert cli.ok("source", "resume", plain["source_id"])["paused"] is False
    text = cli("source", "status", source_id)
    assert text.exit_code == 0
    assert "BACKLOG_TOKEN" in text.stdout
    assert "last error" in text.stdout
    assert cli.ok("source", "remove", source_id)["removed"] is True
    gone = cli("source", "status", source_id)
    assert gone.exit_code != 0
    assert "NOT_FOUND" in gone.stderr
