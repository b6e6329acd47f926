"""Reading rules: the read scope text, instants (``domain.values``), grant scopes, defaults."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from domain.errors import InvalidArgument
from domain.values import describe_problem, parse_instant, parse_scope, require_zone
from edge.reading import DEFAULT_MAX_CHARS, DEFAULT_MAX_ITEMS, read_request, read_scope
from service.reading.request import parse_request

MALFORMED = "malformed {name} {text!r}"


def test_an_instant_with_a_zone_is_read_in_utc() -> None:
    assert parse_instant(" 2026-01-31T12:00:00Z ", "as_of", field="as_of", malformed="") == (
        datetime(2026, 1, 31, 12, tzinfo=UTC)
    )
    shifted = parse_instant("2026-01-31T14:00:00+02:00", "as_of", field="as_of", malformed="")
    assert shifted == datetime(2026, 1, 31, 12, tzinfo=UTC)
    assert shifted.utcoffset() == timedelta(0)


@pytest.mark.parametrize("text", ["2026-01-31T12:00:00", "2026-01-31"])
def test_a_time_without_a_zone_is_refused_and_so_is_a_date_alone(text: str) -> None:
    with pytest.raises(InvalidArgument, match="--since needs a time zone") as refused:
        parse_instant(text, "--since", field="since", malformed=MALFORMED)
    assert refused.value.details == {"field": "since"}


def test_an_unreadable_instant_is_worded_by_the_surface_that_asked() -> None:
    with pytest.raises(InvalidArgument) as refused:
        parse_instant("yesterday", "as_of", field="as_of", malformed=MALFORMED)
    assert refused.value.message == "malformed as_of 'yesterday'"


def test_an_aware_datetime_is_normalised_and_a_naive_one_refused() -> None:
    east = timezone(timedelta(hours=5))
    assert require_zone(datetime(2026, 1, 1, 5, tzinfo=east), "as_of", field="as_of") == datetime(
        2026, 1, 1, tzinfo=UTC
    )
    with pytest.raises(InvalidArgument, match="needs a time zone"):
        require_zone(datetime(2026, 1, 1), "as_of", field="as_of")


def test_a_read_request_follows_the_same_instant_rule() -> None:
    request = {"scope": {"tenant_id": "t", "organization_id": "o"}, "query": "q"}
    with pytest.raises(InvalidArgument, match="as_of: the instant needs a time zone"):
        parse_request({**request, "as_of": "2026-01-01T00:00:00"})
    read = parse_request({**request, "as_of": "2026-01-01T02:00:00+02:00"})
    assert read.as_of == datetime(2026, 1, 1, tzinfo=UTC)
    assert (read.budget.max_items, read.budget.max_chars) == (DEFAULT_MAX_ITEMS, DEFAULT_MAX_CHARS)


@pytest.mark.parametrize(
    ("text", "repository"), [("acme/eng/platform", "platform"), (" acme/eng ", None)]
)
def test_a_read_scope_is_a_repository_or_an_organization(text: str, repository: str | None) -> None:
    scope = {"tenant_id": "acme", "organization_id": "eng", "repository_id": repository}
    assert read_scope(text) == scope


@pytest.mark.parametrize("text", ["acme", "acme//x", "a/b/c/d", "/eng"])
def test_any_other_read_scope_is_refused_in_one_wording(text: str) -> None:
    with pytest.raises(InvalidArgument) as refused:
        read_scope(text)
    assert refused.value.message == (
        f"malformed repository {text!r}: expected TENANT/ORG/REPO or TENANT/ORG"
    )
    assert refused.value.details == {"field": "repository"}


def test_a_read_request_is_built_from_text_leaving_the_rest_to_the_defaults() -> None:
    read = read_request("acme/eng", "deploy", as_of=" ", max_items=3, explain=True)
    assert (read.scope.org_key, read.scope.repo_key, read.query) == ("acme/eng", None, "deploy")
    assert read.as_of is None  # a blank form field is no instant
    assert (read.budget.max_items, read.budget.max_chars) == (3, DEFAULT_MAX_CHARS)
    assert (read.selector.kind, read.explain, read.detail_level) == ("published", True, "excerpt")
    assert read.model_dump(exclude_unset=True).keys() == {"scope", "query", "budget", "explain"}
    pinned = read_request("acme/eng/x", None, selector="version_ref", version_ids=["ver_1"])
    assert pinned.wanted_version_ids == ("ver_1",)


@pytest.mark.parametrize(
    ("given", "message"),
    [
        ({"as_of": "yesterday"}, "as_of: unparsable instant 'yesterday'"),
        ({"valid_at": "2026-01-01"}, "valid_at: the instant needs a time zone"),
        ({"selector": "newest"}, "selector.kind: unknown selector 'newest'"),
        ({"baseline_id": "bl_1"}, "selector published takes no baseline_id"),
        ({"max_items": 0}, "budget.max_items: Input should be greater than or equal to 1"),
    ],
)
def test_a_bad_read_is_refused_by_the_request_model_in_its_words(
    given: dict[str, object], message: str
) -> None:
    with pytest.raises(InvalidArgument) as refused:
        read_request("acme/eng/x", "q", **given)  # type: ignore[arg-type]
    assert refused.value.message.startswith("invalid read_context request: ")
    assert message in refused.value.message


@pytest.mark.parametrize("scope", ["*", "acme", "acme/eng", "acme/eng/platform"])
def test_a_grant_scope_is_everything_a_tenant_an_org_or_a_repository(scope: str) -> None:
    assert parse_scope(scope) == scope


@pytest.mark.parametrize("scope", ["", "acme/", "a/b/c/d", "acme/-eng", "**"])
def test_a_malformed_grant_scope_is_refused(scope: str) -> None:
    with pytest.raises(InvalidArgument, match="malformed scope"):
        parse_scope(scope)


def test_a_validation_problem_reads_as_location_then_message() -> None:
    assert describe_problem({"loc": ("a", 0, "b"), "msg": "Value error, too long"}) == (
        "a.0.b: too long"
    )
    assert describe_problem({"loc": ("__root__",), "msg": "empty"}, "arguments") == (
        "arguments: empty"
    )
