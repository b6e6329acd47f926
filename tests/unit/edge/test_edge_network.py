"""``edge.network.is_loopback``: the guard against serving unauthenticated to a network."""

from __future__ import annotations

import pytest

from edge.network import is_loopback


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
