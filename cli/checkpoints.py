"""Audit checkpoints kept outside the database: written by ``ameide audit checkpoint``, read by
``ameide audit verify --checkpoint FILE``, signed with a key kept in the home.

The key (``HOME/audit-checkpoint.key``, 32 random bytes, mode 0600, made on the first
checkpoint) signs with HMAC-SHA256, so a checkpoint file edited by someone without the key
fails verification before the chain is even read. Keep the checkpoint files away from the
database's host for them to prove anything against someone who controls it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import re
import secrets
from pathlib import Path
from typing import Any

from domain.audit import Checkpoint
from domain.errors import InvalidArgument

KEY_FILE = "audit-checkpoint.key"
SIGNED = ("chain", "length", "head_hash", "taken_at")
_HASH = re.compile(r"^[0-9a-f]{64}$")


def _key(home: Path, *, create: bool) -> bytes | None:
    path = home / KEY_FILE
    if not path.exists():
        if not create:
            return None
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(secrets.token_bytes(32))
    return path.read_bytes()


def _signature(key: bytes, doc: dict[str, Any]) -> str:
    text = json.dumps({k: doc[k] for k in SIGNED}, sort_keys=True, separators=(",", ":"))
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).hexdigest()


def signed(home: Path, checkpoint: dict[str, Any]) -> dict[str, Any]:
    """The checkpoint the service took, with the home key's signature."""
    key = _key(home, create=True)
    assert key is not None
    return {**checkpoint, "signature": f"hmac-sha256:{_signature(key, checkpoint)}"}


def load(home: Path, path: Path) -> Checkpoint:
    """A checkpoint file, its signature checked against the home key."""
    problem = f"checkpoint {path}"
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise InvalidArgument(
            f"{problem} cannot be read: {exc.strerror}", field="checkpoint"
        ) from None
    except ValueError:
        raise InvalidArgument(f"{problem} is not JSON", field="checkpoint") from None
    if not isinstance(doc, dict) or any(k not in doc for k in (*SIGNED, "signature")):
        raise InvalidArgument(
            f"{problem} lacks one of {', '.join((*SIGNED, 'signature'))}", field="checkpoint"
        )
    length, head = doc["length"], doc["head_hash"]
    if not isinstance(length, int) or isinstance(length, bool) or length < 0:
        raise InvalidArgument(f"{problem}: length must be a whole number", field="checkpoint")
    if not isinstance(head, str) or not _HASH.match(head) or not isinstance(doc["chain"], str):
        raise InvalidArgument(f"{problem}: malformed chain or head_hash", field="checkpoint")
    key = _key(home, create=False)
    if key is None:
        raise InvalidArgument(
            f"cannot check the signature of {path}: this home has no {KEY_FILE}",
            field="checkpoint",
        )
    expected = f"hmac-sha256:{_signature(key, doc)}"
    if not hmac.compare_digest(str(doc["signature"]), expected):
        raise InvalidArgument(
            f"{problem}: the signature does not match (edited, or signed with another key)",
            field="checkpoint",
        )
    return Checkpoint(doc["chain"], length, head)
