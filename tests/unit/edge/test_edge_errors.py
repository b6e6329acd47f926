"""``edge.errors``: the one error table every surface answers from, and the one error body."""

from __future__ import annotations

import pytest

from domain import errors
from edge.errors import (
    ERROR_TABLE,
    INTERNAL,
    MAX_DETAILS_CHARS,
    Unavailable,
    details_text,
    error_body,
    json_details,
    one_line,
    problems,
    rule_for,
)


def _taxonomy() -> list[type[errors.AmeideError]]:
    found, todo = [], [errors.AmeideError]
    while todo:
        cls = todo.pop()
        found.append(cls)
        todo += cls.__subclasses__()
    return [c for c in found if c.__module__ == "domain.errors" and c is not errors.AmeideError]


@pytest.mark.parametrize(
    ("cls", "http", "grpc", "exit_code"),
    [
        (errors.InvalidArgument, 400, "INVALID_ARGUMENT", 2),
        (errors.Unauthenticated, 401, "UNAUTHENTICATED", 7),
        (errors.PermissionDenied, 403, "PERMISSION_DENIED", 4),
        (errors.NotFound, 404, "NOT_FOUND", 3),
        (errors.AlreadyExists, 409, "ALREADY_EXISTS", 6),
        (errors.Conflict, 409, "ABORTED", 6),
        (errors.FailedPrecondition, 412, "FAILED_PRECONDITION", 5),
        (errors.StaleProposal, 412, "FAILED_PRECONDITION", 5),
        (errors.ProposalConflicted, 412, "FAILED_PRECONDITION", 5),
        (errors.LegalHoldActive, 412, "FAILED_PRECONDITION", 5),
        (Unavailable, 503, "UNAVAILABLE", 8),
    ],
)
def test_each_error_class_has_one_status_per_surface(
    cls: type[errors.AmeideError], http: int, grpc: str, exit_code: int
) -> None:
    rule = rule_for(cls("boom"))
    assert (rule.http_status, rule.grpc_status, rule.exit_code) == (http, grpc, exit_code)


def test_every_class_of_the_taxonomy_is_mapped_and_the_table_names_no_stray_class() -> None:
    assert [c.__name__ for c in _taxonomy() if rule_for(c) is INTERNAL] == []
    assert set(ERROR_TABLE) <= {*_taxonomy(), Unavailable}


def test_a_subclass_takes_its_nearest_listed_ancestors_rule_and_advice_can_be_finer() -> None:
    class Frozen(errors.LegalHoldActive):
        code = "FROZEN"

    assert rule_for(Frozen("x")) == rule_for(errors.FailedPrecondition)
    stale = rule_for(errors.StaleProposal("x"))
    assert stale.http_status == 412
    assert "memory.get_element" in stale.advice


def test_an_error_outside_the_taxonomy_is_internal() -> None:
    assert rule_for(errors.AmeideError("bug")) is INTERNAL
    assert (INTERNAL.http_status, INTERNAL.grpc_status, INTERNAL.exit_code) == (500, "INTERNAL", 1)


def test_the_error_body_is_code_message_details_and_copies_the_details() -> None:
    details = {"field": "title"}
    body = error_body("INVALID_ARGUMENT", "title is required", details)
    assert body == {
        "error": {"code": "INVALID_ARGUMENT", "message": "title is required", "details": details}
    }
    assert body["error"]["details"] is not details
    assert error_body("NOT_FOUND", "gone")["error"]["details"] == {}


def test_details_become_plain_json_and_huge_ones_are_truncated_for_headers() -> None:
    error = errors.NotFound("gone", when=object.__new__(object), ids=["el_1"])
    assert json_details(error)["ids"] == ["el_1"]
    assert isinstance(json_details(error)["when"], str)
    assert details_text(errors.Conflict("x", b=1, a=2)) == '{"a": 2, "b": 1}'
    huge = errors.InvalidArgument("x", blob="y" * MAX_DETAILS_CHARS)
    assert details_text(huge) == '{"truncated": true}'


def test_validation_problems_read_as_location_and_message_capped_and_counted() -> None:
    found = [
        {"loc": ("body", "title"), "msg": "Field required"},
        {"loc": (), "msg": "Value error, give a query"},
        {"loc": ("budget", "max_items"), "msg": "Input should be less than or equal to 50"},
    ]
    assert problems(found, limit=20) == [
        "body.title: Field required",
        "give a query",
        "budget.max_items: Input should be less than or equal to 50",
    ]
    assert problems(found, limit=2, where="arguments", count_more=True) == [
        "body.title: Field required",
        "arguments: give a query",
        "… and 1 more",
    ]


def test_a_message_is_kept_on_one_line() -> None:
    assert one_line("boom\n  at line 2\tend") == "boom at line 2 end"
