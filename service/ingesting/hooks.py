"""Webhook deliveries of git hosts: who signed it, which event, which ref — no state, no I/O
beyond reading a secret's reference.

GitHub signs the raw body: ``X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, body)>``;
GitLab sends the secret itself in ``X-Gitlab-Token``. Both are compared in constant time
(``hmac.compare_digest``). A delivery's id (``X-GitHub-Delivery``; GitLab's
``X-Gitlab-Event-UUID`` or ``Idempotency-Key``) lets a redelivery run once.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

Provider = Literal["github", "gitlab"]
MAX_DELIVERY_ID = 200


@dataclass(frozen=True)
class Delivery:
    """A verified delivery: its provider, event, id and the pushed ref (None: not a push)."""

    provider: Provider
    event: str | None
    delivery_id: str | None
    ref: str | None


def verified_provider(headers: Mapping[str, str], body: bytes, secret: str) -> Provider | None:
    """The provider whose signature over ``body`` checks out with ``secret``; None otherwise
    (no signature, a wrong one, or an empty secret). ``headers`` are lower-case names."""
    if not secret:
        return None
    signature = headers.get("x-hub-signature-256")
    if signature is not None:
        expected = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
        return "github" if hmac.compare_digest(signature.encode(), expected.encode()) else None
    token = headers.get("x-gitlab-token")
    if token is not None:
        return "gitlab" if hmac.compare_digest(token.encode(), secret.encode()) else None
    return None


def read_delivery(provider: Provider, headers: Mapping[str, str], body: bytes) -> Delivery:
    """The event, delivery id and pushed ref of a verified delivery."""
    if provider == "github":
        event = headers.get("x-github-event")
        delivery = headers.get("x-github-delivery")
    else:
        event = headers.get("x-gitlab-event")
        delivery = headers.get("x-gitlab-event-uuid") or headers.get("idempotency-key")
    try:
        payload = json.loads(body) if body.strip() else {}
    except ValueError:
        payload = {}
    ref = payload.get("ref") if isinstance(payload, dict) else None
    is_push = event in ("push", "Push Hook") or (
        isinstance(payload, dict) and payload.get("object_kind") == "push"
    )
    return Delivery(
        provider,
        event,
        delivery[:MAX_DELIVERY_ID] if delivery else None,
        ref if is_push and isinstance(ref, str) else None,
    )


def ref_matches(pushed: str, ref: str) -> bool:
    """Whether a push to ``pushed`` (``refs/heads/main``) moves the source's ``ref`` (``main``)."""
    return pushed in (ref, f"refs/heads/{ref}", f"refs/tags/{ref}")


def read_reference(env: str | None, file: str | None) -> str | None:
    """The value an ``env:NAME`` or ``file:PATH`` reference points at (trailing newline cut);
    None when it is unset, unreadable or empty."""
    if env:
        value = os.environ.get(env)
        return value.strip() or None if value is not None else None
    if file:
        try:
            return Path(file).read_text(encoding="utf-8").strip() or None
        except OSError:
            return None
    return None


def describe_reference(env: str | None, file: str | None) -> str | None:
    """``env:NAME`` / ``file:PATH`` (what output shows in place of a secret)."""
    if env:
        return f"env:{env}"
    if file:
        return f"file:{file}"
    return None
