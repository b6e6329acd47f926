"""``ameide ingest backlog|status`` and ``ameide routing explain`` through the CLI."""

from __future__ import annotations

import json
import re

import pytest

from tests.integration.ingest.conftest import GitRepo

INGESTOR = "service:ingest"
ROUTING = """
rules:
  - name: pii
    override: true
    match: {all: [{field: signals.pii_detected, equals: true}]}
    actions: {policy: redact, classification: confidential}
  - name: stubs
    match: {all: [{field: signals.word_count, lt: 5}]}
    actions: {classification: public, tags: [stub]}
"""


@pytest.fixture
def backlog(tmp_path, repo):
    """A git backlog, and an ingestor on the CLI's repository."""
    repo.cli.ok("grant", INGESTOR, "ingestor", "--repo", repo.key, "--clearance", "confidential")
    git = GitRepo(tmp_path / "backlog")
    git.write("backlog/auth.md", "---\nstatus: active\n---\n# Auth\n\nSee [billing](billing.md).\n")
    git.write("backlog/billing.md", "# Billing\n\nMail jane@example.com about invoices.\n")
    git.write("backlog/stub.md", "# Stub\n")
    git.write("backlog/image.md", b"\x00\x01binary")
    git.commit("backlog")
    return git


def ingest(repo, git, *extra, as_=INGESTOR):
    return repo.cli("ingest", "backlog", str(git.root), "--repo", repo.key, *extra, as_=as_)


def test_ingest_backlog_prints_the_run_report_as_json_and_a_rerun_is_a_noop(repo, backlog):
    report = repo.cli.ok("ingest", "backlog", str(backlog.root), "--repo", repo.key, as_=INGESTOR)
    assert report["counts"]["new"] == 3
    assert report["skipped"] == [
        {
            "path": "backlog/image.md",
            "code": "binary",
            "reason": "file is binary (contains NUL bytes)",
        }
    ]
    assert report["links"]["added"] == 1
    again = repo.cli.ok("ingest", "backlog", str(backlog.root), "--repo", repo.key, as_=INGESTOR)
    assert again["noop"] is True
    status = repo.cli.ok("ingest", "status", "--repo", repo.key, as_=INGESTOR)
    (source,) = status["sources"]
    assert source["last_commit"] == report["to_commit"]
    assert source["run_count"] == 1


def test_ingest_backlog_prints_a_table_for_people_without_a_progress_bar_off_a_terminal(
    repo, backlog, tmp_path
):
    rules = tmp_path / "routing.yaml"
    rules.write_text(ROUTING)
    result = ingest(repo, backlog, "--routing", str(rules), "--glob", "backlog/**/*.md")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    heading = " ".join(out.split())  # a long temporary path wraps the heading line
    assert heading.startswith(f"ingested {backlog.root.resolve()} @ main (")
    assert "full scan" in out
    for line in ("new          3", "skipped      1", "backlog/image.md", "binary"):
        assert line in out
    assert "redacted      1 file (email 1)" in out
    assert "reading files" not in out  # the progress bar is for terminals only
    assert "\r" not in out

    backlog.write("backlog/stub.md", "# Stub\n\nNow it has real content, enough words.\n")
    backlog.commit("grow the stub")
    second = ingest(repo, backlog)
    assert second.exit_code == 0, second.stderr
    assert "diff since" in second.stdout
    assert "changed      1" in second.stdout
    nothing = ingest(repo, backlog)
    assert nothing.stdout.startswith("nothing to do:")

    status = repo.cli("ingest", "status", "--repo", repo.key)  # the admin: cleared for all
    assert str(backlog.root.resolve()) in status.stdout
    assert "changed 1" in status.stdout
    below = repo.cli("ingest", "status", "--repo", repo.key, as_=INGESTOR)  # confidential
    assert str(backlog.root.resolve()) in below.stdout
    assert "changed" not in below.stdout  # the totals are for callers cleared for restricted


def test_ingest_refuses_readers_and_hides_the_repository_from_strangers(repo, backlog):
    repo.cli.ok("grant", "user:rita", "reader", "--repo", repo.key)
    denied = ingest(repo, backlog, "--json", as_="user:rita")
    assert denied.exit_code == 4
    assert json.loads(denied.stdout)["error"]["code"] == "PERMISSION_DENIED"
    hidden = ingest(repo, backlog, as_=repo.stranger)
    assert hidden.exit_code == 3
    assert hidden.stderr.startswith("error: NOT_FOUND:")
    assert len(hidden.stderr.strip().splitlines()) == 1


def test_a_malformed_routing_file_is_refused_naming_the_rule(repo, backlog, tmp_path):
    rules = tmp_path / "routing.yaml"
    rules.write_text("rules:\n  - name: oops\n    actions: {policy: shred}\n")
    before = repo.cli.snapshot()
    result = ingest(repo, backlog, "--routing", str(rules))
    assert result.exit_code == 2
    assert "rule 1 'oops' (rules[0])" in result.stderr
    assert repo.cli.snapshot() == before


