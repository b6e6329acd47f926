"""The governed loop, end to end, through the installed ``ameide`` command line.

    python scripts/demo.py          # against ./.ameide, or $AMEIDE_HOME when set

Every step is a real ``ameide`` process; the printed ``$ ameide …`` lines are exactly what ran.
Ids are picked up with extra ``--json`` reads that are not printed. Running it again is fine:
``init`` is idempotent and each run uses a fresh repository. Exits non-zero when a step does
not behave as the story says.
"""

from __future__ import annotations

import json
import os
import secrets
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

AMEIDE = Path(sys.executable).parent / "ameide"

ADMIN = "user:admin"
CURATOR = "user:carol"
PUBLISHER = "user:paul"
AUDITOR = "user:audrey"
AGENT = "agent:coder-1"
OTHER_AGENT = "agent:docs-bot"
INGESTOR = "service:backlog-mirror"

SOP_V1 = """# Testing SOP

How to run the test phases of the platform.

## Phase 0: static checks

Run `make lint`.

## Phase 1: unit tests

Run `make test-unit`; no network, no database.

## Phase 2: integration tests

Run `make test-integration` against a local PostgreSQL.
"""
SOP_CLARIFIED = SOP_V1.replace("Run `make lint`.", "Run `make lint` (ruff and mypy).")
SOP_WITH_PHASE_3 = (
    SOP_V1 + "\n## Phase 3: end-to-end tests\n\nRun `make test-e2e`; it needs the staging stack.\n"
)


class DemoFailed(Exception):
    """A step did not behave as the story says."""


def ameide(*args: str, as_: str | None = None, expect: int = 0, quiet: bool = False) -> str:
    """Run one ``ameide`` command, print it and its output, return its stdout."""
    argv = [str(AMEIDE), *(["--as", as_] if as_ else []), *args]
    proc = subprocess.run(argv, capture_output=True, text=True, check=False)
    if not quiet:
        print("$ ameide " + " ".join(shlex.quote(a) for a in argv[1:]))
        for stream in (proc.stdout, proc.stderr):
            if stream.strip():
                print(stream.rstrip())
        print()
    if proc.returncode != expect:
        raise DemoFailed(
            f"`ameide {' '.join(args)}` exited {proc.returncode}, expected {expect}: "
            f"{proc.stderr.strip() or proc.stdout.strip()}"
        )
    return proc.stdout


def query(*args: str, as_: str) -> Any:
    """A silent ``--json`` read, for picking up ids."""
    return json.loads(ameide(*args, "--json", as_=as_, quiet=True))


def say(text: str) -> None:
    """A line of narrative."""
    print(f"# {text}")


def newest(events: list[dict[str, Any]], event_type: str) -> dict[str, Any]:
    """The latest audit event of a type."""
    return [e for e in events if e["event_type"] == event_type][-1]


def main() -> None:
    """Tell the story; raise ``DemoFailed`` at the first surprise."""
    if not AMEIDE.exists():
        raise DemoFailed(f"{AMEIDE} is missing: install the project first (make install)")
    home = os.environ.get("AMEIDE_HOME", ".ameide")
    repo = f"demo/eng/platform-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"
    with tempfile.TemporaryDirectory(prefix="ameide-demo-") as tmp:
        story(home, repo, Path(tmp))


