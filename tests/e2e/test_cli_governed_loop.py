"""The governed loop through the ``ameide`` CLI: propose pinned, accept, publish, replay."""

from __future__ import annotations

import json
import re

import pytest

pytestmark = pytest.mark.usefixtures("mode")  # local, and over --server (remote)


def test_the_governed_loop_runs_through_the_cli_and_history_shows_every_step(repo, files):
    cli = repo.cli
    element, v1 = repo.canonical()
    body = files("update.md", "# Testing SOP\n\nRun it.\n\n## Phase 3\n\nRun e2e.\n")

    proposal = cli.ok(
        "propose", "--repo", repo.key, "--element", element, "--target-version", v1,
        "--body-file", body, "--summary", "add phase 3", as_=repo.agent,
    )  # fmt: skip
    assert proposal["status"] == "OPEN"
    assert proposal["target_version_id"] == v1
    assert proposal["stale"] is False

    accepted = cli.ok(
        "accept", proposal["proposal_id"], "--rationale", "looks right", as_=repo.curator
    )
    v2 = accepted["result_version_id"]
    assert accepted["status"] == "ACCEPTED"

    shown = cli.ok("element", "show", element, as_=repo.curator)
    assert shown["version"]["version_id"] == v2
    assert shown["version"]["parent_version_id"] == v1
    assert shown["version"]["body"].endswith("Run e2e.\n")
    versions = cli.ok("element", "history", element, as_=repo.curator)["versions"]
    assert [v["seq"] for v in versions] == [1, 2]

    links = cli.ok("relationship", "list", proposal["proposal_element_id"], as_=repo.curator)
    accepted_as = [r for r in links if r["type_key"] == "ameide:curation.accepted_as"]
    assert [r["metadata"]["target_version_id"] for r in accepted_as] == [v2]
    decision = cli.ok("element", "show", accepted["decision_element_id"], as_=repo.curator)
    assert decision["element"]["type_key"] == "ameide:curation.decision"
    assert "looks right" in decision["version"]["body"]

    baseline = cli.ok("baseline", "create", "--repo", repo.key, "--name", "v2", as_=repo.publisher)
    assert baseline["pins"] == [{"element_id": element, "version_id": v2}]
    move = cli.ok("promote", baseline["baseline_id"], "--repo", repo.key, as_=repo.publisher)
    assert move["to"] == baseline["baseline_id"]
    assert (
        cli.ok("published", "--repo", repo.key, as_=repo.auditor)["baseline_id"]
        == (baseline["baseline_id"])
    )

    events = cli.ok("history", "--repo", repo.key, as_=repo.auditor)
    steps = [(e["event_type"], e["actor"]) for e in events]
    for step in [
        ("repository.created", "user:admin"),
        ("grant.added", "user:admin"),
        ("element.created", repo.curator),
        ("proposal.opened", repo.agent),
        ("version.created", repo.curator),
        ("proposal.accepted", repo.curator),
        ("baseline.created", repo.publisher),
        ("pointer.moved", repo.publisher),
    ]:
        assert step in steps
    assert all(e["occurred_at"] and e["occurred_at"].endswith("Z") for e in events)
    times = [e["occurred_at"] for e in events]
    assert times == sorted(times)


def test_a_stale_proposal_is_refused_with_one_line_then_rebased_and_accepted(repo, files):
    cli = repo.cli
    element, v1 = repo.canonical("# SOP\n\nintro\n\n## A\n\nalpha\n\n## B\n\nbeta\n")
    mine = cli.ok(
        "propose", "--repo", repo.key, "--element", element, "--target-version", v1,
        "--body-file", files("mine.md", "# SOP\n\nintro\n\n## A\n\nalpha\n\n## B\n\nbeta 2\n"),
        "--summary", "beta 2", as_=repo.agent,
    )  # fmt: skip
    other = cli.ok(
        "propose", "--repo", repo.key, "--element", element, "--target-version", v1,
        "--body-file", files("other.md", "# SOP\n\nintro 2\n\n## A\n\nalpha\n\n## B\n\nbeta\n"),
        "--summary", "intro 2", as_=repo.other_agent,
    )  # fmt: skip
    head = cli.ok("accept", other["proposal_id"], as_=repo.curator)["result_version_id"]

    refused = cli("accept", mine["proposal_id"], as_=repo.curator)
    assert refused.exit_code == 5
    assert re.fullmatch(r"error: STALE_PROPOSAL: [^\n]*ver_\w+[^\n]*\n", refused.stderr)

    view = cli.ok("proposal", "show", mine["proposal_id"], as_=repo.curator)
    assert view["stale"] is True
    assert view["current_head_version_id"] == head
    assert head in refused.stderr
    rebased = cli.ok("rebase", mine["proposal_id"], as_=repo.agent)
    assert rebased["rebased_from"] == mine["proposal_id"]
    assert rebased["has_conflicts"] is False
    done = cli.ok("accept", rebased["proposal_id"], as_=repo.curator)
    body = cli.ok("element", "show", element, as_=repo.curator)["version"]["body"]
    assert done["status"] == "ACCEPTED"
    assert "intro 2" in body
    assert "beta 2" in body


