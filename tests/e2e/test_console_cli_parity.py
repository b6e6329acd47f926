"""The same decisions from the console and from the CLI leave identical audit events.

One home, one repository: two SOPs, each with an agent's proposal (made with the CLI). The
curator accepts one proposal with ``ameide accept`` and the other on the console's proposal page
(signed in with the same purpose ``--purpose`` gives); then rejects a second pair the same way,
and a publisher promotes one baseline each way. Each decision's audit events, with ids
renamed by first appearance and the per-event bookkeeping (event id, chain position, time,
hash) left out, are equal. The one expected difference, the tool that wrote the decision
record, is checked separately: ``ameide-cli`` against ``ameide-console``. The agent's own
revise and withdraw (issue 30 §4) are compared the same way.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from fastapi.testclient import TestClient

from runtime import build_app
from server.rest.app import create_app
from service.settings import Settings
from tests.e2e.conftest import Repo
from tests.e2e.console_harness import SIGNIN_CSRF, csrf_of

PURPOSE = "weekly review"
_ID = re.compile(r"\b[a-z]{2,5}_[0-9a-f]{8,64}\b")
_INSTANT = re.compile(r"\d{4}-\d\d-\d\dT[0-9:.]+(Z|[+-]\d\d:\d\d)")
BOOKKEEPING = {"event_id", "chain_seq", "occurred_at", "hash"}
DECISION = "ameide:curation.decision"


def normalised(events: list[dict[str, Any]]) -> list[Any]:
    """Events without bookkeeping, ids renamed ``ID1``, ``ID2``… in order of appearance."""
    names: dict[str, str] = {}

    def rename(match: re.Match[str]) -> str:
        return names.setdefault(match.group(0), f"ID{len(names) + 1}")

    def walk(value: Any) -> Any:
        if isinstance(value, str):
            return _ID.sub(rename, value)
        if isinstance(value, dict):
            return {k: walk(v) for k, v in value.items()}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    out = []
    for e in events:
        kept = walk({k: v for k, v in e.items() if k not in BOOKKEEPING})
        if kept["payload"].get("type_key") == DECISION:
            # a decision's body names its ids and instant, so its hash differs by construction;
            # the bodies themselves are compared, normalised, by decision_body()
            kept["payload"].pop("content_sha256", None)
        out.append(kept)
    return out


def decision_body(repo: Repo, events: list[dict[str, Any]]) -> str:
    """The decision element's body, ids and instants normalised."""
    el = next(e["element_id"] for e in events if e["payload"].get("type_key") == DECISION)
    body = str(repo.cli.ok("element", "show", el, as_=repo.curator)["version"]["body"])
    return _INSTANT.sub("<at>", _ID.sub("<id>", body))


@pytest.fixture
def console(repo: Repo) -> Iterator[tuple[TestClient, Repo]]:
    app = build_app(Settings(home=repo.cli.home))
    try:
        rest = create_app(app.service, settings=app.settings)
        with TestClient(rest) as client:
            yield client, repo
    finally:
        app.close()


def signed_in(client: TestClient, repo: Repo, principal: str) -> str:
    """Sign the console in as ``principal`` with the CLI's purpose; the session's CSRF token."""
    token = repo.cli.ok("token", "create", principal)["token"]
    client.cookies.clear()
    page = client.get("/ui/sign-in")
    found = SIGNIN_CSRF.search(page.text)
    assert found is not None
    done = client.post(
        "/ui/sign-in",
        data={"token": token, "signin_csrf": found.group(1), "purpose": PURPOSE},
    )
    assert done.status_code == 200, done.text
    return csrf_of(done.text)


def events_of(repo: Repo, step: Callable[[], None]) -> list[dict[str, Any]]:
    """The audit events ``step`` adds to the repository's chain."""
    before = len(repo.cli.ok("history", "--repo", repo.key, as_=repo.auditor))
    step()
    after: list[dict[str, Any]] = repo.cli.ok("history", "--repo", repo.key, as_=repo.auditor)
    return after[before:]


def proposal(repo: Repo, files: Callable[[str, str], str], n: int) -> str:
    """A SOP and the agent's OPEN proposal against its v1; the proposal id."""
    sop, v1 = repo.canonical("# SOP\n\nRun it.\n")  # the same content each time
    body = files(f"p{n}.md", "# SOP\n\nRun it twice.\n")
    return str(
        repo.cli.ok(
            "propose", "--repo", repo.key, "--element", sop, "--target-version", v1,
            "--body-file", body, "--summary", "twice", as_=repo.agent,
        )["proposal_id"]
    )  # fmt: skip


