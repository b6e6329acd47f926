"""MCP prompts: the two workflows an agent most often gets wrong, as ready-made instructions a
user picks in the client (``prompts/list``, ``prompts/get``).

- ``cite-sources``: answer a question from the memory only, citing every claim by version and
  checking the citations before answering.
- ``propose-change``: suggest an edit to a page the governed way — read the head, write the whole
  new body, propose it pinned to that version (a curator decides).

A prompt is text about the tools; it calls nothing and reads nothing, so it needs no caller. Tool
names follow the server's spelling (``memory.get_context`` or ``memory_get_context``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    GetPromptResult,
    Prompt,
    PromptArgument,
    PromptMessage,
    TextContent,
)


@dataclass(frozen=True)
class PromptSpec:
    """One prompt: its listing and how its text is made from the arguments."""

    name: str
    title: str
    description: str
    arguments: tuple[PromptArgument, ...]
    render: Callable[[dict[str, str], Callable[[str], str]], str]

    def listed(self) -> Prompt:
        """The ``prompts/list`` entry."""
        return Prompt(
            name=self.name,
            title=self.title,
            description=self.description,
            arguments=list(self.arguments),
        )

    def get(self, arguments: dict[str, str], tool: Callable[[str], str]) -> GetPromptResult:
        """The ``prompts/get`` answer: one user message (missing arguments are refused)."""
        missing = [a.name for a in self.arguments if a.required and not arguments.get(a.name)]
        if missing:
            raise MCPError(
                INVALID_PARAMS, f"prompt {self.name!r} needs the argument(s) {', '.join(missing)}"
            )
        text = self.render(arguments, tool)
        return GetPromptResult(
            description=self.description,
            messages=[PromptMessage(role="user", content=TextContent(type="text", text=text))],
        )


def _cite_sources(args: dict[str, str], tool: Callable[[str], str]) -> str:
    return (
        f"Answer this question from the team memory in {args['repository']}: "
        f"{args['question']}\n\n"
        f"1. Call {tool('memory.get_context')} with repository {args['repository']!r} and the "
        "question as query. Published items come first; evidence items are lower-trust.\n"
        "2. Answer only from the returned items. After each claim, cite the item it comes "
        "from by its title and version_id; never cite what you did not read.\n"
        f"3. Before answering, call {tool('memory.verify_citations')} with the context_id and "
        "the citations you used (copied from the items), and drop or fix any it does not "
        "confirm.\n"
        "4. If the items do not answer the question, say so instead of guessing."
    )


def _propose_change(args: dict[str, str], tool: Callable[[str], str]) -> str:
    return (
        f"Propose this change to the page {args['element_id']}: {args['change']}\n\n"
        f"1. Call {tool('memory.get_element')} with element_id {args['element_id']!r}; note "
        "its repository and the head version_id.\n"
        "2. Write the complete new body (markdown): the head's body with the change applied, "
        "nothing else rewritten.\n"
        f"3. Call {tool('memory.propose')} with that repository, element_id, target_version_id "
        "= the head version you read, the new body and a one-line summary of what changes and "
        "why. A curator reviews it; you do not change the page yourself.\n"
        "4. If the answer says the proposal is stale, the page changed meanwhile: read it again "
        "and propose against the new head."
    )


PROMPTS: tuple[PromptSpec, ...] = (
    PromptSpec(
        name="cite-sources",
        title="Answer from the memory, citing sources",
        description="Answer a question from the governed memory only, citing every claim by "
        "version and checking the citations.",
        arguments=(
            PromptArgument(name="question", description="What to answer.", required=True),
            PromptArgument(
                name="repository",
                description="Where to read: TENANT/ORG/REPO, or TENANT/ORG for every "
                "repository of the organization you may read.",
                required=True,
            ),
        ),
        render=_cite_sources,
    ),
    PromptSpec(
        name="propose-change",
        title="Propose a change to this page",
        description="Suggest an edit to a page as a proposal pinned to the version read; a "
        "curator accepts or rejects it.",
        arguments=(
            PromptArgument(name="element_id", description="The page (el_…).", required=True),
            PromptArgument(
                name="change", description="What should change, and why.", required=True
            ),
        ),
        render=_propose_change,
    ),
)
BY_NAME = {p.name: p for p in PROMPTS}


def prompt_named(name: str) -> PromptSpec:
    """The prompt called ``name`` (else INVALID_PARAMS naming the ones there are)."""
    spec = BY_NAME.get(name)
    if spec is None:
        raise MCPError(INVALID_PARAMS, f"unknown prompt {name!r}; there are: {', '.join(BY_NAME)}")
    return spec
