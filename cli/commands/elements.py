"""Knowledge: elements, versions, relationships, erasure."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from cli import output
from cli.completion import complete_element
from cli.inputs import parse_instant, read_body, read_json_object
from cli.options import (
    AsOf,
    BodyFile,
    ClassificationOpt,
    ElementKindOpt,
    JsonFlag,
    MetadataFile,
    Reason,
    Repo,
    TypeKey,
)
from cli.session import session

PANEL = "Knowledge"

element_app = typer.Typer(help="Canonical elements and their versions.", no_args_is_help=True)
relationship_app = typer.Typer(help="Relationships between elements.", no_args_is_help=True)

ElementId = Annotated[
    str,
    typer.Argument(
        metavar="ELEMENT_ID", help="The element (el_…).", autocompletion=complete_element
    ),
]


def register(app: typer.Typer) -> None:
    """Attach this group's commands to the root app."""
    app.add_typer(element_app, name="element", rich_help_panel=PANEL)
    app.add_typer(relationship_app, name="relationship", rich_help_panel=PANEL)
    app.command("erase", rich_help_panel=PANEL)(erase)


@element_app.command("create")
def element_create(
    ctx: typer.Context,
    repo: Repo,
    title: Annotated[str, typer.Option("--title", help="Title of version 1.")],
    body_file: BodyFile,
    type_key: TypeKey = "ameide:doc",
    classification: ClassificationOpt = None,
    kind: ElementKindOpt = "DOCUMENT",
    metadata_file: MetadataFile = None,
    json_: JsonFlag = False,
) -> None:
    """Create a canonical element directly (curator); version 1 becomes its head."""
    s = session(ctx, json_)
    s.emit(
        s.service.elements.create_element(
            s.caller,
            repo,
            title=title,
            body=read_body(body_file),
            type_key=type_key,
            element_kind=kind,
            classification=classification,
            metadata=read_json_object(metadata_file, "metadata file") if metadata_file else None,
        ),
        _show_created,
    )


def _show_created(r: dict[str, Any]) -> None:
    el, v = r["element"], r["version"]
    output.line(
        f"created element {el['element_id']} ({el['element_kind']} {el['type_key']}, "
        f"{el['classification']}) in {el['repository_id']}"
    )
    output.fields([("version", f"{v['version_id']} (seq {v['seq']}) {v['title']!r}")])


@element_app.command("list")
def element_list(
    ctx: typer.Context,
    repo: Repo,
    limit: Annotated[
        int, typer.Option("--limit", min=1, max=200, help="At most this many elements.")
    ] = 50,
    cursor: Annotated[
        str | None,
        typer.Option(
            "--cursor", metavar="ELEMENT_ID", help="Continue after a page (its next cursor)."
        ),
    ] = None,
    json_: JsonFlag = False,
) -> None:
    """Canonical pages and evidence of a repository you may read, in id order, a page at a time:
    id, title, kind, trust, classification, head."""
    s = session(ctx, json_)
    s.emit(
        s.service.discovery.list_elements(s.caller, repo, limit=limit, cursor=cursor), _show_page
    )


def _show_page(page: dict[str, Any]) -> None:
    output.table(
        page["elements"],
        [
            ("element_id", "element"),
            ("source_kind", "trust"),
            ("classification", "classification"),
            ("element_kind", "kind"),
            ("head_version_id", "head"),
            ("retired_at", "retired"),
            ("title", "title"),
        ],
        empty="no elements you may read",
    )
    if page["next_cursor"]:
        output.line(f"more: --cursor {page['next_cursor']}", style="dim")


@element_app.command("show")
def element_show(
    ctx: typer.Context,
    element_id: ElementId,
    version: Annotated[
        str | None,
        typer.Option("--version", metavar="VERSION_ID", help="Show this version, not the head."),
    ] = None,
    as_of: AsOf = None,
    json_: JsonFlag = False,
) -> None:
    """Show an element with its head version (or a given version, or the head as of an instant)."""
    s = session(ctx, json_)
    s.emit(
        s.service.elements.get_element(
            s.caller, element_id, version, parse_instant(as_of, "--as-of")
        ),
        _show_element,
    )


def _show_element(r: dict[str, Any]) -> None:
    el, v = r["element"], r["version"]
    output.heading(v["title"] if v else el["element_id"])
    output.fields(
        [
            ("element", f"{el['element_id']} in {el['repository_id']}"),
            ("kind", f"{el['element_kind']} {el['type_key']} {el['source_kind']}"),
            ("classification", el["classification"]),
            ("created", f"{el['created_at']} by {el['created_by']}"),
            ("retired", el["retired_at"]),
            *(_version_rows(v) if v else []),
        ]
    )
    if v:
        output.block(_erased_note(v) or v.get("body"), "body")


def _version_rows(v: dict[str, Any]) -> list[tuple[str, Any]]:
    return [
        (
            "version",
            f"{v['version_id']} (seq {v['seq']}, parent {output.show(v['parent_version_id'])})",
        ),
        ("recorded", f"{v['recorded_at']} by {v['provenance']['actor_id']}"),
        ("sha256", v["content_sha256"]),
    ]