def decision_tool(repo: Repo, events: list[dict[str, Any]]) -> str:
    """The tool id on the decision element the events name."""
    el = next(
        e["payload"]["decision_element_id"]
        for e in events
        if "decision_element_id" in e.get("payload", {})
    )
    shown = repo.cli.ok("element", "show", el, as_=repo.curator)
    return str(shown["version"]["provenance"]["tool_id"])


def test_accept_reject_and_promote_from_the_console_and_the_cli_leave_the_same_audit_events(
    console: tuple[TestClient, Repo], files: Callable[[str, str], str]
) -> None:
    client, repo = console
    ids = [proposal(repo, files, n) for n in range(4)]
    cli = ["--purpose", PURPOSE]
    csrf = signed_in(client, repo, repo.curator)

    def on_console(path: str, **form: str) -> None:
        done = client.post(path, data={"csrf_token": csrf, **form})
        assert done.status_code == 200, done.text
        assert 'role="alert"' not in done.text, done.text

    pairs = [
        (
            lambda: repo.cli.ok(*cli, "accept", ids[0], "--rationale", "ok", as_=repo.curator),
            lambda: on_console(f"/ui/proposals/{ids[1]}/accept", rationale="ok"),
        ),
        (
            lambda: repo.cli.ok(*cli, "reject", ids[2], "--rationale", "no", as_=repo.curator),
            lambda: on_console(f"/ui/proposals/{ids[3]}/reject", rationale="no"),
        ),
    ]
    for by_cli, by_console in pairs:
        from_cli, from_console = events_of(repo, by_cli), events_of(repo, by_console)
        assert from_cli, "the decision left no audit event"
        assert normalised(from_cli) == normalised(from_console)
        assert decision_body(repo, from_cli) == decision_body(repo, from_console)
        assert decision_tool(repo, from_cli) == "ameide-cli"
        assert decision_tool(repo, from_console) == "ameide-console"
        assert {e["purpose"] for e in from_console} == {PURPOSE}

    # a promotion each way, by the publisher, each moving the pointer on from the last one
    baselines = [
        repo.cli.ok("baseline", "create", "--repo", repo.key, as_=repo.publisher)["baseline_id"]
        for _ in range(3)
    ]
    repo.cli.ok("promote", baselines[0], "--repo", repo.key, as_=repo.publisher)
    csrf = signed_in(client, repo, repo.publisher)
    from_cli = events_of(
        repo,
        lambda: repo.cli.ok(
            *cli, "promote", baselines[1], "--repo", repo.key, "--reason", "go",
            "--expected-baseline", baselines[0], as_=repo.publisher,
        ),
    )  # fmt: skip
    from_console = events_of(
        repo,
        lambda: on_console(
            f"/ui/repos/{repo.key}/promote",
            baseline_id=baselines[2], reason="go", expected_baseline_id=baselines[1],
        ),
    )  # fmt: skip
    assert [e["event_type"] for e in from_cli] == ["element.created", "pointer.moved"]
    assert normalised(from_cli) == normalised(from_console)
    assert decision_tool(repo, from_cli) == "ameide-cli"
    assert decision_tool(repo, from_console) == "ameide-console"


def test_revise_and_withdraw_from_the_console_and_the_cli_leave_the_same_audit_events(
    console: tuple[TestClient, Repo], files: Callable[[str, str], str]
) -> None:
    """The proposer's own forms (issue 30 §4): the agent revises and withdraws its proposals
    with ``ameide proposal revise`` / ``ameide withdraw`` and on the console's proposal page."""
    client, repo = console
    ids = [proposal(repo, files, n) for n in range(4)]
    cli = ["--purpose", PURPOSE]
    csrf = signed_in(client, repo, repo.agent)
    resolved = "# SOP\n\nRun it three times.\n"
    body_file = files("resolved.md", resolved)

    def on_console(path: str, **form: str) -> None:
        done = client.post(path, data={"csrf_token": csrf, **form})
        assert done.status_code == 200, done.text
        assert 'role="alert"' not in done.text, done.text

    pairs = [
        (
            lambda: repo.cli.ok(
                *cli, "proposal", "revise", ids[0], "--body-file", body_file, as_=repo.agent
            ),
            lambda: on_console(f"/ui/proposals/{ids[1]}/revise", body=resolved),
        ),
        (
            lambda: repo.cli.ok(*cli, "withdraw", ids[2], "--rationale", "gone", as_=repo.agent),
            lambda: on_console(f"/ui/proposals/{ids[3]}/withdraw", rationale="gone"),
        ),
    ]
    kinds = []
    for by_cli, by_console in pairs:
        from_cli, from_console = events_of(repo, by_cli), events_of(repo, by_console)
        kinds += [e["event_type"] for e in from_cli]
        assert normalised(from_cli) == normalised(from_console)
        assert {e["purpose"] for e in from_console} == {PURPOSE}
    assert {"proposal.revised", "proposal.withdrawn"} <= set(kinds)
