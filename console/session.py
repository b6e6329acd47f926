"""Console sessions: a bearer token exchanged for an HTTP-only, ``SameSite=Strict`` cookie.

Signing in sends a token made by ``ameide token create``; ``MemoryService.tokens.authenticate``
checks it, and the console opens a session: a random id in the cookie (only a hash of it is
kept), the token in this process's memory, a CSRF token for every form, and an expiry (idle
and absolute). Every request checks the token again through the service, so a revoked token
ends its sessions at once. Sessions live in one process: restarting ``ameide serve`` signs
everyone out, which is the safe direction.

The sign-in form itself is protected by a double-submit cookie (there is no session yet).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace

SESSION_COOKIE = "ameide_console"
SIGNIN_COOKIE = "ameide_console_signin"
IDLE_SECONDS = 30 * 60
MAX_SECONDS = 8 * 60 * 60


@dataclass(frozen=True)
class Session:
    """One signed-in browser: who, with which token, its CSRF token and when it ends."""

    token: str = field(repr=False)
    principal_id: str
    csrf: str = field(repr=False)
    started_at: float
    seen_at: float
    purpose: str | None = None


def _key(session_id: str) -> str:
    return hashlib.sha256(session_id.encode()).hexdigest()


def same_secret(sent: str | None, expected: str) -> bool:
    """Constant-time comparison of a submitted secret (None: nothing was sent)."""
    return bool(sent) and hmac.compare_digest(str(sent).encode(), expected.encode())


def new_secret() -> str:
    """A random URL-safe secret (session ids, CSRF tokens)."""
    return secrets.token_urlsafe(32)


class SessionStore:
    """The sessions of this process; ``now`` is a monotonic clock (tests pass their own)."""

    def __init__(
        self,
        *,
        idle_seconds: float = IDLE_SECONDS,
        max_seconds: float = MAX_SECONDS,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.idle_seconds = idle_seconds
        self.max_seconds = max_seconds
        self.now = now
        self._sessions: dict[str, Session] = {}
        self._lock = threading.Lock()

    def open(
        self, token: str, principal_id: str, purpose: str | None = None
    ) -> tuple[str, Session]:
        """A new session for an authenticated token (and the purpose stated at sign-in, recorded
        with every read and write like ``--purpose``); returns the cookie value and the session."""
        session_id, at = new_secret(), self.now()
        session = Session(token, principal_id, new_secret(), at, at, purpose)
        with self._lock:
            self._drop_expired(at)
            self._sessions[_key(session_id)] = session
        return session_id, session

    def get(self, session_id: str | None) -> Session | None:
        """The live session of a cookie value (None: unknown, forged or expired)."""
        if not session_id:
            return None
        at = self.now()
        with self._lock:
            session = self._sessions.get(_key(session_id))
            if session is None:
                return None
            if self._expired(session, at):
                del self._sessions[_key(session_id)]
                return None
            session = replace(session, seen_at=at)
            self._sessions[_key(session_id)] = session
        return session

    def close(self, session_id: str | None) -> None:
        """End a session (signing out); unknown ids are ignored."""
        if session_id:
            with self._lock:
                self._sessions.pop(_key(session_id), None)

    def _expired(self, session: Session, at: float) -> bool:
        return (
            at - session.seen_at > self.idle_seconds or at - session.started_at > self.max_seconds
        )

    def _drop_expired(self, at: float) -> None:
        for key in [k for k, s in self._sessions.items() if self._expired(s, at)]:
            del self._sessions[key]