def test_published_as_of_an_earlier_instant_shows_the_old_baseline(repo, files):
    cli = repo.cli
    element, v1 = repo.canonical()
    first = cli.ok("baseline", "create", "--repo", repo.key, as_=repo.publisher)["baseline_id"]
    then = cli.ok("promote", first, "--repo", repo.key, as_=repo.publisher)["at"]
    p = cli.ok(
        "propose", "--repo", repo.key, "--element", element, "--target-version", v1,
        "--body-file", files("b.md", "# Testing SOP\n\nRun it twice.\n"), "--summary", "twice",
        as_=repo.agent,
    )  # fmt: skip
    cli.ok("accept", p["proposal_id"], as_=repo.curator)
    second = cli.ok("baseline", "create", "--repo", repo.key, as_=repo.publisher)["baseline_id"]
    cli.ok("promote", second, "--repo", repo.key, as_=repo.publisher)

    past = cli.ok("published", "--repo", repo.key, "--as-of", then, as_=repo.auditor)
    now = cli.ok("published", "--repo", repo.key, as_=repo.auditor)
    assert past["baseline_id"] == first
    assert [m["to"] for m in past["moves"]] == [first]
    assert now["baseline_id"] == second
    old = cli.ok("element", "show", element, "--as-of", then, as_=repo.auditor)
    assert old["version"]["version_id"] == v1

    diff = cli.ok("baseline", "diff", first, second, as_=repo.publisher)
    assert [c["element_id"] for c in diff["changed"]] == [element]
    rolled = cli.ok("rollback", "--repo", repo.key, "--reason", "oops", as_=repo.publisher)
    assert (rolled["from"], rolled["to"]) == (second, first)


def test_a_create_proposal_becomes_a_new_canonical_element_when_accepted(repo, files):
    cli = repo.cli
    p = cli.ok(
        "propose", "--repo", repo.key, "--create", "--title", "Release SOP",
        "--body-file", files("new.md", "# Release\n\nTag it.\n"), "--summary", "new SOP",
        as_=repo.agent,
    )  # fmt: skip
    assert p["change_kind"] == "CREATE"
    queue = cli.ok("proposal", "list", "--repo", repo.key, "--status", "OPEN", as_=repo.curator)
    assert [q["proposal_id"] for q in queue] == [p["proposal_id"]]
    accepted = cli.ok("accept", p["proposal_id"], as_=repo.curator)
    links = cli.ok("relationship", "list", p["proposal_element_id"], as_=repo.curator)
    [created] = [r for r in links if r["type_key"] == "ameide:curation.accepted_as"]
    assert created["metadata"]["target_version_id"] == accepted["result_version_id"]
    shown = cli.ok("element", "show", created["target_element_id"], as_=repo.curator)
    assert shown["element"]["source_kind"] == "CANONICAL"
    assert shown["version"]["title"] == "Release SOP"


def test_reject_withdraw_and_revise_close_or_change_open_proposals(repo, files):
    cli = repo.cli
    element, v1 = repo.canonical()
    body = files("p.md", "# Testing SOP\n\nRun it now.\n")
    propose = ("propose", "--repo", repo.key, "--element", element, "--target-version", v1)
    a = cli.ok(*propose, "--body-file", body, "--summary", "a", as_=repo.agent)
    b = cli.ok(*propose, "--body-file", body, "--summary", "b", as_=repo.agent)

    revised = cli.ok(
        "proposal", "revise", a["proposal_id"],
        "--body-file", files("r.md", "# Testing SOP\n\nRun it later.\n"), as_=repo.agent,
    )  # fmt: skip
    assert "Run it later." in revised["body"]
    rejected = cli.ok("reject", a["proposal_id"], "--rationale", "not now", as_=repo.curator)
    withdrawn = cli.ok("withdraw", b["proposal_id"], as_=repo.agent)
    assert (rejected["status"], withdrawn["status"]) == ("REJECTED", "WITHDRAWN")