def test_the_cli_reads_the_routing_file_and_errors_name_it(repo, backlog, tmp_path):
    missing = tmp_path / "nope.yaml"
    unread = ingest(repo, backlog, "--routing", str(missing))
    assert unread.exit_code == 2
    assert f"routing file {missing} does not exist" in unread.stderr
    broken = tmp_path / "team.yml"
    broken.write_text("rules: [\n")
    invalid = ingest(repo, backlog, "--routing", str(broken))
    assert invalid.exit_code == 2
    assert f"invalid routing rules: {broken}: not valid YAML" in invalid.stderr


def test_routing_explain_shows_which_rule_matched_and_why(repo, backlog, tmp_path):
    rules = tmp_path / "routing.yaml"
    rules.write_text(ROUTING)
    file = backlog.root / "backlog" / "billing.md"
    out = repo.cli.ok(
        "routing", "explain", str(file), "--routing", str(rules),
        "--path", "backlog/billing.md", "--repo", repo.key,
    )  # fmt: skip
    assert out["decision"]["policy"] == "redact"
    assert out["decision"]["override_rule"] == "'pii' (#1)"
    assert out["decision"]["repository"] == repo.key
    human = repo.cli(
        "routing", "explain", str(file), "--routing", str(rules), "--path", "backlog/billing.md"
    )
    assert human.exit_code == 0, human.stderr
    assert "'pii' (#1) (priority 0, override): matched" in human.stdout
    assert "signals.pii_detected (True) equals True → true" in human.stdout


def test_a_mass_retirement_is_refused_with_the_option_named_and_dry_run_writes_nothing(
    repo, backlog
):
    for n in range(5):
        backlog.write(f"backlog/extra-{n}.md", f"# Extra {n}\n\nMore.\n")
    backlog.commit("more pages")
    assert repo.cli.ok("ingest", "backlog", str(backlog.root), "--repo", repo.key,
                       as_=INGESTOR)["counts"]["new"] == 8  # fmt: skip
    refused = ingest(repo, backlog, "--glob", "**/*.txt", "--full-scan")
    assert refused.exit_code != 0
    assert "would retire 8 of the 8 mirrored files" in refused.stderr
    assert "--allow-mass-retire" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1  # one line, no traceback
    dry = ingest(repo, backlog, "--glob", "**/*.txt", "--full-scan", "--dry-run",
                 "--allow-mass-retire")  # fmt: skip
    assert dry.exit_code == 0, dry.stderr
    assert "would ingest" in dry.stdout
    assert "DRY RUN" in dry.stdout
    status = repo.cli.ok("ingest", "status", "--repo", repo.key, as_=INGESTOR)
    assert status["sources"][0]["run_count"] == 1  # neither the refusal nor the dry run wrote


def test_ingest_prints_what_the_default_policy_masked_per_kind(repo, tmp_path):
    repo.cli.ok("grant", INGESTOR, "ingestor", "--repo", repo.key)
    git = GitRepo(tmp_path / "cards")
    git.write("pay.md", "# Pay\n\nCard 4111 1111 1111 1111, IBAN DE89 3704 0044 0532 0130 00.\n")
    git.commit("payment data")
    result = ingest(repo, git)
    assert result.exit_code == 0, result.stderr
    assert "1 file (iban 1, payment_card 1)" in result.stdout
    assert "4111" not in result.stdout


def test_ingest_shows_how_much_is_embedded_and_that_it_does_not_embed_in_the_background(
    repo, backlog, monkeypatch
):
    """Semantic recall on, as by default: a one-shot ingest leaves the embedding to
    `ameide index embed` (or a server) and says so, with the progress so far."""
    from tests.semantic_extra import require_semantic

    require_semantic()
    monkeypatch.delenv("AMEIDE_SEMANTIC", raising=False)
    result = ingest(repo, backlog)
    assert result.exit_code == 0, result.stderr
    out = " ".join(result.stdout.split())
    assert re.search(r"embeddings \(all-MiniLM-L6-v2\): 0 of [1-9]\d* versions embedded", out)
    assert "does not embed in the background" in out
    assert "run `ameide index embed`" in out
    embedded = repo.cli.ok("index", "embed", as_="user:admin")
    assert embedded["indexed_versions"] == embedded["expected_versions"] > 0
    monkeypatch.setenv("AMEIDE_SEMANTIC", "off")  # keyword-only: nothing about embeddings
    backlog.write("backlog/stub.md", "# Stub\n\nNow it has real content, enough words.\n")
    backlog.commit("grow the stub")
    second = ingest(repo, backlog)
    assert second.exit_code == 0, second.stderr
    assert "embeddings" not in second.stdout
