"""The reference scenario through the installed ``ameide`` command line, then ``ameide serve``.

    python scripts/demo.py              # against ./.ameide, or $AMEIDE_HOME when set
    python scripts/demo.py --no-serve   # stop after the scenario (also AMEIDE_DEMO_SERVE=0)

After the scenario it mints demo tokens for the agent, the curator and the publisher, prints a
ready-to-paste MCP client configuration and the curator console's URL (sign in with the
curator's token), and hands the process over to ``ameide serve`` on loopback
(``AMEIDE_HTTP_PORT`` / ``AMEIDE_GRPC_PORT`` move the ports).

Every step is a real ``ameide`` process; the printed ``$ ameide …`` lines are exactly what ran.
Ids are picked up with extra ``--json`` reads that are not printed. Running it again is fine:
``init`` is idempotent and each run uses a fresh repository. Exits non-zero when a step does
not behave as the story says.
"""

from __future__ import annotations

import argparse
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

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
SOP_V1 = (EXAMPLES / "testing-sop.md").read_text(encoding="utf-8")
PHASE_0 = "Run `make test-phase0`."
SOP_CLARIFIED = SOP_V1.replace(PHASE_0, "Run `make test-phase0` (ruff, mypy, then pytest -m unit).")
SOP_WITH_PHASE_3 = (
    SOP_V1 + "\n## Phase 3: end-to-end tests\n\nRun `make test-e2e`; it needs the staging stack.\n"
)
QUESTION = "how do I run phase 0/1/2 tests?"
MEANING = "how do we undo a bad release"  # the sample's rollback page shares almost no word with it


class DemoFailed(Exception):
    """A step did not behave as the story says."""


