"""What a command pays for at start-up: heavy packages stay out of the import of the CLI and of
the composition root until a command needs them (``bench/bench_startup.py`` measures the time;
this keeps the imports from creeping back)."""

from __future__ import annotations

import subprocess
import sys

import pytest


def _imported_after(statement: str) -> set[str]:
    probe = f"import sys; {statement}; print('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    return set(out.stdout.split())


@pytest.mark.parametrize(
    ("statement", "absent"),
    [
        # --version and --help: no database, index, service or ingest stack
        ("import cli.main", {"sqlalchemy", "runtime", "service.app", "git", "tantivy", "whoosh"}),
        # the composition root: git only for an ingest, the model only for a semantic read
        ("import runtime", {"git", "tokenizers", "safetensors"}),
    ],
)
def test_heavy_packages_are_imported_on_first_use(statement: str, absent: set[str]) -> None:
    assert absent & _imported_after(statement) == set()


def test_version_answers_before_the_command_tree_and_says_what_the_cli_says() -> None:
    from typer.testing import CliRunner

    from cli.main import app

    probe = (
        "import sys; sys.argv = ['ameide', '--version']; from cli.entry import run; run(); "
        "print('typer' in sys.modules, 'cli.main' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    ).stdout.splitlines()
    assert out[1] == "False False"
    assert out[0] == CliRunner().invoke(app, ["--version"]).stdout.strip()
