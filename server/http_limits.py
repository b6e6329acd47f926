"""Connection limits for the HTTP listener: reap idle and half-sent connections, cap their number.

uvicorn closes a kept-alive connection after ``timeout_keep_alive`` of silence, but a connection
that never sends a complete request head — opened and left idle, or sending a byte now and then
(slowloris) — is never closed, and connections are accepted without limit. :func:`limited_h11`
returns uvicorn's h11 protocol with two additions:

- **header timeout**: from the moment a connection opens, and again each time a response is
  complete, the client has ``header_timeout`` seconds to deliver a whole request head; if no new
  request has started by then, the connection is closed;
- **connection cap**: a connection beyond ``max_connections`` open ones is answered
  ``503 UNAVAILABLE`` in the error taxonomy's JSON shape and closed at once.

Keep-alive idling (``timeout_keep_alive``) and the in-flight request cap (``limit_concurrency``)
stay uvicorn's own settings.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol

from edge.errors import error_body

log = logging.getLogger("ameide.server")

_BUSY = json.dumps(error_body("UNAVAILABLE", "too many open connections; retry shortly")).encode()
_BUSY_RESPONSE = (
    b"HTTP/1.1 503 Service Unavailable\r\n"
    b"content-type: application/json\r\n"
    b"retry-after: 1\r\n"
    b"connection: close\r\n"
    b"content-length: " + str(len(_BUSY)).encode() + b"\r\n\r\n" + _BUSY
)


def limited_h11(header_timeout: float, max_connections: int) -> type[asyncio.Protocol]:
    """uvicorn's h11 protocol with a request-head timeout and a cap on open connections."""
    if header_timeout <= 0:
        raise ValueError("header_timeout must be positive")
    if max_connections < 1:
        raise ValueError("max_connections must be at least 1")

    class LimitedH11(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            if len(self.connections) > max_connections:
                log.warning(
                    "refused a connection: %d open (cap %d)", len(self.connections), max_connections
                )
                transport.write(_BUSY_RESPONSE)
                transport.close()
                return
            self._arm_header_timer()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm_header_timer()

        def connection_lost(self, exc: Exception | None) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None
            super().connection_lost(exc)

        def _arm_header_timer(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
            waiting_after: Any = self.cycle  # a request starting replaces the cycle
            self._header_timer = self.loop.call_later(
                header_timeout, self._header_timeout_expired, waiting_after
            )

        def _header_timeout_expired(self, waiting_after: Any) -> None:
            self._header_timer = None
            if self.cycle is waiting_after and not self.transport.is_closing():
                self.transport.close()  # no complete request head in time

    return LimitedH11