def test_client_request_id_makes_proposing_idempotent(repo, files):
    cli = repo.cli
    element, v1 = repo.canonical()
    args = (
        "propose", "--repo", repo.key, "--element", element, "--target-version", v1,
        "--body-file", files("p.md", "# Testing SOP\n\nagain\n"), "--summary", "s",
        "--client-request-id", "req-1",
    )  # fmt: skip
    first = cli.ok(*args, as_=repo.agent)
    again = cli.ok(*args, as_=repo.agent)
    assert (first["replay"], again["replay"]) == (False, True)
    assert again["proposal_id"] == first["proposal_id"]


def test_human_output_is_concise_text_and_json_output_is_one_document(repo):
    cli = repo.cli
    element, v1 = repo.canonical()
    human = cli("element", "show", element, as_=repo.curator)
    assert human.exit_code == 0
    assert "Testing SOP" in human.stdout
    assert v1 in human.stdout
    assert not human.stdout.lstrip().startswith("{")

    for args in [
        ("element", "show", element, "--json"),
        ("--json", "element", "history", element),
        ("history", "--repo", repo.key, "--json"),
    ]:
        result = cli(*args, as_=repo.auditor)
        assert result.exit_code == 0
        json.loads(result.stdout)  # exactly one document, nothing else on stdout


def test_grants_tokens_and_legal_hold_are_administered_from_the_cli(repo):
    cli = repo.cli
    rows = cli.ok("grants", "--repo", repo.key)
    assert {(g["principal_id"], g["role"]) for g in rows} >= {(repo.curator, "curator")}
    org = cli.ok("grant", "user:olga", "reader", "--org", "acme/eng", "--clearance", "public")
    assert (org["scope"], org["clearance"]) == ("acme/eng", "public")
    assert cli.ok("revoke", "user:olga", "reader", "--org", "acme/eng")["revoked"] is True

    token = cli.ok("token", "create", repo.agent)
    assert token["token"].startswith("amt_")
    assert cli.ok("token", "revoke", token["token_id"])["revoked"] is True

    element, _ = repo.canonical()
    assert cli.ok("hold", "set", "--repo", repo.key)["legal_hold"] is True
    held = cli("element", "retire", element, as_=repo.curator)
    assert held.exit_code == 5
    assert held.stderr.startswith("error: LEGAL_HOLD: ")
    cli.ok("hold", "release", "--repo", repo.key)
    assert cli.ok("element", "retire", element, as_=repo.curator)["element"]["retired_at"]


def test_promote_with_an_expected_baseline_is_a_compare_and_swap(repo):
    cli = repo.cli
    repo.canonical()
    first = cli.ok("baseline", "create", "--repo", repo.key, as_=repo.publisher)["baseline_id"]
    second = cli.ok("baseline", "create", "--repo", repo.key, as_=repo.publisher)["baseline_id"]
    cli.ok("promote", first, "--repo", repo.key, as_=repo.publisher)

    lost = cli("promote", second, "--repo", repo.key, "--expected-baseline", second,
               as_=repo.publisher)  # fmt: skip
    assert lost.exit_code == 6, lost.output
    assert cli.ok("published", "--repo", repo.key, as_=repo.auditor)["baseline_id"] == first

    cli.ok("promote", second, "--repo", repo.key, "--expected-baseline", first, as_=repo.publisher)
    assert cli.ok("published", "--repo", repo.key, as_=repo.auditor)["baseline_id"] == second


def test_proposal_show_of_a_stale_proposal_diffs_against_its_pin_the_head_and_published(
    repo, files
):
    """A curator reviewing a stale proposal sees what it changes against the version it was
    written on, against the head accepting would now overwrite, and against what readers see."""
    cli = repo.cli
    element, v1 = repo.canonical("# SOP\n\nstep one\n")
    published = cli.ok("baseline", "create", "--repo", repo.key, as_=repo.publisher)
    cli.ok("promote", published["baseline_id"], "--repo", repo.key, as_=repo.publisher)
    mine = cli.ok(
        "propose", "--repo", repo.key, "--element", element, "--target-version", v1,
        "--body-file", files("mine.md", "# SOP\n\nstep one\n\nstep three\n"),
        "--summary", "three", as_=repo.agent,
    )  # fmt: skip
    fresh = cli.ok("proposal", "show", mine["proposal_id"], as_=repo.curator)
    assert "+step three" in fresh["diff"]
    assert "diff_against_head" not in fresh  # not stale: the pin is the head

    other = cli.ok(
        "propose", "--repo", repo.key, "--element", element, "--target-version", v1,
        "--body-file", files("other.md", "# SOP\n\nstep one\n\nstep two\n"),
        "--summary", "two", as_=repo.other_agent,
    )  # fmt: skip
    head = cli.ok("accept", other["proposal_id"], as_=repo.curator)["result_version_id"]

    view = cli.ok("proposal", "show", mine["proposal_id"], as_=repo.curator)
    assert view["stale"] is True
    assert f"--- {v1}" in view["diff"]
    assert "-step two" not in view["diff"]
    assert f"--- {head}" in view["diff_against_head"]
    assert "-step two" in view["diff_against_head"]  # accepting would drop the head's line
    assert view["published_version_id"] == v1
    assert f"--- {v1}" in view["diff_against_published"]
    assert "+step three" in view["diff_against_published"]

    text = cli("proposal", "show", mine["proposal_id"], as_=repo.curator).stdout
    assert "diff against the pinned version" in text
    assert "diff against the current head" in text
    assert f"diff against the published version {v1}" in text