def story(home: str, repo: str, files: Path) -> None:
    """The steps, with the bodies written under ``files``."""
    for name, body in [
        ("testing-sop.md", SOP_V1),
        ("testing-sop-clarified.md", SOP_CLARIFIED),
        ("testing-sop-phase-3.md", SOP_WITH_PHASE_3),
    ]:
        (files / name).write_text(body, encoding="utf-8")

    say(f"Ameide Memory: the governed loop, in {home}")
    say("Initialise (idempotent) with an administrator, create a repository, grant the roles.")
    ameide("init", "--admin", ADMIN)
    ameide("repo", "create", repo, as_=ADMIN)
    for principal, role in [
        (CURATOR, "curator"),
        (AGENT, "agent"),
        (OTHER_AGENT, "agent"),
        (PUBLISHER, "publisher"),
        (AUDITOR, "auditor"),
    ]:
        ameide("grant", principal, role, "--repo", repo, as_=ADMIN)

    say("A curator writes the canonical Testing SOP; a publisher publishes it.")
    ameide(
        "element", "create", "--repo", repo, "--title", "Testing SOP", "--type-key",
        "ameide:sop", "--body-file", str(files / "testing-sop.md"), as_=CURATOR,
    )  # fmt: skip
    created = newest(query("history", "--repo", repo, as_=AUDITOR), "element.created")
    element, v1 = created["element_id"], created["version_id"]
    ameide("baseline", "create", "--repo", repo, "--name", "SOP v1", as_=PUBLISHER)
    first = query("baseline", "list", "--repo", repo, as_=PUBLISHER)[0]["baseline_id"]
    ameide("promote", first, "--repo", repo, "--reason", "first publication", as_=PUBLISHER)
    published_at = query("published", "--repo", repo, as_=AUDITOR)["moves"][-1]["at"]

    say("An agent proposes an update, pinned to the version it read (v1).")
    ameide(
        "propose", "--repo", repo, "--element", element, "--target-version", v1,
        "--body-file", str(files / "testing-sop-phase-3.md"),
        "--summary", "Add phase 3 (end-to-end tests)", as_=AGENT,
    )  # fmt: skip
    agents = open_proposal(repo, AGENT)

    say("Meanwhile another change to the SOP is proposed and accepted first...")
    ameide(
        "propose", "--repo", repo, "--element", element, "--target-version", v1,
        "--body-file", str(files / "testing-sop-clarified.md"),
        "--summary", "Say what lint runs", as_=OTHER_AGENT,
    )  # fmt: skip
    ameide("accept", open_proposal(repo, OTHER_AGENT), "--rationale", "clearer", as_=CURATOR)

    say("...so the agent's proposal is stale, and accepting it is refused.")
    ameide("proposal", "show", agents, as_=CURATOR)
    ameide("accept", agents, as_=CURATOR, expect=5)

    say("Rebase: a new proposal on the current head (three-way merge), then accept it.")
    ameide("rebase", agents, as_=AGENT)
    rebased = query("proposal", "show", agents, as_=CURATOR)["rebased_to"]
    ameide("accept", rebased, "--rationale", "phase 3 is real now", as_=CURATOR)

    say("The publisher cuts a new baseline and promotes it.")
    ameide("baseline", "create", "--repo", repo, "--name", "SOP v3", as_=PUBLISHER)
    second = query("baseline", "list", "--repo", repo, as_=PUBLISHER)[0]["baseline_id"]
    ameide("baseline", "diff", first, second, as_=PUBLISHER)
    ameide("promote", second, "--repo", repo, "--reason", "phase 3 added", as_=PUBLISHER)

    say("An auditor asks what was published at the first promotion, and now.")
    ameide("published", "--repo", repo, "--as-of", published_at, as_=AUDITOR)
    then = query("published", "--repo", repo, "--as-of", published_at, as_=AUDITOR)
    if then["baseline_id"] != first:
        raise DemoFailed(f"as of {published_at} the published baseline should be {first}")
    ameide("published", "--repo", repo, as_=AUDITOR)

    read_side(repo, files)

    say("Everything that happened to the SOP, and the audit chain.")
    ameide("history", "--repo", repo, "--element", element, as_=AUDITOR)
    ameide("audit", "verify", "--repo", repo, as_=AUDITOR)
    say(f"Done: the governed loop ran end to end in {repo}.")


def read_side(repo: str, files: Path) -> None:
    """Mirror the sample backlog in as evidence, then read context as an agent."""
    backlog = Path(__file__).resolve().parents[1] / "examples" / "backlog"
    if not backlog.is_dir():
        say(f"(no sample backlog at {backlog}: skipping ingest and the context read)")
        return
    source = files / "backlog"
    shutil.copytree(backlog, source)
    env = {**os.environ, "GIT_AUTHOR_NAME": "demo", "GIT_AUTHOR_EMAIL": "demo@example.invalid",
           "GIT_COMMITTER_NAME": "demo", "GIT_COMMITTER_EMAIL": "demo@example.invalid"}  # fmt: skip
    for cmd in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "backlog"]):
        subprocess.run(["git", "-C", str(source), *cmd], check=True, env=env)
    say("An ingestor mirrors the sample engineering backlog in as evidence (git → elements).")
    ameide("grant", INGESTOR, "ingestor", "--repo", repo, as_=ADMIN)
    ameide("ingest", "backlog", str(source), "--repo", repo, as_=INGESTOR)
    say("An agent asks how to run the tests: published truth first, evidence below, cited.")
    question = "how do I run phase 0/1/2 tests?"
    ameide("context", question, "--repo", repo, "--max-items", "4", "--detail", "titles",
           as_=AGENT)  # fmt: skip
    answer = query("context", question, "--repo", repo, "--max-items", "4", as_=AGENT)
    first = answer["items"][0]
    if first["source_kind"] != "CANONICAL" or first["title"] != "Testing SOP":
        raise DemoFailed(f"the published SOP should come first, got {first['title']!r}")


def open_proposal(repo: str, proposer: str) -> str:
    """The id of ``proposer``'s newest OPEN proposal."""
    rows = query("proposal", "list", "--repo", repo, "--status", "OPEN", as_=CURATOR)
    mine = [r for r in rows if r["proposed_by"]["actor_id"] == proposer]
    if not mine:
        raise DemoFailed(f"{proposer} has no open proposal in {repo}")
    return str(max(mine, key=lambda r: r["created_at"])["proposal_id"])


if __name__ == "__main__":
    try:
        main()
    except DemoFailed as exc:
        print(f"demo failed: {exc}", file=sys.stderr)
        sys.exit(1)
