"""One invocation's state: the global options, the app (built once), the caller, the output mode.

Every command starts with ``s = session(ctx, json_)``, calls one ``s.service`` method with
``s.caller`` and hands the result to ``s.emit``. With ``--server`` (remote mode) ``s.service`` is
a ``cli.remote.RemoteService``: the same use cases over the server's REST API, as the token's
holder; what needs the database (``initialise``, ``app``) is refused as local-only.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import typer

from cli import output
from cli.entry import started
from cli.errors import NotInitialised, local_only
from domain.errors import InvalidArgument, Unauthenticated
from edge.errors import Unavailable, one_line
from edge.results import as_json

if TYPE_CHECKING:  # the stack behind the service is imported on first use: --help stays fast
    from cli.remote import RemoteService
    from runtime import App
    from service.app import MemoryService
    from service.authz import Caller
    from service.settings import Settings

TOOL_ID = "ameide-cli"
CONFIG_FILE = "config.json"
SERVES_LOCALLY = {
    "ameide serve": "it serves the database",
    "ameide mcp": "it serves the database over stdio",
    "ameide test": "to test a server, give it as `ameide test --target URL`",
}
"""Commands that would otherwise ignore --server: refused in remote mode, with the reason."""
REMOTE_PRINCIPAL = "service:token-holder"
"""The caller's placeholder in remote mode (the RemoteService ignores it: the token decides)."""


