"""Tokens minted with a token are its children: revoking a token revokes its subtree, a token
whose ancestor is revoked never authenticates, and tokens can be listed (never their secrets)."""

from __future__ import annotations

import json
import secrets

import pytest

from domain.audit import GLOBAL_CHAIN
from domain.errors import PermissionDenied, Unauthenticated
from edge.results import as_json
from service.authz import Caller
from tests.conftest import World


def _as(world: World, secret: str) -> Caller:
    who = world.svc.tokens.authenticate(secret)
    return Caller(who.principal_id, token_id=who.token_id)


def test_revoking_a_token_revokes_every_token_minted_with_it(world: World) -> None:
    svc = world.svc
    user = f"user:u-{secrets.token_hex(4)}"
    root = svc.tokens.create(world.admin, user)
    child = svc.tokens.create(_as(world, root["token"]), user)
    grandchild = svc.tokens.create(_as(world, child["token"]), user)
    sibling = svc.tokens.create(world.admin, user)  # minted without a token: no parent
    rows = {r["token_id"]: r for r in svc.tokens.list_tokens(world.admin, user)}
    assert rows[child["token_id"]]["parent_token_id"] == root["token_id"]
    assert rows[grandchild["token_id"]]["parent_token_id"] == child["token_id"]
    assert rows[sibling["token_id"]]["parent_token_id"] is None

    svc.tokens.revoke(Caller(user), root["token_id"])
    for gone in (root, child, grandchild):
        with pytest.raises(Unauthenticated):
            svc.admin.authenticate(gone["token"])
    assert svc.admin.authenticate(sibling["token"]) == user
    rows = {r["token_id"]: r for r in svc.tokens.list_tokens(Caller(user))}
    assert [rows[t["token_id"]]["revoked"] for t in (root, child, grandchild, sibling)] == [
        True,
        True,
        True,
        False,
    ]
    with world.app.uow(readonly=True) as uow:
        events = uow.store.audit_events(GLOBAL_CHAIN)
    revoked = {e.payload["token_id"] for e in events if e.event_type == "token.revoked"}
    assert {root["token_id"], child["token_id"], grandchild["token_id"]} <= revoked


def test_a_token_whose_parent_is_revoked_cannot_mint_or_authenticate(world: World) -> None:
    svc = world.svc
    user = f"user:u-{secrets.token_hex(4)}"
    root = svc.tokens.create(world.admin, user)
    holder = _as(world, root["token"])
    svc.tokens.revoke(world.admin, root["token_id"])
    with pytest.raises(Unauthenticated):
        svc.tokens.create(holder, user)  # the request raced the revocation: refused


def test_tokens_are_listed_without_secrets_and_only_to_their_owner_or_a_global_admin(
    world: World,
) -> None:
    svc = world.svc
    alice, bob = (f"user:{n}-{secrets.token_hex(4)}" for n in ("alice", "bob"))
    made = svc.tokens.create(world.admin, alice)
    svc.tokens.create(world.admin, bob)
    mine = svc.tokens.list_tokens(Caller(alice))
    assert [r["token_id"] for r in mine] == [made["token_id"]]
    text = json.dumps(as_json(mine))
    assert made["token"] not in text
    assert "hash" not in text
    with pytest.raises(PermissionDenied, match="only its own tokens"):
        svc.tokens.list_tokens(Caller(alice), bob)
    everyone = {r["principal_id"] for r in svc.tokens.list_tokens(world.admin)}
    assert {alice, bob} <= everyone
