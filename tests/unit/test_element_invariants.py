"""Elements, versions and relationships: linear history, retirement, erasure, governance pins."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.errors import FailedPrecondition, InvalidArgument, LegalHoldActive
from domain.model import (
    ERASED_BODY,
    Element,
    Provenance,
    Relationship,
    RelationshipKind,
)
from domain.values import Classification, SourceKind, content_sha256

AT = datetime(2026, 1, 1, tzinfo=UTC)
CURATOR = Provenance("user", "user:curator")


def element() -> Element:
    return Element.new(
        "acme/eng/platform",
        kind="DOCUMENT",
        type_key="ameide:doc",
        source_kind=SourceKind.CANONICAL,
        classification=Classification.INTERNAL,
        at=AT,
        by="user:curator",
    )


@given(n=st.integers(min_value=1, max_value=20))
def test_each_new_version_follows_the_previous_head_so_history_stays_linear(n: int):
    el = element()
    versions = []
    for i in range(n):
        v = el.next_version(
            title="t",
            body=f"body {i}",
            metadata={},
            at=AT + timedelta(seconds=i),
            provenance=CURATOR,
        )
        versions.append(v)
        el.head_version_id, el.head_seq = v.version_id, v.seq
    assert [v.seq for v in versions] == list(range(1, n + 1))
    assert versions[0].parent_version_id is None
    for prev, cur in itertools.pairwise(versions):
        assert cur.parent_version_id == prev.version_id
    assert len({v.version_id for v in versions}) == n


def test_a_version_hashes_its_normalized_body():
    v = element().next_version(
        title="t", body="a  \r\nb\r\n\r\n", metadata={}, at=AT, provenance=CURATOR
    )
    assert v.content_sha256 == content_sha256("a\nb")


def test_a_retired_element_takes_no_new_versions():
    el = element()
    el.retire(AT, "user:curator", legal_hold=False)
    with pytest.raises(FailedPrecondition, match="retired"):
        el.next_version(title="t", body="b", metadata={}, at=AT, provenance=CURATOR)


def test_retirement_is_blocked_by_a_legal_hold():
    el = element()
    with pytest.raises(LegalHoldActive):
        el.retire(AT, "user:curator", legal_hold=True)
    assert not el.retired


def test_an_element_cannot_be_retired_twice():
    el = element()
    el.retire(AT, "user:curator", legal_hold=False)
    with pytest.raises(FailedPrecondition):
        el.retire(AT, "user:curator", legal_hold=False)


def test_erasure_leaves_a_tombstone_that_keeps_ids_hash_and_seq():
    v = element().next_version(
        title="t", body="secret", metadata={"tag": "x"}, at=AT, provenance=CURATOR
    )
    tomb = v.erase(AT, "user:admin", "GDPR request")
    assert tomb.erased
    assert tomb.body == ERASED_BODY
    assert tomb.metadata == {}
    assert (tomb.version_id, tomb.content_sha256, tomb.seq, tomb.element_id) == (
        v.version_id,
        v.content_sha256,
        v.seq,
        v.element_id,
    )
    assert (tomb.erased_by, tomb.erasure_reason) == ("user:admin", "GDPR request")
    with pytest.raises(FailedPrecondition, match="already erased"):
        tomb.erase(AT, "user:admin", "again")


def test_a_governance_pin_needs_a_target_version():
    with pytest.raises(InvalidArgument, match="target_version_id"):
        Relationship.new(
            "acme/eng/platform",
            RelationshipKind.REFERENCE,
            "ameide:curation.accepted_as",
            "el_00000001",
            "el_00000002",
            {},
            AT,
            "user:curator",
        )
    rel = Relationship.new(
        "acme/eng/platform",
        RelationshipKind.REFERENCE,
        "ameide:curation.accepted_as",
        "el_00000001",
        "el_00000002",
        {"target_version_id": "ver_00000003"},
        AT,
        "user:curator",
    )
    assert rel.target_version_id == "ver_00000003"


def test_an_ordinary_relationship_needs_no_pin_but_cannot_link_an_element_to_itself():
    rel = Relationship.new(
        "acme/eng/platform",
        RelationshipKind.SEMANTIC,
        "ameide:related",
        "el_00000001",
        "el_00000002",
        {},
        AT,
        "user:curator",
    )
    assert rel.target_version_id is None
    with pytest.raises(InvalidArgument, match="itself"):
        Relationship.new(
            "acme/eng/platform",
            RelationshipKind.SEMANTIC,
            "ameide:related",
            "el_00000001",
            "el_00000001",
            {},
            AT,
            "user:curator",
        )
