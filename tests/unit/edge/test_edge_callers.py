"""``edge.callers``: token or local principal, then the narrowing headers → one ``Caller``."""

from __future__ import annotations

import pytest

from domain.errors import Unauthenticated
from edge.callers import (
    NO_BEARER_GRPC,
    NO_BEARER_HTTP,
    Identity,
    authenticate_caller,
    bearer_secret,
    claimed_roles,
    narrowed_caller,
    presented_token,
    resolve_caller,
)
from service.admin.tokens import Authenticated

TOKENS = {"amt_good": Authenticated("agent:claude", "tok_0123456789abcdef")}


def authenticate(secret: str) -> Authenticated:
    if secret not in TOKENS:
        raise Unauthenticated("missing, invalid or revoked bearer token")
    return TOKENS[secret]


def test_a_valid_token_names_the_principal_and_the_token() -> None:
    caller = resolve_caller(
        authenticate,
        token="amt_good",
        local_principal="user:local",
        roles=None,
        on_behalf_of=None,
        purpose=None,
        tool_id="ameide-rest",
    )
    assert (caller.principal_id, caller.token_id, caller.tool_id) == (
        "agent:claude",
        "tok_0123456789abcdef",
        "ameide-rest",
    )


def test_a_token_that_is_sent_is_checked_even_when_a_local_principal_is_allowed() -> None:
    with pytest.raises(Unauthenticated, match="invalid or revoked"):
        authenticate_caller(authenticate, token="amt_bad", local_principal="user:local")


def test_without_a_token_the_local_principal_acts_only_when_one_is_allowed() -> None:
    assert authenticate_caller(authenticate, token=None, local_principal="user:local") == Identity(
        "user:local"
    )
    with pytest.raises(Unauthenticated) as http:
        authenticate_caller(authenticate, token=None, local_principal=None)
    assert http.value.message == NO_BEARER_HTTP
    with pytest.raises(Unauthenticated) as grpc:
        authenticate_caller(
            authenticate, token=None, local_principal="", missing_token=NO_BEARER_GRPC
        )
    assert grpc.value.message == NO_BEARER_GRPC


def test_the_headers_narrow_the_caller_and_empty_ones_count_as_absent() -> None:
    who = Identity("user:alice", "tok_1")
    caller = narrowed_caller(
        who, roles=" reader, ,agent ", on_behalf_of="agent:bot", purpose="triage", tool_id="t"
    )
    assert (caller.roles, caller.on_behalf_of, caller.purpose) == (
        ("reader", "agent"),
        "agent:bot",
        "triage",
    )
    plain = narrowed_caller(who, roles="", on_behalf_of="", purpose="", tool_id="t")
    assert (plain.roles, plain.on_behalf_of, plain.purpose) == ((), None, None)


@pytest.mark.parametrize(
    ("header", "secret"),
    [
        ("Bearer amt_x", "amt_x"),
        ("bearer   amt_x  ", "amt_x"),
        ("Basic dXNlcg==", None),
        ("Bearer ", None),
        ("", None),
        (None, None),
    ],
)
def test_only_a_bearer_authorization_carries_a_secret(
    header: str | None, secret: str | None
) -> None:
    assert bearer_secret(header) == secret


def test_claimed_roles_are_split_on_commas() -> None:
    assert claimed_roles(None) == ()
    assert claimed_roles("curator") == ("curator",)


@pytest.mark.parametrize("sent", [None, ""])
def test_no_authorization_presents_no_token(sent: str | None) -> None:
    assert presented_token(sent, not_bearer="x") is None


def test_a_bearer_authorization_presents_its_token() -> None:
    assert presented_token("Bearer  amt_abc ", not_bearer="x") == "amt_abc"


@pytest.mark.parametrize("sent", ["Basic dXNlcjpwYXNz", "Bearer", "Bearer   ", "amt_abc"])
def test_any_other_authorization_is_refused_not_ignored(sent: str) -> None:
    with pytest.raises(Unauthenticated, match="must be Bearer"):
        presented_token(sent, not_bearer="must be Bearer")
