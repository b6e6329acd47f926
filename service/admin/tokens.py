"""Bearer tokens: mint, authenticate, revoke (with every token minted from it), list.

A collaborator of the service: it is handed the kernel (the transaction, the gate, the audit
trail). Secrets are shown once and stored as SHA-256 (a
high-entropy random secret needs no slow hash). A token minted by a caller who presented a
token records that token as its parent; revoking a token revokes its whole subtree, and a
token whose ancestor is revoked never authenticates (so a child minted while its parent was
being revoked cannot outlive it).
"""

from __future__ import annotations

import hashlib
import secrets
from dataclasses import dataclass
from typing import TYPE_CHECKING

from domain.audit import GLOBAL_CHAIN
from domain.errors import NotFound, PermissionDenied, Unauthenticated
from domain.permissions import Action
from domain.values import new_id, validate_id, validate_principal
from service import results as r
from service.authz import Caller
from service.kernel import acting
from service.views import iso

if TYPE_CHECKING:
    from service.core import UnitOfWork
    from service.kernel import Kernel

TOKEN_PREFIX = "amt_"  # noqa: S105 - a prefix, not a secret
MAX_TOKEN_DEPTH = 64  # a parent chain longer than this is refused (it cannot be minted anyway)


def hash_token(secret: str) -> str:
    """Tokens are stored as SHA-256 of the secret (high-entropy secrets need no slow hash)."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Authenticated:
    """Who a valid bearer token speaks for, and which token it is."""

    principal_id: str
    token_id: str


class TokenRegistry:
    """The token use cases, over the service core."""

    def __init__(self, k: Kernel) -> None:
        self.k = k

    def _is_global_admin(self, uow: UnitOfWork, caller: Caller) -> bool:
        return self.k.gate.permission(uow, caller, "*").can(Action.ADMIN)

    @acting
    def create(self, caller: Caller, principal: str) -> r.TokenMade:
        """Mint a bearer token for yourself, or for anyone as a global admin; shown once.

        Minted with a token (``caller.token_id``), the new token is that token's child."""
        validate_principal(principal)
        token_id = new_id("tok")
        secret = f"{TOKEN_PREFIX}{token_id[4:]}_{secrets.token_urlsafe(32)}"
        with self.k.uow() as uow:
            if principal != caller.principal_id and not self._is_global_admin(uow, caller):
                raise PermissionDenied(f"{caller.principal_id} is not an admin of *")
            parent = caller.token_id
            if parent is not None and not self._valid(uow, parent):
                raise Unauthenticated("missing, invalid or revoked bearer token")
            at = self.k.clock.now()
            uow.store.insert_token(
                token_id, principal, hash_token(secret), at, caller.principal_id, parent
            )
            self.k.audit.event(
                uow,
                caller,
                GLOBAL_CHAIN,
                "token.created",
                at,
                payload={
                    "token_id": token_id,
                    "principal_id": principal,
                    **({"parent_token_id": parent} if parent else {}),
                },
            )
            uow.commit()
        return r.TokenMade(
            token_id=token_id, principal_id=principal, token=secret, created_at=iso(at)
        )

    @acting
    def revoke(self, caller: Caller, token_id: str) -> r.TokenRevoked:
        """Revoke a token and every token minted from it, transitively (its owner or a global
        admin; anyone else is told the token does not exist)."""
        validate_id(token_id, "tok", "token")
        with self.k.uow() as uow:
            tok = uow.store.get_token(token_id)
            missing = NotFound(f"token {token_id} not found")
            if tok is None:
                raise missing
            owner = tok.principal_id == caller.principal_id
            if not owner and not self._is_global_admin(uow, caller):
                raise missing
            at = self.k.clock.now()
            revoked = 0
            for tid in self._subtree(uow, token_id):
                rec = uow.store.get_token(tid)
                if rec is None or rec.revoked_at is not None:
                    continue
                uow.store.revoke_token(tid, at, caller.principal_id)
                revoked += 1
                self.k.audit.event(
                    uow,
                    caller,
                    GLOBAL_CHAIN,
                    "token.revoked",
                    at,
                    payload={
                        "token_id": tid,
                        "principal_id": rec.principal_id,
                        **({"with_parent": token_id} if tid != token_id else {}),
                    },
                )
            if revoked:
                uow.commit()
        return r.TokenRevoked(token_id=token_id, revoked=True)

    @acting
    def list_tokens(self, caller: Caller, principal: str | None = None) -> list[r.TokenRow]:
        """Tokens (never their secrets or hashes): your own; a global admin may name any
        principal, or list every token by naming none."""
        if principal is not None:
            validate_principal(principal)
        with self.k.uow(readonly=True) as uow:
            admin = self._is_global_admin(uow, caller)
            if not admin:
                if principal not in (None, caller.principal_id):
                    raise PermissionDenied(
                        f"{caller.principal_id} may list only its own tokens (not a global admin)"
                    )
                principal = caller.principal_id
            rows = uow.store.list_tokens(principal)
        return [
            r.TokenRow.model_validate(row)
            for row in [
                {
                    "token_id": r.token_id,
                    "principal_id": r.principal_id,
                    "created_at": iso(r.created_at),
                    "created_by": r.created_by,
                    "parent_token_id": r.parent_token_id,
                    "revoked": r.revoked_at is not None,
                    "revoked_at": iso(r.revoked_at) if r.revoked_at else None,
                    "revoked_by": r.revoked_by,
                }
                for r in rows
            ]
        ]

    @acting
    def authenticate(self, secret: str) -> Authenticated:
        """The principal and id of a valid bearer token: known, unrevoked, and no ancestor
        revoked."""
        bad = Unauthenticated("missing, invalid or revoked bearer token")
        if not secret or not secret.startswith(TOKEN_PREFIX) or len(secret) > 200:
            raise bad
        with self.k.uow(readonly=True) as uow:
            tok = uow.store.token_by_hash(hash_token(secret))
            if tok is None or not self._valid(uow, tok.token_id):
                raise bad
        return Authenticated(str(tok.principal_id), str(tok.token_id))

    @staticmethod
    def _valid(uow: UnitOfWork, token_id: str) -> bool:
        """The token and all its ancestors exist and are unrevoked."""
        current: str | None = token_id
        for _ in range(MAX_TOKEN_DEPTH):
            if current is None:
                return True
            rec = uow.store.get_token(current)
            if rec is None or rec.revoked_at is not None:
                return False
            current = rec.parent_token_id
        return False

    @staticmethod
    def _subtree(uow: UnitOfWork, token_id: str) -> list[str]:
        """``token_id`` and every token minted from it, transitively, parents first."""
        out, seen, frontier = [token_id], {token_id}, [token_id]
        while frontier:
            children = [c for c in uow.store.child_token_ids(frontier) if c not in seen]
            seen.update(children)
            out += children
            frontier = children
        return out
