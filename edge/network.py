"""Where a server may listen and whom it answers: the guard against serving without
authentication to a network, and the one Origin pattern rule (``scheme://host:*``) every HTTP
surface applies."""

from __future__ import annotations

import ipaddress

from domain.errors import InvalidArgument


def is_loopback(host: str) -> bool:
    """Whether ``host`` only accepts connections from this machine.

    ``localhost`` and loopback addresses (``127.0.0.0/8``, ``::1``, bracketed or not) are;
    anything else — ``0.0.0.0``, a LAN address, a host name — is not. Blanks around the value
    are ignored, so ``" 127.0.0.1"`` and ``"127.0.0.1"`` get the same answer.
    """
    name = host.strip().strip("[]")
    if name == "localhost":
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


def refuse_open_bind(host: str, *, require_auth: bool, surface: str = "") -> None:
    """Raise ``InvalidArgument`` (field ``host``) when asked to serve without authentication on
    an address other machines can reach: without tokens a request acts as the local principal.
    ``surface`` names what would serve (``gRPC``, ``MCP``; empty: the whole server)."""
    if not require_auth and not is_loopback(host):
        what = f" {surface}" if surface else ""
        raise InvalidArgument(
            f"refusing to serve{what} on {host} without authentication: bind a loopback "
            "address (127.0.0.1) or require bearer tokens",
            field="host",
        )


def origin_matches(origin: str, pattern: str) -> bool:
    """Whether a browser ``Origin`` matches an allowed origin: equal (case and a trailing slash
    aside), or a ``scheme://host:*`` pattern, which admits that host with no port or any
    numeric port — never a longer host name (``http://localhost.evil.com``) or userinfo."""
    origin, pattern = (x.strip().rstrip("/").lower() for x in (origin, pattern))
    if origin == pattern:
        return True
    if not pattern.endswith(":*"):
        return False
    base = pattern[:-2]
    if origin == base:
        return True
    port = origin[len(base) + 1 :] if origin.startswith(base + ":") else ""
    return port.isdigit()


MAX_REQUEST_BYTES = 8 * 1024 * 1024
"""Largest HTTP request body any surface of the listener accepts (REST, the console, ``/mcp``):
a 2 MiB element body plus JSON escaping and the other fields. Larger is 413
``PAYLOAD_TOO_LARGE``, whether the length was declared or the body came chunked."""
