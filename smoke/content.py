"""The fixed cast and content of the smoke: principals, the Testing SOP and its edits, the
question, and the sample backlog made into a git repository with a fixed commit.

Everything here is constant, so every run asks the same question of the same content and
expects the same outcome; only ids and instants differ between runs.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

ADMIN = "user:smoke-admin"
CURATOR = "user:smoke-curator"
PUBLISHER = "user:smoke-publisher"
AGENT = "agent:smoke-agent"
EDITOR = "agent:smoke-editor"
INGESTOR = "service:smoke-ingestor"
OUTSIDER = "agent:smoke-outsider"
"""A principal with no grant anywhere: it must not be able to tell the repository exists."""

GRANTS = (
    (CURATOR, "curator"),
    (PUBLISHER, "publisher"),
    (AGENT, "agent"),
    (EDITOR, "agent"),
    (INGESTOR, "ingestor"),
)
PRINCIPALS = (CURATOR, PUBLISHER, AGENT, EDITOR, INGESTOR, OUTSIDER)

QUESTION = "how do I run phase 0/1/2 tests?"
SOP_TITLE = "Testing SOP"
SOP_TYPE = "ameide:sop"

SOP_V1 = """# Testing SOP

How to run the test phases of the platform.

## Phase 0: static checks

Run `make lint`.

## Phase 1: unit tests

Run `make test-unit`; no network, no database.

## Phase 2: integration tests

Run `make test-integration` against a local PostgreSQL.
"""
PHASE_3 = "\n## Phase 3: end-to-end tests\n\nRun `make test-e2e`; it needs the staging stack.\n"

SOP_CLARIFIED = SOP_V1.replace("Run `make lint`.", "Run `make lint` (ruff and mypy).")
"""The curator-accepted change that makes the agent's proposal stale."""
SOP_WITH_PHASE_3 = SOP_V1 + PHASE_3
"""The agent's proposal, written against version 1."""
SOP_MERGED = SOP_CLARIFIED + PHASE_3
"""What the rebase's three-way merge must produce: both changes, no conflict."""

FALLBACK_BACKLOG = {
    "backlog/017-testing-phases.md": "# 017 – Testing phases (phase 0 / 1 / 2)\n\n"
    "Phase 0 runs the static checks, phase 1 the unit tests, phase 2 the integration tests.\n"
    "Run each phase with `make phase0`, `make phase1` and `make phase2`.\n",
    "backlog/042-ci-pipeline.md": "# 042 – CI pipeline phases\n\n"
    "CI runs the test phases in order and stops at the first failing one.\n",
    "docs/onboarding.md": "# Onboarding\n\nClone the repository and run the tests before you "
    "change anything.\n",
}
"""A small backlog for installs that do not ship ``examples/backlog``."""

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "ameide smoke",
    "GIT_AUTHOR_EMAIL": "smoke@example.invalid",
    "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+00:00",
    "GIT_COMMITTER_NAME": "ameide smoke",
    "GIT_COMMITTER_EMAIL": "smoke@example.invalid",
    "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+00:00",
    "GIT_CONFIG_GLOBAL": os.devnull,  # no user hooks, signing or templates: the same commit
    "GIT_CONFIG_NOSYSTEM": "1",
}


@dataclass(frozen=True)
class Backlog:
    """A git repository of markdown files, committed once with a fixed author and date."""

    path: Path
    files: int
    origin: str
    """Where the files came from (``examples/backlog`` or the built-in fallback)."""


def sample_backlog() -> Path | None:
    """``examples/backlog`` of the checkout this package runs from (None when not shipped)."""
    folder = Path(__file__).resolve().parent.parent / "examples" / "backlog"
    return folder if folder.is_dir() else None


def commit_change(backlog: Path, path: str, text: str) -> None:
    """Append ``text`` to the backlog file ``path`` and commit it (a teammate's push)."""
    with (backlog / path).open("a", encoding="utf-8") as f:
        f.write(text)
    env = {**os.environ, **_GIT_ENV}
    for args in (["add", "-A"], ["commit", "-q", "-m", f"edit {path}"]):
        subprocess.run(["git", "-C", str(backlog), *args], env=env, capture_output=True, check=True)


def make_backlog(target: Path) -> Backlog:
    """Copy the sample backlog (or the fallback) to ``target`` and commit it on ``main``."""
    if target.exists():
        shutil.rmtree(target)
    sample = sample_backlog()
    if sample is not None:
        shutil.copytree(sample, target)
        origin = str(sample)
    else:
        for name, text in FALLBACK_BACKLOG.items():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            (target / name).write_text(text, encoding="utf-8")
        origin = "built-in fallback"
    git = shutil.which("git")
    if git is None:
        raise RuntimeError("git is not installed: the backlog source must be a git repository")
    env = {**os.environ, **_GIT_ENV}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "backlog"]):
        done = subprocess.run(
            [git, "-C", str(target), *args], env=env, capture_output=True, text=True, check=False
        )
        if done.returncode != 0:
            raise RuntimeError(f"git {args[0]} failed: {done.stderr.strip() or done.stdout}")
    files = sum(1 for p in target.rglob("*.md") if ".git" not in p.relative_to(target).parts)
    return Backlog(target, files, origin)
