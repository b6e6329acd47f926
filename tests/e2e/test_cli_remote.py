"""Remote mode (``--server`` / ``--token``, ``ameide login``): one scenario run on a local home
and over REST prints the same text and JSON, with the same error codes and exit codes; the
database's commands are refused as local-only; tokens stay secret."""

from __future__ import annotations

import difflib
import json
import os
import re
import stat
from pathlib import Path
from typing import Any

import pytest
from fastapi import FastAPI
from fastapi.responses import HTMLResponse
from typer.testing import CliRunner

from cli.main import app
from tests.e2e.conftest import ADMIN, Cli, Repo, make_repo, serving, without_ameide_env
from tests.e2e.rest_harness import running

ID = re.compile(r"\b[a-z]{1,5}_[0-9a-f]{16,}\b")
INSTANT = re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?")
CHAINED = re.compile(r'"(event_id|hash|prev_hash|content_sha256)": [^,\n]+')
"""Differ by home: global event ids (the remote run mints tokens, global events, first), and
hashes over content holding generated ids and instants."""
TOOL = re.compile(r'"tool_id": "ameide-(?:cli|rest)"')
SOP = "# Testing SOP\n\nRun the unit tests before every merge.\n"


def _normalise(transcript: list[str]) -> list[str]:
    """Generated ids numbered by first appearance, instants masked (same lengths kept, so the
    tables' widths still compare); what differs by home (:data:`CHAINED`) and the recorded
    ``tool_id`` (``ameide-cli`` locally; remotely ``ameide-rest``, the surface called) masked."""
    names: dict[str, str] = {}

    def rename(m: re.Match[str]) -> str:
        named = names.setdefault(m.group(), f"id{len(names):03d}")
        return named.ljust(len(m.group()), "_")

    out = []
    for entry in transcript:
        command, _, rest = entry.partition("\n")
        rest = CHAINED.sub(r'"\1": "*"', TOOL.sub('"tool_id": "*"', rest))
        text = f"{command}\n{rest}"
        out.append(INSTANT.sub(lambda m: "T" * len(m.group()), ID.sub(rename, text)))
    return out


def _scenario(repo: Repo, files: Path) -> list[str]:
    """A curator's day (and an agent's, a publisher's, an auditor's), every output recorded:
    reads in text and JSON, writes in JSON, failures with their exit code and stderr."""
    cli, out = repo.cli, []

    def run(*args: str, as_: str, both: bool = True) -> Any:
        for flags in ((), ("--json",)) if both else (("--json",),):
            r = cli(*args, *flags, as_=as_)
            command = " ".join(args + flags).replace(str(files), ".")
            out.append(f"$ {command} [{as_}] -> {r.exit_code}\n{r.stdout}{r.stderr}")
        return json.loads(r.stdout) if r.exit_code == 0 else None

    def write(name: str, text: str) -> str:
        (files / name).write_text(text, encoding="utf-8")
        return str(files / name)

    element, v1 = repo.canonical(SOP)
    cut = ("baseline", "create", "--repo", repo.key, "--name")
    old = run(*cut, "r1", as_=repo.publisher, both=False)
    update = write("u.md", SOP + "\n## Phase 3\n\nRun e2e.\n")
    pin = ("--element", element, "--target-version", v1, "--body-file", update)
    p = run("propose", "--repo", repo.key, *pin, "--summary", "p3", as_=repo.agent, both=False)
    late = run(
        "propose", "--repo", repo.key, *pin, "--summary", "l", as_=repo.other_agent, both=False
    )
    run("proposal", "list", "--repo", repo.key, as_=repo.curator)
    run("proposal", "show", p["proposal_id"], as_=repo.curator)
    run("accept", p["proposal_id"], "--dry-run", as_=repo.curator)
    run("accept", p["proposal_id"], as_=repo.agent, both=False)  # PERMISSION_DENIED
    run("accept", p["proposal_id"], "--rationale", "ok", as_=repo.curator, both=False)
    run("accept", late["proposal_id"], as_=repo.curator, both=False)  # STALE_PROPOSAL
    run("accept", late["proposal_id"], "--dry-run", as_=repo.curator)  # exits like accept would
    rebased = run("rebase", late["proposal_id"], as_=repo.other_agent, both=False)
    run("withdraw", rebased["proposal_id"], as_=repo.other_agent, both=False)
    new = run(
        "baseline", "create", "--repo", repo.key, "--name", "r2", as_=repo.publisher, both=False
    )
    run("baseline", "diff", old["baseline_id"], new["baseline_id"], as_=repo.publisher)
    run("promote", new["baseline_id"], "--repo", repo.key, as_=repo.publisher, both=False)
    run("published", "--repo", repo.key, as_=repo.publisher)
    run("context", "--repo", repo.key, "unit tests merge", as_=repo.agent)
    run("element", "show", element, as_=repo.curator)
    run("element", "show", element, as_=repo.stranger)  # NOT_FOUND, like a missing one
    run("element", "history", element, as_=repo.curator)
    run("element", "list", "--repo", repo.key, as_=repo.curator)
    run("whoami", as_=repo.curator)
    run("repo", "list", as_=repo.curator)
    run("history", "--repo", repo.key, as_=repo.auditor)
    run("audit", "verify", "--repo", repo.key, as_=repo.auditor)
    run("search", "--repo", repo.key, "unit tests", as_=repo.agent)
    exported = cli("audit", "export", "--repo", repo.key, "--format", "json", as_=repo.auditor)
    out.append(f"$ audit export --format json -> {exported.exit_code}\n{exported.stdout}")
    return out


