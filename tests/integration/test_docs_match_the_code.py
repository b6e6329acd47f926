"""The CLI reference (docs/cli.md), its exit-code table and the README's MCP tool list say what
the code does.

Each side is read from its source of truth — the Typer app (``cli.main``), the exit-code table
(``cli.errors``) and the MCP tool registry (``mcp_adapter.tools``) — and compared with the
docs (``docs/cli.md``, the README and the tool table of ``docs/mcp.md``), so a command, code or
tool added, renamed or removed on one side only fails here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import typer.main

from cli import errors as cli_errors
from cli.main import app
from domain import errors as domain_errors
from domain.errors import AmeideError
from edge import errors as edge_errors
from edge.errors import ERROR_TABLE
from mcp_adapter.tools import TOOLS

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
MCP_DOC = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
CLI_DOC = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")

# Codes printed by a command that still prints its verdict, then exits with its own code.
VERDICT_CODES = {
    "AUDIT_CHAIN_BROKEN": cli_errors.EXIT_AUDIT_CHAIN_BROKEN,
    "SMOKE_FAILED": cli_errors.EXIT_SMOKE_FAILED,
}
OPTION = re.compile(r"(?<![\w-])--[a-z][a-z-]*")


def section(text: str, heading: str) -> str:
    """The body of the section under ``heading`` (up to the next heading of any level)."""
    start = text.index(f"\n{heading}\n") + len(heading) + 2
    following = re.search(r"^#{1,6} ", text[start:], flags=re.MULTILINE)
    return text[start : start + following.start()] if following else text[start:]


def spans(text: str) -> list[str]:
    """The inline code spans of ``text``."""
    return re.findall(r"`([^`]+)`", text)


def table_rows(text: str) -> Iterator[list[str]]:
    """The cells of each body row (below the header) of the markdown tables in ``text``."""
    in_body = False
    for line in text.splitlines():
        if not line.startswith("|"):
            in_body = False
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if set("".join(cells)) <= set("-: "):
            in_body = True
        elif in_body:
            yield cells


# -- the code's side ----------------------------------------------------------------------------


# Typer may vendor Click privately, so commands are told apart by shape, not by Click's classes.
Command = Any


def root_command() -> Command:
    return typer.main.get_command(app)


def commands(group: Command, path: tuple[str, ...] = ()) -> Iterator[tuple[str, Command]]:
    """Every command that runs something (``ameide element show``), by its full path."""
    for name, command in group.commands.items():
        if command.hidden:
            continue
        if hasattr(command, "commands"):  # a group of subcommands
            yield from commands(command, (*path, name))
        else:
            yield " ".join((*path, name)), command


def options_of(command: Command) -> set[str]:
    return {opt for param in command.params for opt in param.opts if opt.startswith("--")}


def error_classes() -> set[type[AmeideError]]:
    """Every error class of the taxonomy and the conditions only the CLI meets."""
    return {
        value
        for module in (domain_errors, cli_errors, edge_errors)
        for value in vars(module).values()
        if isinstance(value, type) and issubclass(value, AmeideError) and value is not AmeideError
    }


def exit_code_of(cls: type[AmeideError]) -> int:
    return cli_errors.exit_code_for(cls.__new__(cls))  # only the class's MRO is read


# -- the README's side --------------------------------------------------------------------------


def documented_commands() -> Iterator[tuple[str, str]]:
    """(command path, its bullet) for each ``ameide …`` code span of the command list; the path
    is the longest run of leading words that the app knows (else the first word)."""
    known = dict(commands(root_command()))
    for bullet in section(CLI_DOC, "### Commands").splitlines():
        for span in spans(bullet):
            if not span.startswith("ameide "):
                continue
            words = span.split()[1:]
            paths = [" ".join(words[:n]) for n in range(len(words), 0, -1)]
            yield next((p for p in paths if p in known), words[0] if words else ""), bullet


# -- the checks ---------------------------------------------------------------------------------


def test_the_cli_reference_lists_every_command_and_no_other():
    in_code = {path for path, _ in commands(root_command())}
    in_readme = {path for path, _ in documented_commands()}
    assert sorted(in_readme - in_code) == [], "docs/cli.md lists commands the CLI does not have"
    assert sorted(in_code - in_readme) == [], "docs/cli.md misses commands"


def test_every_option_the_cli_reference_names_exists_on_its_command():
    known = dict(commands(root_command()))
    bullets: dict[str, set[str]] = {}
    for path, bullet in documented_commands():
        bullets.setdefault(bullet, set()).add(path)
    wrong = []
    for bullet, paths in bullets.items():
        # an option named anywhere in a bullet belongs to one of the bullet's commands
        allowed = options_of(root_command()).union(
            *(options_of(known[path]) for path in paths if path in known)
        )
        wrong += [
            f"{option} ({' / '.join(sorted(paths))})"
            for text in spans(bullet)
            for option in OPTION.findall(text)
            if option not in allowed
        ]
    assert sorted(set(wrong)) == []


def test_the_global_options_table_matches_the_root_command():
    in_code = {
        param.opts[0]: (param.envvar or "")
        for param in root_command().params
        if param.param_type_name == "option"
    }
    in_readme = {}
    for option, env, *_ in table_rows(section(CLI_DOC, "### Global options")):
        (name,) = OPTION.findall(option)
        in_readme[name] = env.strip("`")
    assert in_readme == in_code


def test_the_commands_that_take_no_json_flag_are_the_ones_the_readme_names():
    (row,) = [
        cells
        for cells in table_rows(section(CLI_DOC, "### Global options"))
        if "--json" in cells[0]
    ]
    named = {span.removeprefix("ameide ") for span in spans(row[2]) if span.startswith("ameide ")}
    without = {
        path for path, command in commands(root_command()) if "--json" not in options_of(command)
    }
    assert without == named


def test_the_exit_code_table_matches_the_cli_error_table():
    rows = list(table_rows(section(CLI_DOC, "### Output and exit codes")))
    exits = [int(cells[0]) for cells in rows if cells[0].isdigit()]
    in_code_exits = {
        value
        for name, value in vars(cli_errors).items()
        if name.startswith("EXIT_") and isinstance(value, int)
    } | {rule.exit_code for rule in ERROR_TABLE.values()}
    assert sorted(exits) == sorted(in_code_exits)

    in_readme = {
        code: int(cells[0])
        for cells in rows
        if cells[0].isdigit()
        # the codes come first; a parenthesised remark may quote other names
        for code in re.findall(r"`([A-Z][A-Z_]+)`", cells[1].split("(")[0])
    }
    in_code = {cls.code: exit_code_of(cls) for cls in error_classes()} | VERDICT_CODES
    assert in_readme == in_code


def test_the_mcp_tool_lists_match_the_tool_registry():
    names = [tool.name for tool in TOOLS]
    readme_tools = [s for s in spans(section(README, "## MCP tools")) if s.startswith("memory.")]
    assert readme_tools == names
    assert {s for s in spans(README) if s.startswith("memory.")} <= set(names)

    rows = list(table_rows(section(MCP_DOC, "## Tools")))
    assert [cells[0].strip("`") for cells in rows] == names
    for tool, cells in zip(TOOLS, rows, strict=True):
        read_only = not cells[2].startswith("not read-only")
        assert read_only == tool.annotations.read_only_hint, tool.name
