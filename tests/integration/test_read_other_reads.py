"""get_version and the relationship neighbourhood (expand): permission-trimmed, as_of aware."""

from __future__ import annotations

import pytest

from domain.errors import InvalidArgument, NotFound
from tests.conftest import World


def _confidential(world: World) -> tuple[str, str]:
    out = world.svc.elements.create_element(
        world.admin, world.repo, title="Secret", body="# S\n\ns\n", classification="confidential"
    )
    return out["element"]["element_id"], out["version"]["version_id"]


def test_get_version_returns_content_with_chunk_offsets(world: World) -> None:
    body = "# SOP\n\nIntro.\n\n## Steps\n\nDo it.\n"
    _, v1 = world.canonical(title="SOP", body=body)
    out = world.svc.reading.get_version(world.reader, v1)
    assert out["version"]["body"] == body
    assert [c["chunk_key"] for c in out["chunks"]] == ["sop", "sop/steps"]
    assert all(body[c["start"] : c["end"]].strip() for c in out["chunks"])


def test_get_version_hides_unreadable_missing_and_later_versions_alike(world: World) -> None:
    before = world.app.clock.now()
    secret = _confidential(world)[1]
    _, v1 = world.canonical(title="Open", body="# O\n\nx\n")
    for caller, version, as_of in (
        (world.reader, secret, None),
        (world.stranger, v1, None),
        (world.reader, "ver_" + "0" * 24, None),
        (world.reader, v1, before),
    ):
        with pytest.raises(NotFound, match=f"version {version} not found"):
            world.svc.reading.get_version(caller, version, as_of)


def test_an_erased_version_says_so(world: World) -> None:
    _, v1 = world.canonical(title="PII", body="# PII\n\nmail me\n")
    world.svc.erasure.erase_version(world.admin, v1, "gdpr")
    out = world.svc.reading.get_version(world.reader, v1)
    assert out["version"]["erased"]
    assert out["chunks"] == []


def test_the_neighbourhood_never_walks_into_unreadable_elements(world: World) -> None:
    a, _ = world.canonical(title="A", body="# A\n\na\n")
    hidden, _ = _confidential(world)
    b, _ = world.canonical(title="B", body="# B\n\nb\n")
    c, _ = world.canonical(title="C", body="# C\n\nc\n")
    t0 = world.app.clock.now()
    for src, dst in ((a, hidden), (hidden, c), (a, b)):
        world.svc.elements.add_relationship(
            world.admin, src, dst, kind="REFERENCE", type_key="ameide:x"
        )
    out = world.svc.reading.expand(world.reader, a, hops=2)
    assert {n["element_id"] for n in out["nodes"]} == {a, b}
    assert all(hidden not in (e["source_element_id"], e["target_element_id"]) for e in out["edges"])
    cleared = world.svc.reading.expand(world.admin, a, hops=2)
    assert {n["element_id"] for n in cleared["nodes"]} == {a, b, c, hidden}
    assert world.svc.reading.expand(world.admin, a, hops=2, as_of=t0)["edges"] == []
    with pytest.raises(InvalidArgument):
        world.svc.reading.expand(world.reader, a, hops=0)
    with pytest.raises(NotFound):
        world.svc.reading.expand(world.reader, hidden)
