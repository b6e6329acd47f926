"""Auditing through the CLI: history filters, the access log, and tamper-evident verification."""

from __future__ import annotations

import csv
import io
import json
import re
import sqlite3

import pytest

pytestmark = pytest.mark.usefixtures("mode")  # local, and over --server (remote)
LOCAL = pytest.mark.parametrize("mode", ["local"])


def test_audit_verify_passes_on_an_untouched_chain(repo):
    repo.canonical()
    result = repo.cli("audit", "verify", "--repo", repo.key, as_=repo.auditor)
    assert result.exit_code == 0
    assert "intact" in result.stdout


def test_audit_verify_fails_naming_the_event_after_a_direct_sql_update(repo):
    cli = repo.cli
    element, _ = repo.canonical()
    events = cli.ok("history", "--repo", repo.key, "--element", element, as_=repo.auditor)
    victim = events[0]["event_id"]
    with sqlite3.connect(cli.db) as conn:
        conn.execute("UPDATE audit_events SET actor = 'user:mallory' WHERE event_id = ?", (victim,))

    result = cli("audit", "verify", "--repo", repo.key, as_=repo.auditor)
    assert result.exit_code == 9
    assert re.fullmatch(
        rf"error: AUDIT_CHAIN_BROKEN: audit chain of {repo.key} is broken at event {victim}: "
        r"[^\n]+\n",
        result.stderr,
    )
    verdict = json.loads(
        cli("audit", "verify", "--repo", repo.key, "--json", as_=repo.auditor).stdout
    )
    assert verdict["ok"] is False
    assert verdict["first_broken_event_id"] == victim


def test_history_filters_by_element_actor_time_and_limit(repo, files):
    cli = repo.cli
    element, v1 = repo.canonical()
    cli.ok(
        "propose", "--repo", repo.key, "--element", element, "--target-version", v1,
        "--body-file", files("p.md", "# Testing SOP\n\nmore\n"), "--summary", "s", as_=repo.agent,
    )  # fmt: skip
    everything = cli.ok("history", "--repo", repo.key, as_=repo.auditor)

    about = cli.ok("history", "--repo", repo.key, "--element", element, as_=repo.auditor)
    assert {e["element_id"] for e in about} == {element}
    by_agent = cli.ok("history", "--repo", repo.key, "--actor", repo.agent, as_=repo.auditor)
    assert by_agent
    assert {e["actor"] for e in by_agent} == {repo.agent}
    future = "2999-01-01T00:00:00Z"  # a time without a zone is refused (one rule everywhere)
    later = cli.ok("history", "--repo", repo.key, "--since", future, as_=repo.auditor)
    assert later == []
    until = everything[1]["occurred_at"]
    assert len(cli.ok("history", "--repo", repo.key, "--until", until, as_=repo.auditor)) >= 2
    assert len(cli.ok("history", "--repo", repo.key, "--limit", "2", as_=repo.auditor)) == 2


def test_audit_export_writes_the_history_as_csv_or_json_safe_for_spreadsheets(repo, tmp_path):
    cli = repo.cli
    element, _ = repo.canonical()
    cli.ok("element", "retire", element, "--reason", "=HYPERLINK(1)", as_=repo.curator)
    events = cli.ok("history", "--repo", repo.key, as_=repo.auditor)
    as_json = cli("audit", "export", "--repo", repo.key, "--format", "json", as_=repo.auditor)
    assert as_json.exit_code == 0, as_json.stderr
    assert json.loads(as_json.stdout) == events  # the history, whole, oldest first
    target = tmp_path / "audit.csv"
    written = cli("audit", "export", "--repo", repo.key, "-o", str(target), as_=repo.auditor)
    assert written.exit_code == 0, written.stderr
    assert f"wrote {len(events)} events" in written.stderr
    rows = list(csv.reader(io.StringIO(target.read_text(encoding="utf-8"))))
    assert rows[0][:3] == ["chain_seq", "occurred_at", "event_type"]
    assert [r[2] for r in rows[1:]] == [e["event_type"] for e in events]
    assert not any(cell.startswith("=") for row in rows for cell in row)  # no formula runs
    summary = cli.ok("audit", "export", "--repo", repo.key, "-o", str(target), as_=repo.auditor)
    assert summary == {"path": str(target), "format": "csv", "events": len(events)}
    refused = cli("audit", "export", "--repo", repo.key, "--format", "xml", as_=repo.auditor)
    assert refused.exit_code == 2
    assert "--format must be csv or json" in refused.stderr


def test_the_access_log_records_who_read_on_behalf_of_whom_and_why(repo):
    cli = repo.cli
    element, _ = repo.canonical()
    refused = cli(
        "--on-behalf-of", repo.curator, "element", "show", element, as_=repo.agent
    )  # fmt: skip
    assert refused.exit_code == 4, refused.stderr
    assert "delegate --for" in refused.stderr
    cli.ok("grant", repo.agent, "delegate", "--for", repo.curator, as_=repo.curator)
    shown = cli(
        "--on-behalf-of", repo.curator, "--purpose", "answer a question",
        "element", "show", element, as_=repo.agent,
    )  # fmt: skip
    assert shown.exit_code == 0, shown.stderr
    log = cli.ok("access-log", "--repo", repo.key, as_=repo.auditor)
    reads = [r for r in log if r["operation"] == "element.get"]
    assert reads[0]["principal_id"] == repo.agent
    assert reads[0]["on_behalf_of"] == repo.curator
    assert reads[0]["purpose"] == "answer a question"