def _fresh(root: Path) -> Cli:
    cli = Cli(root / "home", CliRunner())
    cli.ok("init", "--admin", ADMIN)
    return cli


def test_one_scenario_prints_the_same_text_json_and_exit_codes_locally_and_over_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    without_ameide_env(monkeypatch)
    monkeypatch.setenv("COLUMNS", "200")
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    local = _scenario(make_repo(_fresh(tmp_path / "a")), tmp_path / "a")
    with serving(_fresh(tmp_path / "b")) as remote_cli:
        remote = _scenario(make_repo(remote_cli), tmp_path / "b")
        secrets = [remote_cli.token_for(p) for p in (ADMIN, "user:carol", "agent:coder-1")]
    assert len(local) == len(remote) == 43
    for here, there in zip(_normalise(local), _normalise(remote), strict=True):
        diff = difflib.unified_diff(here.splitlines(), there.splitlines(), "local", "remote")
        assert here == there, "\n".join(diff)
    codes = [int(t.split("\n", 1)[0].rsplit(" ", 1)[1]) for t in remote]
    assert sorted(set(codes)) == [0, 3, 4, 5]  # found, missing, forbidden, stale
    assert not any(secret in t for secret in secrets for t in remote)


@pytest.fixture
def remote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    without_ameide_env(monkeypatch)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("COLUMNS", "300")
    with serving(_fresh(tmp_path)) as cli:
        yield cli


def _bare(cli: Cli, *args: str, stdin: str | None = None) -> Any:
    """``ameide ARGS`` with no --as, --server nor --token of the harness."""
    return cli.runner.invoke(app, ["--home", str(cli.home), *args], input=stdin)


@pytest.mark.parametrize(
    "command",
    [
        ["init"],
        ["index", "rebuild"],
        ["audit", "checkpoint", "--global"],
        ["serve"],
    ],
)
def test_a_command_that_needs_the_database_is_refused_over_rest_as_local_only(
    remote: Cli, command: list[str]
) -> None:
    r = _bare(remote, "--server", remote.server or "", "--token", remote.token_for(ADMIN), *command)
    assert r.exit_code == 2
    name = " ".join(command[:2] if command[0] in ("index", "audit") else command[:1])
    why = "it serves the database" if name == "serve" else "it needs the database"
    assert r.stderr == (
        f"error: LOCAL_ONLY: `ameide {name}` is local-only ({why}): run it without --server / "
        "AMEIDE_SERVER, on the server's home or database\n"
    )


