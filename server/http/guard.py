"""Host and Origin checks in front of every HTTP route (REST, ``/metrics``, ``/docs``, MCP).

A server on loopback with ``--no-auth`` acts for the local user, so a web page must never reach
it. DNS rebinding points a name the attacker controls (``attacker.example``) at ``127.0.0.1``:
the browser then sends the page's requests to this server with ``Host: attacker.example``. So:

- **Host** must name this server: a loopback name (``localhost``), an IP literal (a page served
  from an IP is same-origin only with that IP, so an IP literal cannot be rebound), or a name on
  the allow-list (``--allowed-host`` / ``AMEIDE_ALLOWED_HOSTS``: ``memory.example.com``, with an
  optional ``:port``, ``:*`` for any port). Otherwise ``421 MISDIRECTED_REQUEST``.
- **Origin**, when a browser sends one, must be a loopback origin, the server's own origin (the
  request's Host) or on ``--allowed-origin``. Otherwise ``403 PERMISSION_DENIED``.

Both answer in the error taxonomy's JSON shape, before any route, authentication or body read.
"""

from __future__ import annotations

import ipaddress
import json
import logging
from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from edge.errors import error_body
from edge.network import origin_matches

log = logging.getLogger("ameide.server")

LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain"})


def split_host(value: str) -> tuple[str, str | None]:
    """``host[:port]`` → (lower-case host without brackets, port or ``None``)."""
    value = value.strip().lower()
    if value.startswith("["):  # [v6]:port
        end = value.find("]")
        if end == -1:
            return value, None
        host, rest = value[1:end], value[end + 1 :]
        return host, rest[1:] if rest.startswith(":") else None
    if value.count(":") == 1:
        host, port = value.split(":", 1)
        return host, port
    return value, None


def _is_ip(host: str) -> bool:
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


class HostPolicy:
    """Which Host headers and Origins this server answers (see the module docstring)."""

    def __init__(self, allowed_hosts: Iterable[str] = (), allowed_origins: Iterable[str] = ()):
        self.allowed_hosts: list[tuple[str, str | None]] = []
        for entry in allowed_hosts:
            entry = entry.strip()
            if not entry:
                continue
            host, port = split_host(entry)
            self.allowed_hosts.append((host, port))
        self.allowed_origins = [o.strip().rstrip("/").lower() for o in allowed_origins if o.strip()]

    def host_allowed(self, header: str | None) -> bool:
        """Whether a request with this Host header is for this server."""
        if not header:
            return False  # HTTP/1.1 requires Host; a client that omits it is not a browser page
        host, port = split_host(header)
        if not host:
            return False
        if host in LOOPBACK_NAMES or _is_ip(host):
            return True
        for allowed, allowed_port in self.allowed_hosts:
            if allowed == host and allowed_port in (None, "*", port):
                return True
        return False

    def origin_allowed(self, origin: str, host_header: str | None) -> bool:
        """Whether a browser page from ``origin`` may call this server."""
        origin = origin.strip().rstrip("/").lower()
        if any(origin_matches(origin, pattern) for pattern in self.allowed_origins):
            return True
        parts = urlsplit(origin)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return False
        if parts.hostname in LOOPBACK_NAMES or (
            _is_ip(parts.hostname) and ipaddress.ip_address(parts.hostname).is_loopback
        ):
            return True
        if host_header:  # same origin: the page was served by this very host and port
            return parts.netloc == host_header.strip().lower()
        return False


class HostGuard:
    """Pure ASGI middleware enforcing a :class:`HostPolicy` on every HTTP request."""

    def __init__(self, app: ASGIApp, policy: HostPolicy) -> None:
        self.app = app
        self.policy = policy

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        host = headers.get("host")
        if not self.policy.host_allowed(host):
            log.warning("refused a request for Host %r (not an allowed host)", (host or "")[:100])
            await _refuse(
                send,
                421,
                "MISDIRECTED_REQUEST",
                "this server does not answer for that Host; add it with --allowed-host",
            )
            return
        origin = headers.get("origin")
        if origin is not None and not self.policy.origin_allowed(origin, host):
            await _refuse(
                send,
                403,
                "PERMISSION_DENIED",
                "cross-origin requests from this Origin are refused; add it with --allowed-origin",
            )
            return
        await self.app(scope, receive, send)


async def _refuse(send: Send, status: int, code: str, message: str) -> None:
    body = json.dumps(error_body(code, message)).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