@dataclass
class CliState:
    """Global options of this invocation and the lazily built app."""

    home: Path = Path(".ameide")
    database_url: str | None = None
    principal: str | None = None
    on_behalf_of: str | None = None
    purpose: str | None = None
    json: bool = False
    background: bool = False  # long-running commands (serve, mcp) set it before the service
    server: str | None = None  # remote mode: the URL of `ameide serve` (--server)
    token: str | None = None  # remote mode: --token / AMEIDE_TOKEN (else the login file)
    command: str = "ameide"
    _remote: RemoteService | None = field(default=None, repr=False)
    _app: App | None = field(default=None, repr=False)
    _settings: Settings | None = field(default=None, repr=False)

    # -- the app ---------------------------------------------------------------------------
    @property
    def settings(self) -> Settings:
        """Settings from the global options (read once)."""
        from service.settings import Settings

        if self._settings is None:
            self._settings = Settings(
                home=self.home, database_url=self.database_url, principal=self.principal
            )
        return self._settings

    @property
    def service(self) -> MemoryService:
        """The service, on a database that must already be initialised (never migrates); in
        remote mode the same use cases over the server's REST API."""
        from runtime import build_app

        if self.server:
            return cast("MemoryService", self._remote_service())
        if self._app is None:
            ensure_initialised(self.settings)
            self._app = build_app(self.settings, background=self.background)
            started()  # the stack is loaded: the garbage collector resumes (cli.entry)
        return self._app.service

    def _remote_service(self) -> RemoteService:
        from cli.credentials import resolve_token, server_key
        from cli.remote import RemoteService

        if self._remote is None:
            assert self.server is not None
            if self.principal:
                raise InvalidArgument(
                    "--as / AMEIDE_PRINCIPAL is not used with --server: the token says who you "
                    "are (see `ameide whoami`); use --on-behalf-of to act for someone",
                    field="as",
                )
            server = server_key(self.server)
            self._remote = RemoteService(
                server,
                resolve_token(server, self.token),
                command=self.command,
                on_behalf_of=self.on_behalf_of,
                purpose=self.purpose,
            )
            started()
        return self._remote

    @property
    def app(self) -> App:
        """The app behind ``service`` (for what a process manages besides operations)."""
        if self.server:
            raise local_only(self.command)
        self.service  # noqa: B018 - builds the app on first use
        assert self._app is not None
        return self._app

    def initialise(self) -> MemoryService:
        """Build the app and run the migrations (``ameide init`` only)."""
        from runtime import build_app

        if self.server:
            raise local_only(self.command)
        url = self.settings.resolved_database_url
        try:
            self._app = build_app(self.settings, migrate=True, background=self.background)
        except Exception as exc:  # driver and filesystem errors vary; report them in one line
            raise unavailable("cannot initialise", url, exc) from None
        started()
        return self._app.service

    def close(self) -> None:
        """Release the database connections."""
        if self._app is not None:
            self._app.close()
            self._app = None
        if self._remote is not None:
            self._remote.close()
            self._remote = None

    # -- who is asking ---------------------------------------------------------------------
    @property
    def caller(self) -> Caller:
        """``--as`` / ``AMEIDE_PRINCIPAL``, else the principal saved by ``ameide init --admin``."""
        from service.authz import Caller

        if self.server:  # never sent: the server knows the caller by its token
            self._remote_service()
            return Caller(
                REMOTE_PRINCIPAL, self.on_behalf_of, purpose=self.purpose, tool_id=TOOL_ID
            )
        principal = self.principal or self.load_config().get("principal")
        if not principal:
            raise Unauthenticated("no principal: pass --as or set AMEIDE_PRINCIPAL")
        return Caller(
            str(principal),
            on_behalf_of=self.on_behalf_of,
            purpose=self.purpose,
            tool_id=TOOL_ID,
        )

    @property
    def config_path(self) -> Path:
        """``HOME/config.json``: the local defaults."""
        return self.home / CONFIG_FILE

    def load_config(self) -> dict[str, Any]:
        """The saved defaults ({} when there are none)."""
        try:
            data = json.loads(self.config_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            raise InvalidArgument(f"cannot read {self.config_path}: {exc}") from None
        if not isinstance(data, dict):
            raise InvalidArgument(f"{self.config_path} does not hold a JSON object")
        return data

    def save_principal(self, principal: str) -> Path:
        """Remember ``principal`` as the default local principal."""
        config = {**self.load_config(), "principal": principal}
        self.home.mkdir(mode=0o700, parents=True, exist_ok=True)
        self.config_path.write_text(json.dumps(config, indent=2) + "\n", encoding="utf-8")
        return self.config_path

    # -- output ----------------------------------------------------------------------------
    def emit(self, result: Any, human: Callable[[Any], None]) -> None:
        """Print ``result`` as the JSON every surface emits (``edge.results.as_json``): one
        document with ``--json``, else ``human`` of it."""
        document = as_json(result)
        if self.json:
            output.print_json(document)
        else:
            human(document)


def session(ctx: typer.Context, json_: bool = False) -> CliState:
    """This invocation's state; ``json_`` is the command's own ``--json`` flag."""
    state = ctx.find_object(CliState)
    if state is None:  # a command invoked outside ``cli.main.app`` (never in practice)
        state = ctx.ensure_object(CliState)
    state.json = state.json or json_
    state.command = ctx.command_path
    if state.server and state.command in SERVES_LOCALLY:
        raise local_only(state.command, SERVES_LOCALLY[state.command])
    return state


def ensure_initialised(settings: Settings) -> None:
    """Fail with one clear line unless the database exists and is at the schema head."""
    from runtime import database_revision

    url = settings.resolved_database_url
    db_file = sqlite_file(url)
    if db_file is not None and not db_file.exists():
        raise NotInitialised(f"not initialised: run `ameide init` (no database at {db_file})")
    try:
        current = database_revision(url)
    except Exception as exc:  # driver errors vary by dialect; all mean "cannot open it"
        raise unavailable("cannot open", url, exc) from None
    head = schema_head()
    if current != head:
        raise NotInitialised(
            f"not initialised: run `ameide init` (the database at {redact(url)} is at schema "
            f"revision {current or 'none'}, this version needs {head})"
        )


def unavailable(doing: str, url: str, exc: Exception) -> Unavailable:
    """A one-line error about a database that cannot be used (password redacted)."""
    detail = one_line(str(exc)).replace(url, redact(url))[:300]
    return Unavailable(f"{doing} the database {redact(url)}: {type(exc).__name__}: {detail}")


def sqlite_file(url: str) -> Path | None:
    """The file behind a SQLite URL (None for other databases and in-memory SQLite)."""
    scheme, _, rest = url.partition("://")
    if not scheme.startswith("sqlite"):
        return None
    path = rest[1:].split("?", 1)[0]  # drop the empty host: sqlite:///relative, sqlite:////abs
    return Path(path) if path and path != ":memory:" else None


def redact(url: str) -> str:
    """A database URL without its password."""
    return re.sub(r"(://[^:/@]+):[^@]*@", r"\1:***@", url)


def schema_head() -> str:
    """The schema revision this version of the code needs."""
    from runtime import SCHEMA_REVISION

    return SCHEMA_REVISION