def ameide(
    *args: str, as_: str | None = None, expect: int = 0, quiet: bool = False, live: bool = False
) -> str:
    """Run one ``ameide`` command, print it and its output, return its stdout (``live``: the
    command writes to this terminal itself, progress bars included, and nothing is returned)."""
    argv = [str(AMEIDE), *(["--as", as_] if as_ else []), *args]
    if not quiet:
        print("$ ameide " + " ".join(shlex.quote(a) for a in argv[1:]), flush=True)
    proc = subprocess.run(argv, capture_output=not live, text=True, check=False)
    if not quiet:
        for stream in (proc.stdout or "", proc.stderr or ""):
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
    """Tell the story, then serve it; raise ``DemoFailed`` at the first surprise."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--no-serve", action="store_true", help="stop after the story instead of serving it"
    )
    args = parser.parse_args()
    if not AMEIDE.exists():
        raise DemoFailed(f"{AMEIDE} is missing: install the project first (make install)")
    if not (EXAMPLES / "backlog").is_dir():
        raise DemoFailed(f"the sample backlog {EXAMPLES / 'backlog'} is missing")
    home = os.environ.get("AMEIDE_HOME", ".ameide")
    repo = f"demo/eng/platform-{time.strftime('%Y%m%d-%H%M%S')}-{secrets.token_hex(2)}"
    with tempfile.TemporaryDirectory(prefix="ameide-demo-") as tmp:
        story(home, repo, Path(tmp))
    if args.no_serve or os.environ.get("AMEIDE_DEMO_SERVE", "1") == "0":
        say("Not serving (--no-serve). `ameide serve` starts REST, gRPC and MCP over HTTP.")
        return
    serve(home, repo)


def story(home: str, repo: str, files: Path) -> None:
    """The steps of docs/product.md §9, with the bodies written under ``files``."""
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
        (INGESTOR, "ingestor"),
    ]:
        ameide("grant", principal, role, "--repo", repo, as_=ADMIN)

    ingest_backlog(repo, files)

    say("A curator writes the canonical Testing SOP (examples/testing-sop.md); it is published.")
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

    ask(repo, expect_version=v1)

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
        "--summary", "Say what phase 0 runs", as_=OTHER_AGENT,
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
    v3 = ask(repo, quiet=True)
    if v3 == v1:
        raise DemoFailed("after the second promotion a published read should cite the new SOP")

    say("An auditor asks what was published at the first promotion, and reads as of then.")
    ameide("published", "--repo", repo, "--as-of", published_at, as_=AUDITOR)
    then = query("published", "--repo", repo, "--as-of", published_at, as_=AUDITOR)
    if then["baseline_id"] != first:
        raise DemoFailed(f"as of {published_at} the published baseline should be {first}")
    ask(repo, as_of=published_at, expect_version=v1)

    say("Everything that happened to the SOP, and the audit chain.")
    ameide("history", "--repo", repo, "--element", element, as_=AUDITOR)
    ameide("audit", "verify", "--repo", repo, as_=AUDITOR)
    semantic_recall(repo)
    say(f"Done: the governed loop ran end to end in {repo}.")


def semantic_recall(repo: str) -> None:
    """Embed the sample in the foreground, then a read that finds a page by meaning."""
    if os.environ.get("AMEIDE_SEMANTIC") == "off":
        say("Semantic recall is off (AMEIDE_SEMANTIC=off): reads rank by keywords alone.")
        return
    say("Semantic recall is on by default. How much has vectors so far? A one-shot command like")
    say("these does not embed in the background (a server does, after writes):")
    ameide("index", "status", as_=ADMIN)
    say("So embed now, in the foreground, with progress (all-MiniLM-L6-v2 on NumPy, on this CPU).")
    started = time.monotonic()
    ameide("index", "embed", as_=ADMIN, live=True)
    say(f"Embedded in {time.monotonic() - started:.0f} s.")
    say(f"An agent asks {MEANING!r}: keywords alone miss the rollback page; meaning finds it.")
    ameide("context", MEANING, "--repo", repo, "--max-items", "3", "--detail", "titles",
           as_=AGENT)  # fmt: skip
    answer = query("context", MEANING, "--repo", repo, "--max-items", "3", "--detail", "titles",
                   "--explain", as_=AGENT)  # fmt: skip
    trace = answer["trace"].get("semantic")
    if not trace or trace["embedded_versions"] != trace["selected_versions"]:
        raise DemoFailed(f"the read should fuse meaning over every selected version: {trace}")
    say(
        f"Its --explain: {trace['embedded_versions']} of {trace['selected_versions']} selected "
        f"versions have vectors ({trace['model']}); relevance = keyword part + semantic part:"
    )
    for item in answer["items"]:
        parts = item["score_breakdown"]["relevance"]
        print(
            f"  {item['title']}: {item['why_included']}, keyword {parts.get('keyword')}, "
            f"semantic {parts.get('semantic')}"
        )
    print()
    if not any(item["why_included"] == "semantic_match" for item in answer["items"]):
        raise DemoFailed(f"{MEANING!r} should bring a page found by meaning alone")


def ingest_backlog(repo: str, files: Path) -> None:
    """Mirror the sample backlog (made a git repository on the fly) in as evidence."""
    source = files / "backlog"
    shutil.copytree(EXAMPLES / "backlog", source)
    env = {**os.environ, "GIT_AUTHOR_NAME": "demo", "GIT_AUTHOR_EMAIL": "demo@example.invalid",
           "GIT_COMMITTER_NAME": "demo", "GIT_COMMITTER_EMAIL": "demo@example.invalid"}  # fmt: skip
    for cmd in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "backlog"]):
        subprocess.run(["git", "-C", str(source), *cmd], check=True, env=env)
    say("An ingestor mirrors the sample engineering backlog in as evidence (git → elements).")
    ameide("ingest", "backlog", str(source), "--repo", repo, as_=INGESTOR)


def ask(
    repo: str, *, as_of: str | None = None, expect_version: str | None = None, quiet: bool = False
) -> str:
    """The agent's question; the published SOP must come first. Returns its cited version."""
    when = ["--as-of", as_of] if as_of else []
    if not quiet:
        say(
            f"An agent asks {QUESTION!r}"
            + (f" as of {as_of}" if as_of else ": published truth first, evidence below, cited.")
        )
        ameide("context", QUESTION, "--repo", repo, *when, "--max-items", "4", "--detail",
               "titles", as_=AGENT)  # fmt: skip
    answer = query("context", QUESTION, "--repo", repo, *when, "--max-items", "4", as_=AGENT)
    first = answer["items"][0]
    if first["source_kind"] != "CANONICAL" or first["title"] != "Testing SOP":
        raise DemoFailed(f"the published SOP should come first, got {first['title']!r}")
    version = str(first["version_id"])
    if expect_version is not None and version != expect_version:
        raise DemoFailed(f"the read should cite SOP version {expect_version}, got {version}")
    return version


