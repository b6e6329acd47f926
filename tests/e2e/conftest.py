"""Fixtures for the CLI end-to-end tests: an initialised home and a repository with one
principal per role, driven through ``typer.testing.CliRunner`` in-process."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from cli.main import app

AMEIDE_ENV = (
    "AMEIDE_HOME",
    "AMEIDE_DATABASE_URL",
    "AMEIDE_PRINCIPAL",
    "AMEIDE_ON_BEHALF_OF",
    "AMEIDE_PURPOSE",
    "AMEIDE_SERVER",
    "AMEIDE_TOKEN",
)
ADMIN = "user:admin"


LOCAL_ONLY = ("init", "index rebuild", "ingest", "audit checkpoint", "eval")
"""What the operator runs on the server's home even in remote mode (refused over --server)."""


@dataclass
class Cli:
    """Runs ``ameide --home HOME [--as P] …`` in-process; in remote mode (``server`` set)
    ``ameide --home HOME --server URL --token <P's token> …`` against ``ameide serve``'s REST
    API over the same home, but for the operator's local-only commands."""

    home: Path
    runner: CliRunner
    server: str | None = None
    token_for: Callable[[str], str] | None = None

    def __call__(self, *args: str, as_: str | None = None, stdin: bytes | None = None) -> Result:
        argv = ["--home", str(self.home), *self.who(args, as_), *args]
        return self.runner.invoke(app, argv, input=stdin)

    def who(self, args: tuple[str, ...], as_: str | None) -> list[str]:
        """``--as P`` locally; remotely ``--server URL --token T`` with P's (default: the
        admin's) token."""
        if self.server is None or " ".join(args).startswith(LOCAL_ONLY):
            return ["--as", as_] if as_ else []
        assert self.token_for is not None
        return ["--server", self.server, "--token", self.token_for(as_ or ADMIN)]

    @property
    def remote(self) -> bool:
        """Whether commands go over REST."""
        return self.server is not None

    def ok(self, *args: str, as_: str | None = None, stdin: bytes | None = None) -> Any:
        """Run with ``--json``, require success, return the parsed document."""
        result = self(*args, "--json", as_=as_, stdin=stdin)
        assert result.exit_code == 0, f"{args}: {result.stderr or result.output}"
        return json.loads(result.stdout)

    @property
    def db(self) -> Path:
        """The embedded SQLite file."""
        return self.home / "ameide.db"

    def snapshot(self) -> dict[str, Any]:
        """Every table's rows, read directly: proves a failed command changed nothing."""
        with sqlite3.connect(self.db) as conn:
            tables = [
                r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            ]
            return {t: conn.execute(f'SELECT * FROM "{t}"').fetchall() for t in sorted(tables)}


@dataclass
class Repo:
    """A repository with one principal per role."""

    cli: Cli
    key: str
    curator: str = "user:carol"
    agent: str = "agent:coder-1"
    other_agent: str = "agent:docs-bot"
    publisher: str = "user:paul"
    auditor: str = "user:audrey"
    stranger: str = "user:mallory"

    def canonical(self, body: str = "# Testing SOP\n\nRun it.\n") -> tuple[str, str]:
        """Create a canonical Testing SOP; return (element_id, version_id)."""
        path = self.cli.home.parent / "sop.md"
        path.write_text(body, encoding="utf-8")
        out = self.cli.ok(
            "element", "create", "--repo", self.key, "--title", "Testing SOP",
            "--body-file", str(path), "--type-key", "ameide:sop", as_=self.curator,
        )  # fmt: skip
        return out["element"]["element_id"], out["version"]["version_id"]


def make_repo(cli: Cli) -> Repo:
    """``acme/eng/platform`` with curator, two agents, publisher and auditor."""
    r = Repo(cli, "acme/eng/platform")
    cli.ok("repo", "create", r.key)
    for principal, role in [
        (r.curator, "curator"),
        (r.agent, "agent"),
        (r.other_agent, "agent"),
        (r.publisher, "publisher"),
        (r.auditor, "auditor"),
    ]:
        cli.ok("grant", principal, role, "--repo", r.key)
    return r


def file_writer(directory: Path) -> Callable[[str, str | bytes], str]:
    """``write(name, content)`` → the path of a new file under ``directory``."""
    directory.mkdir(parents=True, exist_ok=True)

    def write(name: str, data: str | bytes) -> str:
        path = directory / name
        if isinstance(data, bytes):
            path.write_bytes(data)
        else:
            path.write_text(data, encoding="utf-8")
        return str(path)

    return write


def without_ameide_env(mp: pytest.MonkeyPatch) -> None:
    """No AMEIDE_* variable of the developer's shell leaks into a test."""
    for name in AMEIDE_ENV:
        mp.delenv(name, raising=False)


@pytest.fixture
def bare_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Cli:
    """A CLI pointed at a home that does not exist yet."""
    without_ameide_env(monkeypatch)
    return Cli(tmp_path / "home", CliRunner())


@contextmanager
def serving(cli: Cli) -> Iterator[Cli]:
    """``cli`` in remote mode: REST (``create_app``, a real uvicorn socket) over its
    initialised home, a token per principal minted on first use."""
    from runtime import build_app
    from server.rest.app import create_app
    from service.authz import Caller
    from service.settings import Settings
    from tests.e2e.rest_harness import running

    served = build_app(Settings(home=cli.home))
    tokens: dict[str, str] = {}

    def token_for(principal: str) -> str:
        if principal not in tokens:
            made = served.service.tokens.create(Caller(ADMIN), principal)
            tokens[principal] = made["token"]
        return tokens[principal]

    try:
        with running(create_app(served.service, settings=served.settings)) as url:
            yield Cli(cli.home, cli.runner, url, token_for)
    finally:
        served.close()


@pytest.fixture(params=["local", "remote"])
def mode(request: pytest.FixtureRequest) -> str:
    """Both modes of the CLI: on the home (local) and over ``--server`` (remote)."""
    return str(request.param)


@pytest.fixture
def cli(bare_cli: Cli, request: pytest.FixtureRequest) -> Iterator[Cli]:
    """A CLI on an initialised home whose default principal is the administrator; in a test
    that asks for ``mode``, also remote."""
    bare_cli.ok("init", "--admin", ADMIN)
    if "mode" in request.fixturenames and request.getfixturevalue("mode") == "remote":
        with serving(bare_cli) as remote:
            yield remote
    else:
        yield bare_cli


@pytest.fixture
def repo(cli: Cli) -> Repo:
    """A fresh repository with one principal per role."""
    return make_repo(cli)


@pytest.fixture
def files(tmp_path: Path) -> Callable[[str, str | bytes], str]:
    """``files(name, content)`` → a path under a scratch directory."""
    return file_writer(tmp_path / "files")


@pytest.fixture(scope="module")
def module_repo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Repo]:
    """One repository shared by a module whose tests each prove they changed nothing."""
    with pytest.MonkeyPatch.context() as mp:
        without_ameide_env(mp)
        cli = Cli(tmp_path_factory.mktemp("shared") / "home", CliRunner())
        cli.ok("init", "--admin", ADMIN)
        yield make_repo(cli)


@pytest.fixture(scope="module")
def module_files(module_repo: Repo) -> Callable[[str, str | bytes], str]:
    """``files`` for ``module_repo``."""
    return file_writer(module_repo.cli.home.parent / "files")
