"""Tables for people never cut an id (issue 14): `proposal list` in a terminal 80, 120 or 160
columns wide and piped — a copied id must work — with free text shortened instead, or rows as
blocks when even the ids do not fit."""

from __future__ import annotations

import json
import re

import pytest

from tests.e2e.terminal import in_terminal

SUMMARY = "tighten the phase descriptions and add the rollback checklist " * 3

pytestmark = pytest.mark.usefixtures("mode")  # local, and over --server (remote)


@pytest.fixture
def queue(repo, files):
    element, v1 = repo.canonical()
    ids = []
    for n in range(3):
        body = files(f"b{n}.md", f"# Testing SOP\n\nRun it, take {n}.\n")
        out = repo.cli.ok(
            "propose", "--repo", repo.key, "--element", element, "--target-version", v1,
            "--body-file", body, "--summary", f"{n}: {SUMMARY}", as_=repo.agent,
        )  # fmt: skip
        ids.append(out["proposal_id"])
    return ids


@pytest.mark.parametrize("mode", ["local"])  # a terminal's widths; remote: test_cli_remote
@pytest.mark.parametrize("columns", [80, 120, 160])
def test_proposal_list_in_a_terminal_shows_whole_ids_in_any_width(repo, queue, columns) -> None:
    out = in_terminal(repo.cli, columns, "proposal", "list", "--repo", repo.key, as_=repo.curator)
    for proposal_id in queue:
        assert re.search(rf"(?<![\\w]){proposal_id}(?![\\w])", out), (columns, out)
    assert "OPEN" in out
    assert re.search(r"\bstatus\b", out)  # headers whole too, as a header or a label
    assert max(len(line) for line in out.splitlines()) <= columns, out


@pytest.mark.parametrize("columns", ["80", None])
def test_proposal_list_piped_is_one_tab_separated_line_per_proposal(
    repo, queue, monkeypatch, columns
) -> None:
    """Issue 30 §3 defect 13: piped (even with COLUMNS=80 exported), the queue is records for
    ``cut`` and ``awk``, not a table folded into multi-line blocks."""
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    result = repo.cli("proposal", "list", "--repo", repo.key, as_=repo.curator)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == len(queue), result.stdout
    for line, proposal_id in zip(lines, queue, strict=True):
        fields = line.split("\t")
        assert len(fields) == 10, line
        assert fields[:3] == [proposal_id, "OPEN", "UPDATE"]
        assert fields[-1].endswith(SUMMARY.strip())  # free text whole too
    paged = repo.cli("proposal", "list", "--repo", repo.key, "--limit", "1", as_=repo.curator)
    assert paged.stdout.splitlines()[0].split("\t")[0] == queue[0]
    assert len(paged.stdout.splitlines()) == 1
    assert f"more: --cursor {queue[0]}" in paged.stderr


def test_whoami_repo_list_and_element_list_for_a_new_user(repo) -> None:
    cli = repo.cli
    for n in range(3):
        repo.canonical(body=f"# Testing SOP\n\nTake {n}.\n")
    me = cli.ok("whoami", as_=repo.curator)
    assert me["principal_id"] == repo.curator
    assert {"role": "curator", "scope": repo.key, "clearance": "internal"} in me["grants"]
    people = cli("whoami", as_=repo.curator)
    assert "curator" in people.stdout
    assert repo.key in people.stdout

    assert [r["repository_id"] for r in cli.ok("repo", "list", as_=repo.curator)] == [repo.key]
    assert repo.key in cli("repo", "list", as_=repo.curator).stdout

    first = cli.ok("element", "list", "--repo", repo.key, "--limit", "2", as_=repo.curator)
    assert len(first["elements"]) == 2
    rest = cli.ok(
        "element", "list", "--repo", repo.key, "--cursor", first["next_cursor"], as_=repo.curator
    )
    assert len(rest["elements"]) == 1
    assert rest["next_cursor"] is None
    shown = cli("element", "list", "--repo", repo.key, "--limit", "2", as_=repo.curator)
    assert f"more: --cursor {first['next_cursor']}" in shown.stdout
    for e in first["elements"]:
        assert e["element_id"] in shown.stdout


