"""Shell completion of values, not only of commands: repositories, element ids, proposal ids
and ``--status`` values (``ameide --install-completion`` installs the shell's hook).

Ids come from the service, as the principal the command line would act as (``--as``, else the
saved admin) and only what it may read — through the very calls ``repo list``, ``element
list`` and ``proposal list`` make, so the reads are in the access log with the purpose "shell
completion". Completion must never get in the way of typing: anything that fails (no
database yet, no principal, a malformed ``--home``) completes nothing, silently — no traceback,
no log line on the terminal.
"""

from __future__ import annotations

import contextlib
import io
import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import typer

from cli.session import CliState
from domain.model import ProposalStatus
from edge.results import as_json

MAX_REPOSITORIES = 20
"""Element and proposal ids are gathered from at most this many repositories (without --repo)."""
PAGE = 200


@contextlib.contextmanager
def _quiet() -> Iterator[None]:
    """No log record and nothing on stderr while completing."""
    logging.disable(logging.CRITICAL)
    try:
        with contextlib.redirect_stderr(io.StringIO()):
            yield
    finally:
        logging.disable(logging.NOTSET)


def _state(ctx: typer.Context) -> CliState:
    """The invocation's global options as far as the shell has typed them."""
    params: dict[str, Any] = ctx.find_root().params
    return CliState(
        home=Path(params.get("home") or ".ameide"),
        database_url=params.get("database_url"),
        principal=params.get("principal"),
        on_behalf_of=params.get("on_behalf_of"),
        purpose="shell completion",
    )


def _silently(find: Callable[[CliState, typer.Context], list[str]]) -> Any:
    """A Typer ``autocompletion`` callback over ``find``: the values starting with what was
    typed, in order, or none at all when anything fails."""

    def complete(ctx: typer.Context, incomplete: str) -> list[str]:
        state = _state(ctx)
        try:
            with _quiet():
                found = find(state, ctx)
        except Exception:  # completion fails silent, whatever went wrong
            return []
        finally:
            with contextlib.suppress(Exception):
                state.close()
        return [value for value in dict.fromkeys(found) if value.startswith(incomplete)]

    return complete


def _repositories(state: CliState, ctx: typer.Context) -> list[str]:
    given = ctx.params.get("repo")
    if given:
        return [str(given)]
    rows = as_json(state.service.discovery.list_repositories(state.caller))
    return [str(r["repository_id"]) for r in rows][:MAX_REPOSITORIES]


def _repository_ids(state: CliState, _: typer.Context) -> list[str]:
    return [
        str(r["repository_id"])
        for r in as_json(state.service.discovery.list_repositories(state.caller))
    ]


def _element_ids(state: CliState, ctx: typer.Context) -> list[str]:
    found: list[str] = []
    for repo in _repositories(state, ctx):
        with contextlib.suppress(Exception):  # a repository listed but not readable: skip it
            page = as_json(state.service.discovery.list_elements(state.caller, repo, limit=PAGE))
            found += [str(e["element_id"]) for e in page["elements"]]
    return found


def _proposal_ids(state: CliState, ctx: typer.Context) -> list[str]:
    from service.governance.queue import QueueFilter

    found: list[str] = []
    for repo in _repositories(state, ctx):
        with contextlib.suppress(Exception):  # may read, but not list the queue: skip it
            rows = as_json(
                state.service.curation.proposal_list(
                    state.caller, repo, None, QueueFilter(limit=PAGE)
                )
            )
            found += [str(p["proposal_id"]) for p in rows]
    return found


def complete_status(incomplete: str) -> list[str]:
    """``--status`` of the proposal queue."""
    return [s.value for s in ProposalStatus if s.value.startswith(incomplete)]


complete_repository = _silently(_repository_ids)
complete_element = _silently(_element_ids)
complete_proposal = _silently(_proposal_ids)