def test_erasure_keeps_the_version_but_replaces_its_content(repo):
    cli = repo.cli
    element, v1 = repo.canonical("# Testing SOP\n\ncall alice at 555-0100\n")
    erased = cli.ok("erase", v1, "--reason", "personal data")
    assert erased["erased"] is True
    shown = cli.ok("element", "show", element, as_=repo.curator)["version"]
    assert shown["version_id"] == v1
    assert "555-0100" not in json.dumps(shown)
    human = cli("element", "show", element, as_=repo.curator)
    assert "erased" in human.stdout


@LOCAL  # checkpoints are signed with the home's key: local-only
def test_a_signed_checkpoint_kept_outside_the_database_catches_a_rewritten_tail(repo, tmp_path):
    cli = repo.cli
    repo.canonical()
    saved = tmp_path / "checkpoint.json"
    taken = cli("audit", "checkpoint", "--repo", repo.key, "--json", as_=repo.auditor)
    assert taken.exit_code == 0, taken.stderr
    saved.write_text(taken.stdout)
    doc = json.loads(taken.stdout)
    assert doc["chain"] == repo.key
    assert doc["signature"].startswith("hmac-sha256:")
    assert (cli.home / "audit-checkpoint.key").stat().st_mode & 0o777 == 0o600
    human = cli("audit", "checkpoint", "--repo", repo.key, as_=repo.auditor)
    assert f"checkpoint of {repo.key}: {doc['length']} events, head" in human.stdout

    intact = cli(
        "audit", "verify", "--repo", repo.key, "--checkpoint", str(saved), as_=repo.auditor
    )
    assert intact.exit_code == 0, intact.stderr
    assert f"extends the checkpoint at {doc['length']}" in intact.stdout

    # rewrite the newest event and the head row consistently: only the checkpoint notices
    with sqlite3.connect(cli.db) as conn:
        seq, prev, event_id = conn.execute(
            "SELECT chain_seq, prev_hash, event_id FROM audit_events WHERE chain_key = ? "
            "ORDER BY chain_seq DESC LIMIT 1",
            (repo.key,),
        ).fetchone()
        conn.execute("UPDATE audit_events SET purpose = 'nothing' WHERE event_id = ?", (event_id,))
    from runtime import build_app
    from service.settings import Settings

    app = build_app(Settings(home=cli.home, semantic="off"))
    try:
        with app.uow(readonly=True) as uow:
            forged = uow.store.audit_events(repo.key)[-1]
    finally:
        app.close()
    new_hash = forged.compute_hash(seq, prev)
    with sqlite3.connect(cli.db) as conn:
        conn.execute("UPDATE audit_events SET hash = ? WHERE event_id = ?", (new_hash, event_id))
        conn.execute(
            "UPDATE audit_chain_heads SET last_hash = ? WHERE chain_key = ?", (new_hash, repo.key)
        )
    assert cli("audit", "verify", "--repo", repo.key, as_=repo.auditor).exit_code == 0
    caught = cli(
        "audit", "verify", "--repo", repo.key, "--checkpoint", str(saved), as_=repo.auditor
    )
    assert caught.exit_code == 9
    assert f"broken at event {event_id}" in caught.stderr


@LOCAL  # checkpoints are signed with the home's key: local-only
def test_an_edited_or_unsigned_checkpoint_is_refused(repo, tmp_path):
    cli = repo.cli
    repo.canonical()
    saved = tmp_path / "checkpoint.json"
    doc = json.loads(
        cli("audit", "checkpoint", "--repo", repo.key, "--json", as_=repo.auditor).stdout
    )
    saved.write_text(json.dumps({**doc, "length": doc["length"] - 1}))
    edited = cli(
        "audit", "verify", "--repo", repo.key, "--checkpoint", str(saved), as_=repo.auditor
    )
    assert edited.exit_code == 2
    assert "the signature does not match" in edited.stderr
    saved.write_text("{}")
    assert (
        "lacks one of"
        in cli(
            "audit", "verify", "--repo", repo.key, "--checkpoint", str(saved), as_=repo.auditor
        ).stderr
    )
    (cli.home / "audit-checkpoint.key").unlink()
    saved.write_text(json.dumps(doc))
    keyless = cli(
        "audit", "verify", "--repo", repo.key, "--checkpoint", str(saved), as_=repo.auditor
    )
    assert "this home has no audit-checkpoint.key" in keyless.stderr


@LOCAL  # checkpoints are signed with the home's key: local-only
def test_audit_verify_fails_when_a_repositorys_whole_chain_was_deleted(repo, tmp_path):
    """Issue 28 item 13: deleting every event of a repository's chain and its head row used to
    verify as "intact: 0 events"; with or without --checkpoint it is broken now."""
    cli = repo.cli
    repo.canonical()
    saved = tmp_path / "checkpoint.json"
    saved.write_text(
        cli("audit", "checkpoint", "--repo", repo.key, "--json", as_=repo.auditor).stdout
    )
    with sqlite3.connect(cli.db) as conn:
        conn.execute("DELETE FROM audit_events WHERE chain_key = ?", (repo.key,))
        conn.execute("DELETE FROM audit_chain_heads WHERE chain_key = ?", (repo.key,))
    for extra in ((), ("--checkpoint", str(saved))):
        result = cli("audit", "verify", "--repo", repo.key, *extra, as_=repo.auditor)
        assert result.exit_code == 9, result.stdout
        assert "intact" not in result.stdout
        assert re.fullmatch(
            rf"error: AUDIT_CHAIN_BROKEN: audit chain of {repo.key} is broken: "
            r"[^\n]*repository\.created[^\n]*\n",
            result.stderr,
        ), result.stderr
