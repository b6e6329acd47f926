"""``edge.network.is_loopback``: the guard against serving unauthenticated to a network."""

from __future__ import annotations

import pytest

from domain.errors import InvalidArgument
from edge.network import is_loopback, origin_matches, refuse_open_bind


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "127.0.0.2", "::1", "[::1]", "localhost", " 127.0.0.1 ", "\tlocalhost\n"]
)
def test_loopback_hosts_are_recognised_whatever_blanks_surround_them(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize(
    "host", ["0.0.0.0", "::", "192.168.1.10", "example.com", "localhost.evil.com", "", " "]
)
def test_every_other_host_is_not_loopback(host: str) -> None:
    assert not is_loopback(host)


@pytest.mark.parametrize(
    ("origin", "pattern", "matches"),
    [
        ("https://app.example.com", "https://app.example.com/", True),
        ("http://localhost:3000", "http://localhost:*", True),
        ("http://localhost", "http://localhost:*", True),
        ("http://localhost:", "http://localhost:*", False),
        ("http://localhost:30x", "http://localhost:*", False),
        ("http://localhost.evil.com", "http://localhost:*", False),
        ("http://localhost:3000@evil", "http://localhost:*", False),
        ("https://localhost:3000", "http://localhost:*", False),
        ("http://app.example:8080", "http://app.example", False),
    ],
)
def test_origin_patterns(origin: str, pattern: str, matches: bool) -> None:
    assert origin_matches(origin, pattern) is matches


def test_an_open_bind_is_refused_only_without_auth_off_loopback() -> None:
    refuse_open_bind("0.0.0.0", require_auth=True)
    refuse_open_bind("127.0.0.1", require_auth=False)
    with pytest.raises(InvalidArgument, match=r"serve gRPC on 0\.0\.0\.0 without authentication"):
        refuse_open_bind("0.0.0.0", require_auth=False, surface="gRPC")