def test_proposal_show_of_a_stale_proposal_on_an_unpublished_element_says_so(repo, files):
    cli = repo.cli
    element, v1 = repo.canonical("# SOP\n\nstep one\n")
    ids = [
        cli.ok(
            "propose", "--repo", repo.key, "--element", element, "--target-version", v1,
            "--body-file", files(f"{n}.md", f"# SOP\n\nstep {n}\n"), "--summary", n,
            as_=repo.agent,
        )["proposal_id"]
        for n in ("two", "three")
    ]  # fmt: skip
    cli.ok("accept", ids[0], as_=repo.curator)
    view = cli.ok("proposal", "show", ids[1], as_=repo.curator)
    assert view["stale"] is True
    assert "-step two" in view["diff_against_head"]
    assert (view["published_version_id"], view["diff_against_published"]) == (None, None)
    text = cli("proposal", "show", ids[1], as_=repo.curator).stdout
    assert "the target is not published" in text


def test_accept_takes_only_the_proposal_version_the_curator_reviewed(repo, files):
    """The curator reviews version A (``--dry-run`` names it); the agent revises the proposal to
    B; ``accept --expected-version A`` is refused with CONFLICT and nothing is accepted; the
    version now shown is accepted, and a plain ``accept`` names the version it took."""
    cli = repo.cli
    element, v1 = repo.canonical()
    p = cli.ok(
        "propose", "--repo", repo.key, "--element", element, "--target-version", v1,
        "--body-file", files("a.md", "# Testing SOP\n\nRun it twice.\n"), "--summary", "twice",
        as_=repo.agent,
    )  # fmt: skip
    reviewed = cli.ok("accept", p["proposal_id"], "--dry-run", as_=repo.curator)
    assert reviewed["proposal_version_id"] == p["proposal_version_id"]
    people = cli("accept", p["proposal_id"], "--dry-run", as_=repo.curator)
    assert p["proposal_version_id"] in people.stdout
    revised = cli.ok(
        "proposal", "revise", p["proposal_id"],
        "--body-file", files("b.md", "# Testing SOP\n\nDelete everything.\n"), as_=repo.agent,
    )  # fmt: skip
    assert revised["proposal_version_id"] != p["proposal_version_id"]

    refused = cli(
        "accept", p["proposal_id"], "--expected-version", p["proposal_version_id"],
        as_=repo.curator,
    )  # fmt: skip
    assert refused.exit_code == 6
    assert re.fullmatch(r"error: CONFLICT: [^\n]*revised after version [^\n]*\n", refused.stderr)
    assert cli.ok("proposal", "show", p["proposal_id"], as_=repo.curator)["status"] == "OPEN"
    malformed = cli("accept", p["proposal_id"], "--expected-version", "v2", as_=repo.curator)
    assert malformed.exit_code == 2
    assert "expected_version_id" in malformed.stderr

    done = cli.ok(
        "accept", p["proposal_id"], "--expected-revision", revised["proposal_version_id"],
        as_=repo.curator,
    )  # fmt: skip
    assert done["status"] == "ACCEPTED"

    q = cli.ok(
        "propose", "--repo", repo.key, "--element", element,
        "--target-version", done["result_version_id"],
        "--body-file", files("c.md", "# Testing SOP\n\nRun it once.\n"), "--summary", "once",
        as_=repo.agent,
    )  # fmt: skip
    plain = cli("accept", q["proposal_id"], as_=repo.curator)
    assert plain.exit_code == 0, plain.stderr
    assert f"accepted {q['proposal_id']} (version {q['proposal_version_id']})" in plain.stdout
