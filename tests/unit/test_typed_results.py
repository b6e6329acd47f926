"""Every operation of the service answers with a typed result (issue 29): a pydantic model of
``service.results*`` (or a list of them, or a plain scalar), never ``dict`` or ``Any``. Read
from the source (the annotation as written), so a ``dict[str, Any]`` that comes back fails here
before any surface renames it."""

from __future__ import annotations

import ast
import inspect
import textwrap

import pytest

from service.app import operations, use_case

UNTYPED = {"dict", "Dict", "Any", "Mapping", "MutableMapping", "object"}


def _return_annotation(operation: str) -> str:
    source = textwrap.dedent(inspect.getsource(use_case(operation)))
    node = ast.parse(source).body[0]
    assert isinstance(node, ast.FunctionDef)
    assert node.returns is not None, f"{operation} has no return annotation"
    return ast.unparse(node.returns)


def _untyped_names(annotation: str) -> set[str]:
    tree = ast.parse(annotation, mode="eval")
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    names |= {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
    return names & UNTYPED


def test_no_operation_returns_a_dict_or_any() -> None:
    offenders = {}
    for name in operations():
        annotation = _return_annotation(name)
        if _untyped_names(annotation):
            offenders[name] = annotation
    assert offenders == {}


@pytest.mark.parametrize(
    ("annotation", "untyped"),
    [
        ("dict[str, Any]", True),
        ("list[dict[str, Any]]", True),
        ("typing.Any", True),
        ("Mapping[str, int]", True),
        ("ElementWithVersion", False),
        ("list[Relationship]", False),
        ("tuple[str, ...]", False),
    ],
)
def test_the_rule_reads_annotations_as_written(annotation: str, untyped: bool) -> None:
    assert bool(_untyped_names(annotation)) is untyped
