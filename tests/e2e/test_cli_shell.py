"""Issue 30 §3 defect 13: the CLI in a shell. Completion covers values — repositories, element
ids, proposal ids, ``--status`` — not just commands, through Click's own completion protocol
(what the installed bash hook runs: ``_AMEIDE_COMPLETE=complete_bash`` with ``COMP_WORDS`` and
``COMP_CWORD``), and fails silent; a group's command list never breaks a summary mid-sentence.
"""

from __future__ import annotations

import itertools
import re
import time
from pathlib import Path

from typer.testing import CliRunner

from cli.main import app
from tests.e2e.conftest import Cli, Repo


def complete(cli: Cli, line: str, *, home: Path | None = None) -> list[str]:
    """What bash would offer after ``ameide --home HOME LINE`` (a trailing space: a new word)."""
    words = f"ameide --home {home or cli.home} {line}"
    cword = len(words.split()) - (0 if words.endswith(" ") else 1)
    env = {"_AMEIDE_COMPLETE": "complete_bash", "COMP_WORDS": words, "COMP_CWORD": str(cword)}
    result = CliRunner().invoke(app, [], env=env, prog_name="ameide")
    assert result.exit_code == 0, result.output
    assert result.stderr == "", result.stderr  # nothing but the candidates, ever
    assert "Traceback" not in result.output
    return [w for w in result.stdout.splitlines() if w]


def _proposal(repo: Repo, element: str, version: str, files_dir: Path) -> str:
    body = files_dir / "b.md"
    body.write_text("# Testing SOP\n\nRun it twice.\n", encoding="utf-8")
    out = repo.cli.ok(
        "propose", "--repo", repo.key, "--element", element, "--target-version", version,
        "--body-file", str(body), "--summary", "twice", as_=repo.agent,
    )  # fmt: skip
    return str(out["proposal_id"])


def test_completion_offers_repositories_element_and_proposal_ids_and_statuses(
    repo: Repo, tmp_path: Path
) -> None:
    cli = repo.cli
    element, version = repo.canonical()
    proposal = _proposal(repo, element, version, tmp_path)
    cli.ok("repo", "create", "acme/eng/other")

    assert complete(cli, "proposal list --repo ") == ["acme/eng/other", "acme/eng/platform"]
    assert complete(cli, "proposal list --repo acme/eng/p") == ["acme/eng/platform"]
    assert complete(cli, f"proposal list --repo {repo.key} --status ") == [
        "OPEN", "ACCEPTED", "REJECTED", "REBASED", "WITHDRAWN",
    ]  # fmt: skip
    assert complete(cli, "proposal list --repo x --status RE") == ["REJECTED", "REBASED"]
    assert complete(cli, "element show ") == [element]
    assert complete(cli, "element show el_") == [element]
    assert complete(cli, f"element history {element[:6]}") == [element]
    assert complete(cli, f"propose --repo {repo.key} --element ") == [element]
    assert complete(cli, "accept ") == [proposal]
    assert complete(cli, "proposal show prop_") == [proposal]
    assert complete(cli, "proposal show el_") == []
    # as the principal the command line acts as: a stranger sees nothing of the repository
    assert complete(cli, f"--as {repo.stranger} element show ") == []
    assert complete(cli, f"--as {repo.agent} accept ") == [proposal]  # its own proposal


def test_completion_fails_silent_and_quickly(cli: Cli, tmp_path: Path) -> None:
    started = time.perf_counter()
    assert complete(cli, "element show ", home=tmp_path / "nothing-here") == []
    assert complete(cli, "accept ", home=tmp_path / "nothing-here") == []
    assert complete(cli, "--as nobody element show ") == []  # a malformed principal
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "ameide.db").write_text("not a database")
    assert complete(cli, "proposal list --repo ", home=tmp_path / "broken") == []
    assert time.perf_counter() - started < 20


def _described(listing: str, width: int) -> dict[str, list[str]]:
    """A group's command list (``╭─ Commands ─╮`` panels): each command's description lines."""
    found: dict[str, list[str]] = {}
    current = None
    for line in listing.splitlines():
        row = re.match(r"^│ (\S+)?\s+(\S.*?)\s*│$", line)
        if not row or line.startswith("│ -"):
            current = None if not row else current
            continue
        if row.group(1) and line[2] != " ":
            current = row.group(1)
            found[current] = []
        if current:
            found[current].append(row.group(2))
    return found


def test_a_command_summary_wraps_only_where_the_width_ends(cli: Cli) -> None:
    """``whoami``'s summary broke after "(role," in ``ameide --help``: a docstring's line break
    was kept as a hard break. A wrapped summary line must be full: its next word did not fit."""
    width = 100
    runner = CliRunner()
    groups = [[], ["proposal"], ["element"], ["audit"], ["token"]]
    checked = 0
    for group in groups:
        result = runner.invoke(app, [*group, "--help"], env={"COLUMNS": str(width)})
        assert result.exit_code == 0, result.output
        described = _described(result.stdout, width)
        assert described, result.stdout
        cell = max(len(line) for lines in described.values() for line in lines)
        for command, lines in described.items():
            for this, following in itertools.pairwise(lines):
                next_word = following.split()[0]
                assert len(this) + 1 + len(next_word) > cell - 1, (command, this, following)
                checked += 1
    assert checked > 5
    whoami = _described(runner.invoke(app, ["--help"], env={"COLUMNS": "100"}).stdout, 100)
    assert " ".join(whoami["whoami"]).startswith(
        "Who you are to the service: principal, on behalf of whom, purpose, your grants (role, "
        "scope, clearance)"
    )
