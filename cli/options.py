"""Options shared by many commands, declared once so their names and help stay consistent."""

from __future__ import annotations

from typing import Annotated

import typer

from cli.completion import complete_repository

JsonFlag = Annotated[
    bool,
    typer.Option(
        "--json",
        help="Print exactly one JSON document (docs/product.md field names) instead of text; "
        'errors become {"error": {code, message, details}}.',
    ),
]
Repo = Annotated[
    str,
    typer.Option(
        "--repo",
        metavar="TENANT/ORG/REPO",
        help="The repository, as TENANT/ORG/REPO.",
        autocompletion=complete_repository,
    ),
]
BodyFile = Annotated[
    str,
    typer.Option(
        "--body-file",
        metavar="FILE",
        help="File holding the body (UTF-8 markdown/text, at most 2 MiB); '-' reads stdin.",
    ),
]
AsOf = Annotated[
    str | None,
    typer.Option(
        "--as-of",
        metavar="TIMESTAMP",
        help="Answer as recorded at this instant: ISO-8601 date or date-time "
        "(Z or an offset; no zone means UTC).",
        show_default=False,
    ),
]
Reason = Annotated[
    str | None,
    typer.Option("--reason", help="Why; recorded in the audit log.", show_default=False),
]
Rationale = Annotated[
    str | None,
    typer.Option("--rationale", help="Why; recorded in the decision artifact.", show_default=False),
]
TypeKey = Annotated[
    str,
    typer.Option("--type-key", help="Namespaced type of the element, e.g. ameide:sop."),
]
ElementKindOpt = Annotated[
    str,
    typer.Option("--kind", help="Element kind: DOCUMENT, MODEL, VIEW or NOTE."),
]
ClassificationOpt = Annotated[
    str | None,
    typer.Option(
        "--classification",
        help="public, internal, confidential or restricted (default internal; "
        "at most your clearance).",
        show_default=False,
    ),
]
MetadataFile = Annotated[
    str | None,
    typer.Option(
        "--metadata-file",
        metavar="FILE",
        help="JSON object of version metadata (tags, effective_from, status, ...); '-' = stdin.",
        show_default=False,
    ),
]