def serve(home: str, repo: str) -> None:
    """Mint demo tokens, print how to connect, then hand over to ``ameide serve``."""
    host = "127.0.0.1"
    port = os.environ.get("AMEIDE_HTTP_PORT", "8080")
    grpc_port = os.environ.get("AMEIDE_GRPC_PORT", "50051")
    agent = query("token", "create", AGENT, as_=ADMIN)["token"]
    curator = query("token", "create", CURATOR, as_=ADMIN)["token"]
    publisher = query("token", "create", PUBLISHER, as_=ADMIN)["token"]
    config = mcp_config(f"http://{host}:{port}/mcp", agent, Path(home), AGENT)
    saved = Path(home) / "mcp.json"
    saved.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
    saved.chmod(0o600)  # it holds the agent's token
    say("Serving the demo. Demo tokens (shown once; they are stored hashed):")
    print(f"  agent   {AGENT}: {agent}")
    print(f"  curator {CURATOR}: {curator}")
    print(f"  publisher {PUBLISHER}: {publisher}")
    print(f"  repository: {repo}")
    say(f"MCP client configuration (Streamable HTTP, or stdio as the agent), also in {saved}:")
    print(json.dumps(config, indent=2))
    print(f"  npx @modelcontextprotocol/inspector --cli --config {saved} --server ameide \\")
    print("    --method tools/list")
    tenant, org, name = repo.split("/")
    body = json.dumps(
        {"scope": {"tenant_id": tenant, "organization_id": org, "repository_id": name},
         "query": QUESTION, "budget": {"max_items": 3}, "detail_level": "titles"}
    )  # fmt: skip
    say("Try it (REST; OpenAPI at /docs):")
    print(f"  curl -s -H 'Authorization: Bearer {agent}' -H 'Content-Type: application/json' \\")
    print(f"    -d '{body}' http://{host}:{port}/v1/context")
    print(f"  {AMEIDE} test        # the reference scenario end to end (smoke)")
    say("Curator console (queue, diffs, accept / reject / rebase, baselines, audit) in a browser:")
    print(f"  http://{host}:{port}/ui/  — sign in by pasting the curator's token: {curator}")
    say(f"Starting `ameide serve` on {host} (REST :{port}, gRPC :{grpc_port}); Ctrl-C stops it.")
    sys.stdout.flush()
    argv = [str(AMEIDE), "serve", "--host", host, "--port", port, "--grpc-port", grpc_port]
    os.execv(argv[0], argv)  # noqa: S606 (a fixed argv: our own installed command)


def mcp_config(mcp_url: str, token: str, home: Path, principal: str) -> dict[str, Any]:
    """An MCP client configuration (the ``mcpServers`` format the MCP Inspector's ``--config``,
    Claude Desktop and VS Code read): Streamable HTTP with the token, and stdio as ``principal``."""
    return {
        "mcpServers": {
            "ameide": {
                "type": "http",
                "url": mcp_url,
                "headers": {"Authorization": f"Bearer {token}"},
            },
            "ameide-stdio": {
                "type": "stdio",
                "command": str(AMEIDE),
                "args": ["--home", str(home.resolve()), "--as", principal, "mcp"],
            },
        }
    }


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
