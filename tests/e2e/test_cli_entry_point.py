"""The installed ``ameide`` console script, and the help every command and option carries."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from cli.main import app

AMEIDE = Path(sys.executable).parent / "ameide"


def run(*args: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AMEIDE_")}
    env["AMEIDE_HOME"] = str(home)
    return subprocess.run(
        [str(AMEIDE), *args], capture_output=True, text=True, env=env, check=False, timeout=120
    )


def test_the_installed_entry_point_initialises_answers_json_and_fails_with_one_line(tmp_path):
    home = tmp_path / "home"
    init = run("init", "--admin", "user:admin", "--json", home=home)
    assert init.returncode == 0, init.stderr
    assert json.loads(init.stdout)["admin"]["principal_id"] == "user:admin"

    created = run("repo", "create", "acme/eng/platform", home=home)
    assert created.returncode == 0, created.stderr
    assert "acme/eng/platform" in created.stdout

    missing = run("element", "show", "el_000000000000000000000000", home=home)
    assert missing.returncode == 3
    assert missing.stderr == "error: NOT_FOUND: element el_000000000000000000000000 not found\n"
    assert missing.stdout == ""


def _commands(group: typer.core.TyperGroup, path: tuple[str, ...] = ()):
    for name, command in group.commands.items():
        yield (*path, name), command
        if isinstance(command, typer.core.TyperGroup):
            yield from _commands(command, (*path, name))


ROOT = typer.main.get_command(app)
COMMANDS = dict(_commands(ROOT))


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_every_command_and_option_explains_itself_in_help(path):
    command = COMMANDS[path]
    assert (command.help or "").strip(), f"{' '.join(path)} has no help"
    for param in command.params:
        assert (getattr(param, "help", None) or "").strip(), f"{' '.join(path)} {param.name}"
    result = CliRunner().invoke(app, [*path, "--help"])
    assert result.exit_code == 0
    assert "Usage:" in result.stdout
    if not isinstance(command, typer.core.TyperGroup):  # the two servers too (issue 14)
        assert "json_" in {p.name for p in command.params}, f"{' '.join(path)} lacks --json"
        assert "--json" in result.stdout, f"{' '.join(path)} --help does not list --json"
    assert "<bool>" not in result.stdout  # on/off options read as flags, not as taking a value


def test_the_global_options_explain_themselves_in_help():
    for param in ROOT.params:
        assert (getattr(param, "help", None) or "").strip(), param.name


def test_the_home_is_private_to_its_owner(tmp_path):
    """The home, its database and its index hold every body and token hash: owner only."""
    home = tmp_path / "home"
    init = run("init", "--admin", "user:admin", "--json", home=home)
    assert init.returncode == 0, init.stderr
    assert run("repo", "create", "acme/eng/platform", home=home).returncode == 0
    assert run("index", "status", home=home).returncode == 0
    assert home.stat().st_mode & 0o777 == 0o700
    assert (home / "ameide.db").stat().st_mode & 0o777 == 0o600
    index_dirs = [p for p in home.iterdir() if p.is_dir()]
    assert index_dirs, "the index directory was not created"
    for directory in index_dirs:
        assert directory.stat().st_mode & 0o777 == 0o700, directory
    loose = home / "ameide.db"
    loose.chmod(0o644)  # a database made by an older version is tightened on the next start
    assert run("index", "status", home=home).returncode == 0
    assert loose.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("as_json", [False, True])
def test_a_reader_that_stops_reading_ends_the_command_quietly(tmp_path, as_json):
    """``ameide element show EL | head -1``: a closed pipe is not a failure (exit 0, nothing on
    stderr), for people's output and for JSON."""
    home = tmp_path / "home"
    assert run("init", "--admin", "user:admin", home=home).returncode == 0
    assert run("repo", "create", "acme/eng/platform", home=home).returncode == 0
    body = tmp_path / "big.md"
    body.write_text("# Big\n\n" + "a line of the runbook\n" * 20_000, encoding="utf-8")
    created = run(
        "element", "create", "--repo", "acme/eng/platform", "--title", "Big",
        "--body-file", str(body), "--json", home=home,
    )  # fmt: skip
    element_id = json.loads(created.stdout)["element"]["element_id"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("AMEIDE_")}
    env["AMEIDE_HOME"] = str(home)
    args = [str(AMEIDE), "element", "show", element_id, *(["--json"] if as_json else [])]
    with subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env) as proc:
        assert proc.stdout is not None
        assert proc.stderr is not None
        proc.stdout.readline()  # like `head -1`: read one line, then go away
        proc.stdout.close()
        stderr = proc.stderr.read()
        code = proc.wait(timeout=120)
    assert (code, stderr) == (0, b"")


def test_version_prints_the_package_version(tmp_path):
    from importlib.metadata import version

    result = run("--version", home=tmp_path / "home")
    assert (result.returncode, result.stdout) == (0, f"ameide {version('ameide-memory')}\n")
    assert not (tmp_path / "home").exists()  # it touches nothing


def test_shell_completion_is_offered_and_completes_commands(tmp_path):
    # the shell is detected from the parent process, as when a user types it in bash (the
    # "; true" keeps bash from exec-ing the command, so bash stays its parent)
    shown = subprocess.run(
        ["bash", "-c", f"{AMEIDE} --show-completion; true"], capture_output=True, text=True,
        check=False, timeout=60,
    )  # fmt: skip
    assert shown.returncode == 0, shown.stderr
    assert "_ameide_completion" in shown.stdout
    completing = {**os.environ, "_AMEIDE_COMPLETE": "complete_bash", "COMP_CWORD": "1"}
    completing["COMP_WORDS"] = "ameide propo"
    words = subprocess.run(
        [str(AMEIDE)], capture_output=True, text=True, check=False, timeout=60, env=completing
    )
    assert set(words.stdout.split()) == {"propose", "proposal"}


@pytest.mark.parametrize("server", ["serve", "mcp"])
def test_the_servers_report_a_failure_to_start_as_json_with_their_own_json_flag(tmp_path, server):
    result = run(server, "--json", home=tmp_path / "nowhere")
    assert result.returncode != 0
    assert json.loads(result.stdout)["error"]["code"] == "NOT_INITIALISED"