def _erased_note(v: dict[str, Any]) -> str | None:
    e = v.get("erasure")
    return f"[erased at {e['erased_at']} by {e['erased_by']}: {e['reason']}]" if e else None


@element_app.command("history")
def element_history(ctx: typer.Context, element_id: ElementId, json_: JsonFlag = False) -> None:
    """Every version of an element, oldest first."""
    s = session(ctx, json_)
    s.emit(s.service.elements.element_history(s.caller, element_id), _show_history)


def _show_history(r: dict[str, Any]) -> None:
    el = r["element"]
    output.heading(f"element {el['element_id']} ({el['type_key']}) head {el['head_version_id']}")
    output.table(
        r["versions"],
        [
            ("seq", "seq"),
            ("version_id", "version"),
            ("recorded_at", "recorded at"),
            ("provenance.actor_id", "by"),
            ("erased", "erased"),
            ("title", "title"),
        ],
        empty="no versions",
    )


@element_app.command("retire")
def element_retire(
    ctx: typer.Context, element_id: ElementId, reason: Reason = None, json_: JsonFlag = False
) -> None:
    """Retire an element (curator); refused under legal hold. Earlier as-of reads still see it."""
    s = session(ctx, json_)
    s.emit(
        s.service.elements.retire_element(s.caller, element_id, reason),
        lambda r: output.line(
            f"retired element {r['element']['element_id']} at {r['element']['retired_at']}"
        ),
    )


@relationship_app.command("add")
def relationship_add(
    ctx: typer.Context,
    source: Annotated[str, typer.Option("--source", metavar="ELEMENT_ID", help="From element.")],
    target: Annotated[str, typer.Option("--target", metavar="ELEMENT_ID", help="To element.")],
    kind: Annotated[str, typer.Option("--kind", help="SEMANTIC, CONTAINMENT or REFERENCE.")],
    type_key: Annotated[
        str, typer.Option("--type-key", help="Namespaced type, e.g. ameide:cites.")
    ],
    target_version: Annotated[
        str | None,
        typer.Option(
            "--target-version",
            metavar="VERSION_ID",
            help="Pin the relationship to this version of the target (metadata.target_version_id).",
        ),
    ] = None,
    json_: JsonFlag = False,
) -> None:
    """Add a relationship between two elements of one repository (curator)."""
    s = session(ctx, json_)
    metadata = {"target_version_id": target_version} if target_version else None
    s.emit(
        s.service.elements.add_relationship(
            s.caller, source, target, kind=kind, type_key=type_key, metadata=metadata
        ),
        _show_relationship,
    )


def _show_relationship(r: dict[str, Any]) -> None:
    pin = r["metadata"].get("target_version_id")
    state = f"retired at {r['retired_at']}" if r["retired_at"] else f"recorded {r['recorded_at']}"
    output.line(
        f"relationship {r['relationship_id']}: {r['relationship_kind']} {r['type_key']} "
        f"{r['source_element_id']} -> {r['target_element_id']}"
        + (f" @ {pin}" if pin else "")
        + f" ({state})"
    )


@relationship_app.command("retire")
def relationship_retire(
    ctx: typer.Context,
    relationship_id: Annotated[
        str, typer.Argument(metavar="REL_ID", help="The relationship (rel_…).")
    ],
    json_: JsonFlag = False,
) -> None:
    """Retire a relationship (curator); earlier as-of reads still see it."""
    s = session(ctx, json_)
    s.emit(s.service.elements.retire_relationship(s.caller, relationship_id), _show_relationship)


@relationship_app.command("list")
def relationship_list(
    ctx: typer.Context, element_id: ElementId, as_of: AsOf = None, json_: JsonFlag = False
) -> None:
    """Relationships of an element (both directions) whose other end you may read."""
    s = session(ctx, json_)
    s.emit(
        s.service.elements.list_relationships(
            s.caller, element_id, parse_instant(as_of, "--as-of")
        ),
        lambda rows: output.table(
            rows,
            [
                ("relationship_id", "relationship"),
                ("relationship_kind", "kind"),
                ("type_key", "type"),
                ("source_element_id", "source"),
                ("target_element_id", "target"),
                ("metadata.target_version_id", "pinned version"),
                ("recorded_at", "recorded at"),
                ("retired_at", "retired at"),
            ],
            empty=f"no relationships of {element_id}",
        ),
    )


def erase(
    ctx: typer.Context,
    version_id: Annotated[str, typer.Argument(metavar="VERSION_ID", help="The version (ver_…).")],
    reason: Annotated[str, typer.Option("--reason", help="Why (required; audited).")],
    json_: JsonFlag = False,
) -> None:
    """Erase a version's content (admin; right to be forgotten): ids, hash and audit remain.

    Every identical copy in the repository (a proposal's body included) is erased with it, and
    stored read contexts that showed the text keep only a note; their citations still verify.
    """
    s = session(ctx, json_)
    s.emit(
        s.service.erasure.erase_version(s.caller, version_id, reason),
        lambda v: output.line(
            f"erased version {v['version_id']} of {v['element_id']}; "
            f"content_sha256 {v['content_sha256']} kept"
        ),
    )
