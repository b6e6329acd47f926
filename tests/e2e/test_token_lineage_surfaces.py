"""Token lineage on the network surfaces: a token minted with a token dies with it, and tokens
can be listed (REST ``GET /v1/tokens``, gRPC ``ListTokens``, CLI ``ameide token list``)."""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

import grpc
import pytest

from ameide_proto.v1 import governance_pb2 as gov
from cli.main import app as cli_app
from service.authz import Caller
from tests.conftest import World
from tests.e2e.conftest import without_ameide_env
from tests.e2e.grpc_harness import serve
from tests.e2e.rest_harness import rest_client
from tests.e2e.surface_drivers import CliDriver


def test_rest_a_child_token_is_revoked_with_its_parent_and_tokens_are_listed(
    world: World,
) -> None:
    user = f"user:u-{secrets.token_hex(4)}"
    parent = world.svc.tokens.create(world.admin, user)
    with rest_client(world) as rest:
        rest.tokens[user] = parent["token"]
        child = rest.ok("POST", "/v1/tokens", user, json={"principal_id": user})
        rest.tokens["child"] = child["token"]
        listed = {r["token_id"]: r for r in rest.ok("GET", "/v1/tokens", "child")}
        assert listed[child["token_id"]]["parent_token_id"] == parent["token_id"]
        assert set(listed) == {parent["token_id"], child["token_id"]}
        assert all("token" not in r and "token_hash" not in r for r in listed.values())
        rest.ok("DELETE", f"/v1/tokens/{parent['token_id']}", user)
        error = rest.fail("GET", "/v1/tokens", "child", 401)
        assert error["code"] == "UNAUTHENTICATED"
        everyone = rest.ok("GET", "/v1/tokens", world.admin, params={"principal_id": user})
        assert {r["token_id"]: r["revoked"] for r in everyone} == {
            parent["token_id"]: True,
            child["token_id"]: True,
        }


def test_grpc_a_child_token_is_revoked_with_its_parent_and_tokens_are_listed(
    world: World,
) -> None:
    user = f"user:u-{secrets.token_hex(4)}"
    parent = world.svc.tokens.create(world.admin, user)
    with serve(world) as g:
        stub = g.governance
        g.tokens[user] = parent["token"]
        child = g.call(stub.CreateToken, gov.CreateTokenRequest(principal_id=user), user)
        g.tokens["child"] = child.token
        listed = g.call(stub.ListTokens, gov.ListTokensRequest(), "child").tokens
        by_id = {t.token_id: t for t in listed}
        assert by_id[child.token_id].parent_token_id == parent["token_id"]
        assert not by_id[parent["token_id"]].HasField("parent_token_id")
        g.call(stub.RevokeToken, gov.RevokeTokenRequest(token_id=parent["token_id"]), user)
        failure = g.fail(stub.ListTokens, gov.ListTokensRequest(), "child")
        assert failure.status == grpc.StatusCode.UNAUTHENTICATED
        request = gov.ListTokensRequest(principal_id=user)
        rows = g.call(stub.ListTokens, request, world.admin).tokens
        assert sorted((t.token_id, t.revoked) for t in rows) == sorted(
            [(parent["token_id"], True), (child.token_id, True)]
        )


def test_cli_lists_tokens_with_their_parent(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    without_ameide_env(monkeypatch)
    user = Caller(f"user:u-{secrets.token_hex(4)}")
    made = world.svc.tokens.create(world.admin, user.principal_id)
    cli = CliDriver(world, world.admin, tmp_path)
    rows: Any = cli.cli(user, "token", "list")
    assert [r["token_id"] for r in rows] == [made["token_id"]]
    assert rows[0]["parent_token_id"] is None
    assert rows[0]["revoked"] is False
    result = cli.runner.invoke(
        cli_app,
        ["--home", str(cli.home), "--as", user.principal_id, "token", "list"],
    )
    assert result.exit_code == 0, result.stdout
    assert made["token_id"] in result.stdout
    assert "active" in result.stdout