def test_the_queue_filters_orders_and_pages(repo, queue, files) -> None:
    cli = repo.cli
    everything = cli.ok("proposal", "list", "--repo", repo.key, as_=repo.curator)
    assert [p["proposal_id"] for p in everything] == queue  # oldest first
    newest = cli.ok("proposal", "list", "--repo", repo.key, "--newest-first", as_=repo.curator)
    assert [p["proposal_id"] for p in newest] == queue[::-1]

    first = cli.ok("proposal", "list", "--repo", repo.key, "--limit", "2", as_=repo.curator)
    rest = cli.ok(
        "proposal", "list", "--repo", repo.key, "--cursor", first[-1]["proposal_id"],
        as_=repo.curator,
    )  # fmt: skip
    assert [p["proposal_id"] for p in first + rest] == queue
    shown = cli("proposal", "list", "--repo", repo.key, "--limit", "2", as_=repo.curator)
    assert (
        f"more: --cursor {first[-1]['proposal_id']}" in shown.stderr
    )  # piped: stdout is records only

    cli.ok("accept", queue[0], as_=repo.curator)  # the other two are stale now
    stale = cli.ok("proposal", "list", "--repo", repo.key, "--stale", as_=repo.curator)
    assert [p["proposal_id"] for p in stale] == queue[1:]
    by_agent = cli.ok(
        "proposal", "list", "--repo", repo.key, "--proposer", repo.agent, as_=repo.curator
    )
    assert len(by_agent) == 3
    nobody = cli.ok(
        "proposal", "list", "--repo", repo.key, "--proposer", repo.other_agent, as_=repo.curator
    )
    assert nobody == []
    assert cli.ok("proposal", "list", "--repo", repo.key, "--conflicts", as_=repo.curator) == []
    later = cli.ok(
        "proposal", "list", "--repo", repo.key, "--since", "2999-01-01T00:00:00Z",
        as_=repo.curator,
    )  # fmt: skip
    assert later == []
    gone = cli("proposal", "list", "--repo", repo.key, "--cursor", "prop_" + "0" * 24,
               as_=repo.curator)  # fmt: skip
    assert gone.exit_code == 3, gone.stderr  # a cursor naming no proposal: NOT_FOUND
    assert "not found" in gone.stderr


def test_accept_dry_run_says_what_would_happen_and_changes_nothing(repo, queue) -> None:
    cli = repo.cli
    before = cli.snapshot()
    preview = cli.ok("accept", queue[0], "--dry-run", as_=repo.curator)
    assert preview["would_accept"] is True
    assert preview["new_seq"] == 2
    assert preview["refusal"] is None
    assert {k: v for k, v in before.items() if k != "access_log"} == {
        k: v for k, v in cli.snapshot().items() if k != "access_log"
    }
    people = cli("accept", queue[0], "--dry-run", as_=repo.curator)
    assert f"would accept {queue[0]}" in people.stdout
    assert "nothing changed" in people.stdout

    cli.ok("accept", queue[0], as_=repo.curator)
    # a refusal is printed in full and exits with the refusal's code (issue 30: it exited 0)
    refused = cli("accept", queue[1], "--dry-run", "--json", as_=repo.curator)
    assert refused.exit_code == 5  # STALE_PROPOSAL is a FAILED_PRECONDITION
    stale = json.loads(refused.stdout)
    assert stale["would_accept"] is False
    assert stale["stale"] is True
    assert stale["refusal"]["code"] == "STALE_PROPOSAL"
    told = cli("accept", queue[1], "--dry-run", as_=repo.curator)
    assert "would refuse" in told.stdout
    assert told.exit_code == 5
    denied = cli("accept", queue[1], "--dry-run", "--json", as_=repo.agent)
    assert denied.exit_code == 4
    assert json.loads(denied.stdout)["refusal"]["code"] == "PERMISSION_DENIED"


RED = "\x1b[31mRED\x1b[0m"
RETITLE = "\x1b]0;pwned\x07"
C1 = "\x9b2J"  # CSI as one C1 byte: clears the screen on terminals that honour C1
HOSTILE_TITLE = f"{RED} {RETITLE} {C1} \u202eevil"
CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]")


def test_control_characters_in_stored_text_are_escaped_for_people_and_exact_in_json(
    repo, files
) -> None:
    """Issue 28 item 14: a title with terminal escapes printed raw in ``element list``, so a
    stored title could recolour the terminal, retitle its window or clear it."""
    body = files("hostile.md", f"# Body\n\n{RED} and {RETITLE}\n\tindented\n")
    created = repo.cli.ok(
        "element", "create", "--repo", repo.key, "--title", HOSTILE_TITLE,
        "--body-file", body, as_=repo.curator,
    )  # fmt: skip
    element = created["element"]["element_id"]
    escaped = "\\x1b[31mRED\\x1b[0m \\x1b]0;pwned\\x07 \\x9b2J \\u202eevil"

    listed = repo.cli("element", "list", "--repo", repo.key, as_=repo.curator)
    assert listed.exit_code == 0, listed.stderr
    assert escaped in listed.stdout
    assert not CONTROL.search(listed.stdout), repr(listed.stdout)

    shown = repo.cli("element", "show", element, as_=repo.curator)
    assert shown.exit_code == 0, shown.stderr
    assert escaped in shown.stdout  # the heading
    assert "\\x1b[31mRED\\x1b[0m and \\x1b]0;pwned\\x07\n" in shown.stdout  # the body, lines kept
    assert not CONTROL.search(shown.stdout), repr(shown.stdout)

    as_json = repo.cli.ok("element", "list", "--repo", repo.key, as_=repo.curator)
    assert [e["title"] for e in as_json["elements"]] == [HOSTILE_TITLE]
    version = repo.cli.ok("element", "show", element, as_=repo.curator)["version"]
    assert version["body"] == f"# Body\n\n{RED} and {RETITLE}\n\tindented\n"