def test_login_saves_the_token_0600_and_later_commands_use_it_never_printing_it(
    remote: Cli, tmp_path: Path
) -> None:
    url, token = remote.server or "", remote.token_for("user:carol")
    r = _bare(remote, "login", url + "/", stdin=token + "\n")
    assert r.exit_code == 0, r.stderr
    path = tmp_path / "config" / "ameide" / "credentials.json"
    assert r.stdout.startswith(f"logged in to {url} as user:carol (token saved in {path})")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert json.loads(path.read_text())["servers"][url]["token"] == token

    me = _bare(remote, "--server", url, "whoami", "--json")
    assert json.loads(me.stdout)["principal_id"] == "user:carol"
    admin = _bare(remote, "--server", url, "--token", remote.token_for(ADMIN), "whoami", "--json")
    assert json.loads(admin.stdout)["principal_id"] == ADMIN  # --token wins over the file

    os.chmod(path, 0o644)
    refused = _bare(remote, "--server", url, "whoami")
    assert refused.exit_code == 5
    assert refused.stderr == (
        f"error: FAILED_PRECONDITION: {path} is accessible by group or others (mode 0644): "
        f"refusing to use the tokens in it; run `chmod 600 {path}`\n"
    )
    for result in (r, me, refused):
        assert token not in result.stdout + result.stderr

    os.chmod(path, 0o600)
    assert _bare(remote, "logout", url).stdout == f"forgot the token of {url}\n"
    assert _bare(remote, "--server", url, "whoami").exit_code == 7
    assert url not in json.loads(path.read_text())["servers"]


def test_a_bad_token_no_token_and_as_are_refused_without_echoing_the_token(remote: Cli) -> None:
    url = remote.server or ""
    bad = _bare(remote, "--server", url, "--token", "amt_not-a-real-token", "whoami")
    assert bad.exit_code == 7
    assert bad.stderr.startswith("error: UNAUTHENTICATED: ")
    assert "amt_not" not in bad.stderr
    none = _bare(remote, "--server", url, "whoami")
    assert none.exit_code == 7
    assert none.stderr == (
        f"error: UNAUTHENTICATED: no token for {url}: pass --token, set AMEIDE_TOKEN "
        f"or run `ameide login {url}`\n"
    )
    refused = _bare(remote, "login", url, stdin="amt_not-a-real-token\n")
    assert refused.exit_code == 7
    assert "amt_not" not in refused.stdout + refused.stderr
    assert not (remote.home.parent / "config").exists()  # nothing saved
    ftp = _bare(remote, "--server", "ftp://example.com", "--token", "amt_x", "whoami")
    assert ftp.exit_code == 2
    assert "--server must be an http(s) URL" in ftp.stderr
    claimed = _bare(
        remote, "--server", url, "--token", remote.token_for(ADMIN), "--as", "user:x", "whoami"
    )
    assert claimed.exit_code == 2
    assert "--as / AMEIDE_PRINCIPAL is not used with --server" in claimed.stderr


def test_an_unreachable_server_is_one_line_unavailable(remote: Cli) -> None:
    web = FastAPI()
    web.get("/{path:path}", response_class=HTMLResponse)(lambda path: "<html>a web site</html>")
    with running(web) as url:
        not_rest = _bare(remote, "--server", url, "--token", "amt_x", "whoami")
    assert not_rest.exit_code == 8
    assert not_rest.stderr == (
        f"error: UNAVAILABLE: the server {url} answered HTTP 200 without JSON: is --server the "
        "URL of `ameide serve`?\n"
    )
    r = _bare(remote, "--server", "http://127.0.0.1:9", "--token", "amt_x", "whoami")
    assert r.exit_code == 8
    assert (
        r.stderr == "error: UNAVAILABLE: cannot reach the server http://127.0.0.1:9: ConnectError\n"
    )
