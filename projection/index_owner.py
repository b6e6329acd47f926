"""Which node an index directory belongs to: an index directory shared by mistake is refused.

Every ``serve`` node keeps its own keyword index from the outbox (docs/deployment.md). Processes
of one node share its index directory safely (``flock``, :mod:`projection.generations`), but two
nodes must not: ``flock`` does not reach across machines on most network file systems, and an
index directory of one database would answer another database's reads with the wrong content.

So the directory records its owner in ``owner.json``: the database it is an index of (an
identity the database itself gives, see ``storage.db.database_identity``) and the node keeping
it (``AMEIDE_NODE_ID``, default the host name) with a heartbeat a long-lived process renews
every :data:`HEARTBEAT` seconds. :func:`claim` refuses a directory of another database (always)
and one another node renewed within :data:`LEASE` seconds; a node's lease older than that is
taken over (the node is gone), with a warning.
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

OWNER = "owner.json"
OWNER_LOCK = "owner.lock"
HEARTBEAT = 10.0
"""Seconds between two renewals of a live node's lease."""
LEASE = 30.0
"""Seconds after its last renewal a node's lease lapses (another node may then take over)."""
log = logging.getLogger("ameide.index")


class DirectoryTaken(Exception):
    """The index directory belongs to another database, or to another live node."""


@dataclass(frozen=True)
class Owner:
    """Who keeps an index directory."""

    database: str
    node: str


def read_owner(directory: Path) -> dict[str, Any] | None:
    """``owner.json`` (``None`` when missing or unreadable)."""
    try:
        found = json.loads((directory / OWNER).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    return found if isinstance(found, dict) else None


def claim(directory: Path, owner: Owner, *, now: float | None = None, create: bool = True) -> None:
    """Record ``owner`` as the directory's (renewing its heartbeat), or raise
    :class:`DirectoryTaken` when it is another database's, or another node's whose lease is
    live."""
    now = time.time() if now is None else now
    if create:  # at start; a renewal never brings back a directory deleted meanwhile
        directory.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(directory / OWNER_LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # one claim at a time on this machine
        found = read_owner(directory)
        if found is not None:
            _check(directory, owner, found, now)
        record = {"database": owner.database, "node": owner.node, "pid": os.getpid(),
                  "heartbeat": now}  # fmt: skip
        temporary = directory / f"{OWNER}.{os.getpid()}.tmp"
        temporary.write_text(json.dumps(record), "utf-8")
        os.replace(temporary, directory / OWNER)
    finally:
        os.close(fd)


def _check(directory: Path, owner: Owner, found: dict[str, Any], now: float) -> None:
    if found.get("database") != owner.database:
        raise DirectoryTaken(
            f"the index directory {directory} is the index of another database "
            f"({found.get('database')}, not {owner.database}): give each database its own "
            "index directory (AMEIDE_INDEX_DIR), or delete this one to rebuild it"
        )
    if found.get("node") == owner.node:
        return
    age = now - float(found.get("heartbeat") or 0.0)
    if age < LEASE:
        raise DirectoryTaken(
            f"the index directory {directory} is kept by another node, {found.get('node')} "
            f"(pid {found.get('pid')}, alive {age:.0f} s ago): each serve node needs an index "
            "directory of its own on a local disk (AMEIDE_INDEX_DIR), never a shared one"
        )
    log.warning(
        "the index directory %s was kept by node %s, silent for %.0f s: node %s takes it over",
        directory,
        found.get("node"),
        age,
        owner.node,
    )


class Heartbeat:
    """Renews a node's claim every :data:`HEARTBEAT` seconds on a daemon thread until
    :meth:`stop`; a renewal that finds the directory taken meanwhile logs an error (the next
    start of this node is refused)."""

    def __init__(self, directory: Path, owner: Owner) -> None:
        self._directory = directory
        self._owner = owner
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="index owner", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.wait(HEARTBEAT):
            try:
                claim(self._directory, self._owner, create=False)
            except DirectoryTaken as exc:
                log.error("%s", exc)
            except OSError as exc:  # e.g. the directory deleted: the next catch-up rebuilds
                log.debug("could not renew the index directory's owner: %r", exc)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
