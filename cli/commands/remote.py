"""Remote mode's credentials: ``ameide login URL`` and ``ameide logout URL``."""

from __future__ import annotations

import getpass
import sys
from typing import Annotated

import typer

from cli import output
from cli.credentials import forget_token, save_token, server_key
from cli.options import JsonFlag
from cli.remote import RemoteService
from cli.session import session
from domain.errors import InvalidArgument

PANEL = "Setup and access"

ServerUrl = Annotated[
    str, typer.Argument(metavar="URL", help="The server, e.g. https://memory.example.com.")
]


def register(app: typer.Typer) -> None:
    """Attach this group's commands to the root app."""
    app.command("login", rich_help_panel=PANEL)(login)
    app.command("logout", rich_help_panel=PANEL)(logout)


def _read_token() -> str:
    if sys.stdin.isatty():
        return getpass.getpass("token: ").strip()
    return sys.stdin.readline().strip()


def login(ctx: typer.Context, url: ServerUrl, json_: JsonFlag = False) -> None:
    """Save a bearer token for URL (asked for, or read from stdin), after checking it with the
    server: later `ameide --server URL …` commands use it. The file is created 0600."""
    s = session(ctx, json_)
    server = server_key(url)
    token = s.token or _read_token()
    if not token:
        raise InvalidArgument("no token given (paste the `amt_…` of `ameide token create`)")
    remote = RemoteService(server, token, command=s.command)
    try:
        me = remote.discovery.whoami(None)
    finally:
        remote.close()
    path = save_token(server, token)
    result = {"server": server, "principal_id": me["principal_id"], "credentials": str(path)}
    s.emit(
        result,
        lambda r: output.line(
            f"logged in to {r['server']} as {r['principal_id']} (token saved in {r['credentials']})"
        ),
    )


def logout(ctx: typer.Context, url: ServerUrl, json_: JsonFlag = False) -> None:
    """Forget the token saved for URL (the token stays valid: `ameide token revoke` ends it)."""
    s = session(ctx, json_)
    server = server_key(url)
    result = {"server": server, "forgotten": forget_token(server)}
    s.emit(
        result,
        lambda r: output.line(
            f"forgot the token of {r['server']}"
            if r["forgotten"]
            else f"no token saved for {r['server']}"
        ),
    )
