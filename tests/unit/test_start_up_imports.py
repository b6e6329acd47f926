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
        # the composition root: git and the ingest pipeline (Markdown, YAML, routing rules)
        # only for an ingest, the model only for a semantic read, no pydantic-settings sources
        (
            "import runtime",
            {
                *("git", "ingest.plan", "yaml", "tokenizers", "safetensors", "pydantic_settings"),
                "sqlalchemy.dialects.postgresql",  # on SQLite, never PostgreSQL's dialect
            },
        ),
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


def test_each_command_is_built_from_the_module_named_for_it() -> None:
    """``cli.main.run`` builds only the module that declares the command a line names: the
    table must name every command of every module, and nothing else."""
    from cli.main import MODULES, build

    for module, names in MODULES.items():
        alone = build([module])
        declared = [c.name for c in alone.registered_commands]
        declared += [g.name for g in alone.registered_groups]
        assert sorted(declared) == sorted(names), module
    everything = build()
    assert len(everything.registered_commands) + len(everything.registered_groups) == sum(
        len(names) for names in MODULES.values()
    )


def test_the_global_options_that_take_a_value_are_the_ones_skipped() -> None:
    from typer.main import get_command

    from cli.main import VALUED_OPTIONS, build

    root = get_command(build([]))
    valued = {
        name
        for param in root.params
        if not getattr(param, "is_flag", False) and param.param_type_name == "option"
        for name in param.opts
    }
    assert valued == VALUED_OPTIONS


@pytest.mark.parametrize(
    ("argv", "command"),
    [
        (["context", "--repo", "a/b/c", "q"], "context"),
        (["--home", "context", "--as", "user:x", "index", "status"], "index"),
        (["--home=h", "--json", "search", "q"], "search"),
        (["--help"], None),
        (["--home", "h", "--help", "context"], None),
        ([], None),
        (["contxt"], None),  # the whole app says what it could have meant
        (["--home"], None),
    ],
)
def test_a_command_line_names_its_command(argv: list[str], command: str | None) -> None:
    from cli.main import command_named

    assert command_named(argv) == command
