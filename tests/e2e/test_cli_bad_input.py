"""Bad input gives one line on stderr, a non-zero exit code from one table, and changes nothing."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cli.main import app
from tests.e2e.conftest import ADMIN, serving

MISSING = "000000000000000000000000"
TWO_MIB = 2 * 1024 * 1024


@pytest.fixture(scope="module")
def world(module_repo, module_files):
    """A repository with an element and an open proposal, shared by the module: every case
    here fails and proves it changed nothing."""
    repo, files = module_repo, module_files
    element, v1 = repo.canonical()
    ok = files("ok.md", "# Testing SOP\n\nRun it better.\n")
    proposal = repo.cli.ok(
        "propose", "--repo", repo.key, "--element", element, "--target-version", v1,
        "--body-file", ok, "--summary", "better", as_=repo.agent,
    )["proposal_id"]  # fmt: skip
    return {
        "repo": repo,
        "key": repo.key,
        "element": element,
        "v1": v1,
        "proposal": proposal,
        "ok": ok,
        "empty": files("empty.md", "  \n\n"),
        "huge": files("huge.md", "a" * (TWO_MIB + 1)),
        "latin1": files("latin1.md", b"# Caf\xe9\n"),
        "missing": str(repo.cli.home.parent / "nowhere.md"),
        # JSON escapes that decode to lone surrogates: json.loads takes them, nothing can store them
        "surrogate": files("surrogate.json", '{"k": "\\ud800"}'),
        "nested": files("nested.json", '{"tags": ["ok", "tag\\ud800x"]}'),
        "bad_key": files("key.json", '{"\\udfff": 1}'),
    }


def create(w, *extra):
    return ("element", "create", "--repo", w["key"], "--title", "T", *extra)


CASES = {
    "an unknown element id": (
        lambda w: ("element", "show", f"el_{MISSING}"),
        3, "NOT_FOUND", f"element el_{MISSING} not found",
    ),
    "a malformed element id": (
        lambda w: ("element", "history", "nope"), 2, "INVALID_ARGUMENT", "malformed element id",
    ),
    "an unknown proposal id": (
        lambda w: ("accept", f"prop_{MISSING}"), 3, "NOT_FOUND", f"proposal prop_{MISSING}",
    ),
    "an unknown baseline id": (
        lambda w: ("promote", f"bl_{MISSING}", "--repo", w["key"]), 3, "NOT_FOUND", "baseline",
    ),
    "a malformed TENANT/ORG/REPO": (
        lambda w: ("element", "create", "--repo", "acme/eng", "--title", "T",
                   "--body-file", w["ok"]),
        2, "INVALID_ARGUMENT", "malformed repository 'acme/eng'",
    ),
    "an empty body file": (
        lambda w: create(w, "--body-file", w["empty"]), 2, "INVALID_ARGUMENT", "body is empty",
    ),
    "a body over 2 MiB": (
        lambda w: create(w, "--body-file", w["huge"]),
        2, "INVALID_ARGUMENT", f"body is {TWO_MIB + 1} bytes; the limit is {TWO_MIB} bytes (2 MiB)",
    ),
    "a body file that is not UTF-8": (
        lambda w: create(w, "--body-file", w["latin1"]),
        2, "INVALID_ARGUMENT", "latin1.md is not valid UTF-8: invalid continuation byte at byte "
        "offset 5",
    ),
    "metadata holding a lone surrogate": (
        lambda w: create(w, "--body-file", w["ok"], "--metadata-file", w["surrogate"]),
        2, "INVALID_ARGUMENT", "metadata.k is not valid Unicode text (it holds a lone surrogate)",
    ),
    "metadata holding a lone surrogate in a list": (
        lambda w: create(w, "--body-file", w["ok"], "--metadata-file", w["nested"]),
        2, "INVALID_ARGUMENT", "metadata.tags[1] is not valid Unicode text",
    ),
    "a metadata key holding a lone surrogate": (
        lambda w: create(w, "--body-file", w["ok"], "--metadata-file", w["bad_key"]),
        2, "INVALID_ARGUMENT", "metadata key '\\udfff' is not valid Unicode text",
    ),
    "a proposal whose metadata holds a lone surrogate": (
        lambda w: ("propose", "--repo", w["key"], "--element", w["element"],
                   "--target-version", w["v1"], "--body-file", w["ok"], "--summary", "s",
                   "--metadata-file", w["surrogate"]),
        2, "INVALID_ARGUMENT", "metadata.k is not valid Unicode text",
    ),
    "a body file that does not exist": (
        lambda w: create(w, "--body-file", w["missing"]), 2, "INVALID_ARGUMENT", "does not exist",
    ),
    "an unknown role": (
        lambda w: ("grant", "user:zed", "wizard", "--repo", w["key"]),
        2, "INVALID_ARGUMENT", "unknown role 'wizard'",
    ),
    "an unknown classification": (
        lambda w: create(w, "--body-file", w["ok"], "--classification", "secret"),
        2, "INVALID_ARGUMENT", "unknown classification 'secret'",
    ),
    "two grant scopes at once": (
        lambda w: ("grant", "user:zed", "reader", "--repo", w["key"], "--global"),
        2, "INVALID_ARGUMENT", "give exactly one scope",
    ),
    "a proposal without a pinned target version": (
        lambda w: ("propose", "--repo", w["key"], "--element", w["element"],
                   "--body-file", w["ok"], "--summary", "unpinned"),
        2, "INVALID_ARGUMENT", "an UPDATE proposal must be pinned",
    ),
    "a reject without a rationale": (
        lambda w: ("reject", w["proposal"]), 2, "INVALID_ARGUMENT", "Missing option '--rationale'",
    ),
    "a reject with a blank rationale": (
        lambda w: ("reject", w["proposal"], "--rationale", "  "),
        2, "INVALID_ARGUMENT", "rationale is required",
    ),
    "a malformed --since": (
        lambda w: ("history", "--repo", w["key"], "--since", "yesterday"),
        2, "INVALID_ARGUMENT", "malformed --since 'yesterday': expected an ISO-8601",
    ),
    "an impossible --as-of date": (
        lambda w: ("published", "--repo", w["key"], "--as-of", "2025-13-01"),
        2, "INVALID_ARGUMENT", "malformed --as-of '2025-13-01'",
    ),
    "a malformed --until": (
        lambda w: ("history", "--repo", w["key"], "--until", "12/05/2025"),
        2, "INVALID_ARGUMENT", "malformed --until",
    ),
    "a malformed principal": (
        lambda w: ("--as", "bob", "history", "--repo", w["key"]),
        2, "INVALID_ARGUMENT", "malformed principal 'bob'",
    ),
    "an unknown option": (
        lambda w: ("history", "--repo", w["key"], "--colour"),
        2, "INVALID_ARGUMENT", "No such option",
    ),
    "an unknown command": (lambda w: ("frobnicate",), 2, "INVALID_ARGUMENT", "No such command"),
}  # fmt: skip


@pytest.mark.parametrize(("build", "exit_code", "code", "fragment"), CASES.values(), ids=CASES)
def test_bad_input_gives_a_one_line_error_and_changes_nothing(
    world, build, exit_code, code, fragment
):
    cli = world["repo"].cli
    before = cli.snapshot()

    result = cli(*build(world), as_="user:admin")

    assert result.exit_code == exit_code
    assert re.fullmatch(rf"error: {code}: [^\n]+\n", result.stderr), result.stderr
    assert fragment in result.stderr
    assert result.stdout == ""
    assert cli.snapshot() == before


@pytest.fixture(scope="module")
def over_the_server(world):
    """The module's home served over REST, the administrator's token minted beforehand (so
    the cases below write nothing, a token included)."""
    with serving(world["repo"].cli) as remote:
        remote.token_for(ADMIN)
        yield remote


REMOTE_CASES = {name: case for name, case in CASES.items() if name != "a malformed principal"}
"""Every case but ``--as bob``: over ``--server`` the token says who you are and ``--as`` is
refused (test_cli_remote)."""


@pytest.mark.parametrize(
    ("build", "exit_code", "code", "fragment"), REMOTE_CASES.values(), ids=REMOTE_CASES
)
def test_bad_input_over_the_server_gives_the_same_code_and_exit_and_changes_nothing(
    world, over_the_server, build, exit_code, code, fragment
):
    """The same cases in remote mode (``--server URL --token T``): input the CLI checks itself
    fails before any request; the rest comes back from REST as the same code, exit code and
    words."""
    cli = over_the_server
    before = cli.snapshot()

    result = cli(*build(world))

    assert result.exit_code == exit_code, result.stderr
    assert re.fullmatch(rf"error: {code}: [^\n]+\n", result.stderr), result.stderr
    assert fragment in result.stderr
    assert result.stdout == ""
    assert cli.snapshot() == before


def test_with_json_an_error_is_also_one_json_document_on_stdout(world):
    cli = world["repo"].cli
    result = cli("element", "show", f"el_{MISSING}", "--json")
    assert result.exit_code == 3
    assert json.loads(result.stdout) == {
        "error": {
            "code": "NOT_FOUND",
            "message": f"element el_{MISSING} not found",
            "details": {"element_id": f"el_{MISSING}"},
        }
    }
    assert result.stderr.count("\n") == 1


def test_a_usage_error_with_json_is_reported_as_json_too(world):
    result = world["repo"].cli("reject", world["proposal"], "--json")
    assert result.exit_code == 2
    assert json.loads(result.stdout)["error"]["code"] == "INVALID_ARGUMENT"


def test_a_body_can_be_read_from_stdin_and_must_be_utf8_there_too(repo):
    args = ("element", "create", "--repo", repo.key, "--title", "T", "--body-file", "-")
    bad = repo.cli(*args, stdin=b"ok\n\xff", as_=repo.curator)
    assert bad.exit_code == 2
    assert "body file stdin is not valid UTF-8" in bad.stderr
    assert "byte offset 3" in bad.stderr
    good = repo.cli.ok(*args, stdin=b"# Hi\n", as_=repo.curator)
    assert good["version"]["seq"] == 1


def test_a_stranger_cannot_tell_an_existing_repository_from_a_missing_one(world):
    repo = world["repo"]
    cli = repo.cli
    for command in (
        ("history", "--repo", "{repo}"),
        ("proposal", "list", "--repo", "{repo}"),
        ("propose", "--repo", "{repo}", "--element", world["element"],
         "--target-version", world["v1"], "--body-file", world["ok"], "--summary", "s"),
    ):  # fmt: skip
        answers = []
        for key in (repo.key, "acme/eng/no-such-repo"):
            result = cli(*(a.format(repo=key) for a in command), as_=repo.stranger)
            answers.append((result.exit_code, result.stderr.replace(key, "REPO")))
        assert answers[0] == answers[1]
        assert answers[0][0] == 3
        assert answers[0][1].startswith("error: NOT_FOUND: ")


def test_a_visible_action_that_is_not_allowed_is_permission_denied(world):
    repo = world["repo"]
    result = repo.cli("accept", world["proposal"], as_=repo.auditor)
    assert result.exit_code in (3, 4)  # auditors may not even see the queue
    result = repo.cli("baseline", "create", "--repo", repo.key, as_=repo.curator)
    assert result.exit_code == 4
    assert result.stderr.startswith("error: PERMISSION_DENIED: ")


def test_without_a_principal_commands_say_how_to_choose_one(bare_cli):
    bare_cli.ok("init")
    result = bare_cli("repo", "create", "acme/eng/platform")
    assert result.exit_code == 7
    assert result.stderr == (
        "error: UNAUTHENTICATED: no principal: pass --as or set AMEIDE_PRINCIPAL\n"
    )


def test_the_principal_and_home_can_come_from_the_environment(cli, monkeypatch):
    monkeypatch.setenv("AMEIDE_HOME", str(cli.home))
    monkeypatch.setenv("AMEIDE_PRINCIPAL", "user:admin")
    result = cli.runner.invoke(app, ["repo", "create", "acme/eng/env", "--json"])
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["repository_id"] == "acme/eng/env"


def test_commands_refuse_an_uninitialised_home_without_creating_it(bare_cli):
    result = bare_cli("history", "--repo", "acme/eng/platform", as_="user:admin")
    assert result.exit_code == 5
    assert re.fullmatch(r"error: NOT_INITIALISED: not initialised: run `ameide init`[^\n]*\n",
                        result.stderr)  # fmt: skip
    assert not bare_cli.home.exists()


def test_init_is_idempotent_and_keeps_the_first_administrator(cli):
    again = cli.ok("init", "--admin", "user:admin")
    assert again["admin"]["created"] is False
    other = cli("init", "--admin", "user:eve")
    assert other.exit_code == 4
    assert json.loads((cli.home / "config.json").read_text())["principal"] == "user:admin"


AMEIDE = Path(sys.executable).parent / "ameide"


def _run_bytes(home: Path, *argv: bytes, env: dict[bytes, bytes] | None = None):
    """The installed ``ameide`` with raw argument bytes, as a shell passes ``$'p\\xff'``."""
    environ = {k: v for k, v in os.environb.items() if not k.startswith(b"AMEIDE_")}
    environ.update({b"AMEIDE_HOME": os.fsencode(home), **(env or {})})
    return subprocess.run(
        [os.fsencode(AMEIDE), *argv], capture_output=True, env=environ, timeout=120, check=False
    )


def test_an_argument_that_is_not_utf8_is_refused_in_one_line_naming_it(world):
    """``ameide --purpose $'p\\xff' context …`` printed a Rich traceback (the purpose reached
    the database as a lone surrogate); every such argument is now INVALID_ARGUMENT, exit 2."""
    cli, key = world["repo"].cli, world["key"].encode()
    before = cli.snapshot()
    as_admin = (b"--as", b"user:admin")

    purpose = _run_bytes(
        cli.home, *as_admin, b"--purpose", b"p\xff", b"context", b"--repo", key, b"x"
    )
    assert (purpose.returncode, purpose.stdout) == (2, b"")
    assert purpose.stderr == b"error: INVALID_ARGUMENT: --purpose is not valid UTF-8 text: p\\xff\n"

    joined = _run_bytes(cli.home, *as_admin, b"--purpose=p\xff", b"context", b"--repo", key, b"x")
    assert joined.stderr == purpose.stderr

    query = _run_bytes(cli.home, *as_admin, b"context", b"--json", b"--repo", key, b"zebra\xfe")
    assert query.returncode == 2
    assert json.loads(query.stdout)["error"] == {
        "code": "INVALID_ARGUMENT",
        "message": "an argument is not valid UTF-8 text: zebra\\xfe",
        "details": {"field": "argument"},
    }

    # from the environment the text reaches the service, which refuses it too
    env = _run_bytes(cli.home, *as_admin, b"context", b"--repo", key, b"x",
                     env={b"AMEIDE_PURPOSE": b"p\xff"})  # fmt: skip
    assert env.returncode == 2
    assert env.stderr == (
        b"error: INVALID_ARGUMENT: purpose is not valid Unicode text (it holds a lone surrogate)\n"
    )
    assert cli.snapshot() == before
