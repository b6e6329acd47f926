"""Tokens for remote mode: ``--token`` > ``AMEIDE_TOKEN`` > the credentials file.

``ameide login URL`` keeps one token per server in ``$XDG_CONFIG_HOME/ameide/credentials.json``
(default ``~/.config/ameide/``), created with mode 0600 in a 0700 directory. Like ssh with a
private key, a file that group or others may read is refused, not used. A token is never
printed and never part of an error message.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path
from typing import Any

from domain.errors import FailedPrecondition, InvalidArgument, Unauthenticated

FILE_NAME = "credentials.json"


def server_key(url: str) -> str:
    """A server URL as the file's key (no trailing slash); only http(s) URLs are servers."""
    url = url.strip().rstrip("/")
    if not url.startswith(("http://", "https://")) or len(url.split("://", 1)[1]) == 0:
        raise InvalidArgument(
            f"--server must be an http(s) URL such as https://memory.example.com, not {url!r}",
            field="server",
        )
    return url


def credentials_path() -> Path:
    """Where ``ameide login`` keeps tokens."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "ameide" / FILE_NAME


def _load(path: Path) -> dict[str, Any]:
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return {}
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise FailedPrecondition(
            f"{path} is accessible by group or others (mode {stat.S_IMODE(mode):04o}): "
            f"refusing to use the tokens in it; run `chmod 600 {path}`",
            path=str(path),
        )
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InvalidArgument(f"cannot read {path}: {type(exc).__name__}") from None
    return data if isinstance(data, dict) else {}


def stored_token(server: str) -> str | None:
    """The token ``ameide login`` saved for ``server`` (None when there is none)."""
    entry = _load(credentials_path()).get("servers", {}).get(server_key(server))
    token = entry.get("token") if isinstance(entry, dict) else None
    return token if isinstance(token, str) and token else None


def resolve_token(server: str, given: str | None) -> str:
    """``--token`` / ``AMEIDE_TOKEN`` (``given``), else the saved one."""
    token = given or stored_token(server)
    if not token:
        raise Unauthenticated(
            f"no token for {server_key(server)}: pass --token, set AMEIDE_TOKEN "
            f"or run `ameide login {server_key(server)}`"
        )
    return token


def save_token(server: str, token: str) -> Path:
    """Remember ``token`` for ``server`` (file 0600, directory 0700); return the file."""
    path = credentials_path()
    data = _load(path)
    servers = data.setdefault("servers", {})
    servers[server_key(server)] = {"token": token}
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.fchmod(fd, 0o600)  # an existing file keeps its mode otherwise
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(json.dumps(data, indent=2) + "\n")
    return path


def forget_token(server: str) -> bool:
    """Drop the saved token of ``server``; whether there was one."""
    path = credentials_path()
    data = _load(path)
    if data.get("servers", {}).pop(server_key(server), None) is None:
        return False
    fd = os.open(path, os.O_WRONLY | os.O_TRUNC)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(json.dumps(data, indent=2) + "\n")
    return True
