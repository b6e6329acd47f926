"""Input rules at the edge of the domain: scopes, principals, ids, bodies, enumerations."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from domain.errors import InvalidArgument
from domain.model import Element, Provenance
from domain.permissions import Role
from domain.values import (
    MAX_BODY_BYTES,
    Classification,
    RepoRef,
    SourceKind,
    content_sha256,
    new_id,
    normalized_body,
    replace_lone_surrogates,
    validate_body,
    validate_id,
    validate_metadata,
    validate_principal,
    validate_text,
    validate_type_key,
)


def test_a_well_formed_repository_scope_parses_into_its_three_parts():
    ref = RepoRef.parse("acme/eng/platform")
    assert (ref.tenant_id, ref.organization_id, ref.repository_id) == ("acme", "eng", "platform")
    assert ref.key == "acme/eng/platform"
    assert ref.org_key == "acme/eng"


@pytest.mark.parametrize(
    "text",
    [
        "",
        "acme",
        "acme/eng",
        "acme/eng/platform/extra",
        "acme//platform",
        "/eng/platform",
        "acme/eng/plat form",
        "acme/eng/-platform",
        "acme/eng/" + "p" * 64,
        "acme/eng/plat\nform",
        "../eng/platform",
    ],
)
def test_a_malformed_repository_scope_is_refused_with_the_expected_shape(text: str):
    with pytest.raises(InvalidArgument, match="TENANT/ORG/REPO") as err:
        RepoRef.parse(text)
    assert err.value.details["field"] == "repository"


@pytest.mark.parametrize("principal", ["user:alice", "agent:planner-1", "service:ingest.bot"])
def test_principals_are_typed_ids(principal: str):
    assert validate_principal(principal) == principal


@pytest.mark.parametrize("principal", ["alice", "robot:x", "user:", "user: alice", "", "user:a/b"])
def test_a_malformed_principal_is_refused(principal: str):
    with pytest.raises(InvalidArgument, match="malformed principal"):
        validate_principal(principal)


@given(prefix=st.sampled_from(["el", "ver", "prop", "bl", "rel", "dec", "mv"]))
def test_every_new_id_is_a_valid_id_of_its_kind(prefix: str):
    value = new_id(prefix)
    assert validate_id(value, prefix, "thing") == value


@pytest.mark.parametrize(
    "value", ["", "el_", "el_xyz", "ver_0123456789ab", "EL_0123456789ab", "el_0123' OR 1=1", 7]
)
def test_a_malformed_element_id_is_refused(value: object):
    with pytest.raises(InvalidArgument, match="malformed element id"):
        validate_id(value, "el", "element")  # type: ignore[arg-type]


def test_the_largest_allowed_body_is_accepted_and_one_byte_more_is_refused_naming_the_limit():
    assert validate_body("x" * MAX_BODY_BYTES)
    with pytest.raises(InvalidArgument, match="2 MiB") as err:
        validate_body("x" * (MAX_BODY_BYTES + 1))
    assert str(MAX_BODY_BYTES) in err.value.message


def test_the_body_limit_counts_utf8_bytes_not_characters():
    with pytest.raises(InvalidArgument, match="2 MiB"):
        validate_body("é" * (MAX_BODY_BYTES // 2 + 1))


@pytest.mark.parametrize("body", ["", "   ", "\n\n\t", "a\x00b"])
def test_empty_or_binary_bodies_are_refused(body: str):
    with pytest.raises(InvalidArgument):
        validate_body(body)


def test_a_body_that_is_not_text_is_refused():
    with pytest.raises(InvalidArgument, match="must be text"):
        validate_body(b"bytes")  # type: ignore[arg-type]


lines_st = st.lists(st.text(alphabet="ab #-\t", max_size=12), min_size=1, max_size=6)


@given(lines=lines_st, trailing=st.sampled_from(["", " ", "\t", "  "]))
def test_the_content_hash_ignores_line_endings_and_trailing_whitespace(
    lines: list[str], trailing: str
):
    lf = "\n".join(lines)
    crlf = "\r\n".join(line + trailing for line in lines) + "\r\n\r\n"
    assert content_sha256(lf) == content_sha256(crlf)
    assert normalized_body(crlf) == normalized_body(lf)


def test_the_content_hash_changes_when_the_text_changes():
    assert content_sha256("step one") != content_sha256("step two")


@pytest.mark.parametrize("value", ["secret", "", "top-secret"])
def test_an_unknown_classification_is_refused_listing_the_valid_ones(value: str):
    with pytest.raises(InvalidArgument, match="public, internal, confidential, restricted"):
        Classification.parse(value)


def test_classifications_are_ordered_from_public_to_restricted():
    order = [c.rank for c in (Classification.PUBLIC, Classification.INTERNAL)]
    order += [Classification.CONFIDENTIAL.rank, Classification.RESTRICTED.rank]
    assert order == [0, 1, 2, 3]
    assert Classification.parse(" Confidential ") is Classification.CONFIDENTIAL


def test_an_unknown_role_is_refused_listing_the_valid_ones():
    with pytest.raises(InvalidArgument, match="reader, agent, curator") as err:
        Role.parse("superuser")
    assert err.value.details["field"] == "role"


@pytest.mark.parametrize("value", ["doc", "Ameide:doc", "ameide:", ":doc", "ameide:Doc"])
def test_a_type_key_must_be_namespaced(value: str):
    with pytest.raises(InvalidArgument, match="namespace:name"):
        validate_type_key(value)


def test_free_text_is_trimmed_required_and_bounded():
    assert validate_text("  hello ", "summary", 10) == "hello"
    with pytest.raises(InvalidArgument, match="summary is required"):
        validate_text("   ", "summary", 10)
    with pytest.raises(InvalidArgument, match="limit is 10"):
        validate_text("x" * 11, "summary", 10)
    assert validate_text(None, "reason", 10, required=False) == ""


@pytest.mark.parametrize(
    ("metadata", "where"),
    [
        ({"k": "\ud800"}, "metadata.k"),
        ({"tags": ["ok", "tag\udfffx"]}, "metadata.tags[1]"),
        ({"a": {"b": [{"c": "x\udbff"}]}}, "metadata.a.b[0].c"),
        ({"\ud800": 1}, "metadata key '\\ud800'"),
    ],
)
def test_metadata_holding_a_lone_surrogate_anywhere_is_refused_naming_where(metadata, where):
    with pytest.raises(InvalidArgument) as err:
        validate_metadata(metadata)
    assert err.value.message == f"{where} is not valid Unicode text (it holds a lone surrogate)"
    assert err.value.details["field"] == where


def test_metadata_of_valid_text_is_kept_as_given():
    metadata = {"tags": ["café", "\U0001f600"], "nested": {"n": 1, "none": None}}
    assert validate_metadata(metadata) == metadata


def test_a_version_cannot_be_built_with_text_that_cannot_be_stored():
    """The last guard on every write path: ``Element.next_version``."""
    el = Element.new(
        "acme/eng/platform", kind="DOCUMENT", type_key="ameide:doc",
        source_kind=SourceKind.CANONICAL, classification=Classification.INTERNAL,
        at=datetime.now(UTC), by="user:carol",
    )  # fmt: skip
    prov = Provenance("user", "user:carol", None)
    at = datetime.now(UTC)
    with pytest.raises(InvalidArgument, match=r"metadata\.tags\[0\] is not valid Unicode"):
        el.next_version(
            title="T", body="# b", metadata={"tags": ["\udc80"]}, at=at, provenance=prov
        )
    with pytest.raises(InvalidArgument, match="title is not valid Unicode"):
        el.next_version(title="T\ud800", body="# b", metadata={}, at=at, provenance=prov)
    assert el.next_version(title="T", body="# b", metadata={}, at=at, provenance=prov).seq == 1


def test_text_that_was_stored_with_lone_surrogates_reads_back_with_replacement_characters():
    assert replace_lone_surrogates({"k\ud800": ["a\udfffb", 1, "\U0001f600"]}) == {
        "k\ufffd": ["a\ufffdb", 1, "\U0001f600"]
    }


def test_the_written_out_blank_characters_are_exactly_what_str_isspace_says():
    """``BLANK_CHARACTERS`` is written out for start-up time; derived again here, so a Python
    whose Unicode data changed the whitespace set fails this test instead of drifting."""
    import re

    from domain.values import BLANK_CHARACTERS

    blank = re.compile(f"[{BLANK_CHARACTERS}]")
    wrong = [c for c in range(0x110000) if chr(c).isspace() != bool(blank.fullmatch(chr(c)))]
    assert wrong == []
