"""Where a server may listen: the guard against serving without authentication to a network."""

from __future__ import annotations

import ipaddress


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


MAX_REQUEST_BYTES = 8 * 1024 * 1024
"""Largest HTTP request body any surface of the listener accepts (REST, the console, ``/mcp``):
a 2 MiB element body plus JSON escaping and the other fields. Larger is 413
``PAYLOAD_TOO_LARGE``, whether the length was declared or the body came chunked."""
