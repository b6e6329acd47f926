"""The ``ameide`` command line: global options, the command groups, and error reporting.

A thin adapter: each command parses its arguments, calls one ``MemoryService`` method and
prints the result. Failures become one line on stderr and an exit code from the one error table
(``edge.errors``); with ``--json`` the error is also printed as JSON on stdout.
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperGroup, TyperOption

from cli import output
from cli.errors import EXIT_INTERNAL, EXIT_OK, EXIT_USAGE, USAGE_ERROR_CODE, exit_code_for
from cli.options import JsonFlag
from cli.session import CliState, session
from domain.errors import AmeideError, InvalidArgument
from domain.values import lone_surrogate_at
from edge.version import package_version

try:  # recent Typer releases vendor Click privately; older ones use Click itself
    from typer._click.exceptions import ClickException, NoArgsIsHelpError
except ImportError:  # pragma: no cover
    from click.exceptions import ClickException, NoArgsIsHelpError  # type: ignore[assignment]


_typer_display_type = TyperOption.display_type_rich


def _flag_display_type(self: TyperOption, ctx: Any) -> str | None:
    """On/off options read as bare flags in --help (Typer would list ``<bool>`` after
    ``--json``, ``--dry-run`` and ``--help``, as if they took a value)."""
    if self.is_flag and self.metavar is None:
        return ""
    return _typer_display_type(self, ctx)


TyperOption.display_type_rich = _flag_display_type  # type: ignore[method-assign]


class AmeideGroup(TyperGroup):
    """The root command: owns the invocation's state and turns every failure into one line."""

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        argv = list(sys.argv[1:] if args is None else args)
        _summaries_on_one_line(self)
        state = CliState()
        extra["obj"] = state
        try:
            _require_text_arguments(self, argv)
            rv = super().main(
                argv,
                prog_name,
                complete_var,
                standalone_mode=False,
                windows_expand_args=windows_expand_args,
                **extra,
            )
            code = rv if isinstance(rv, int) else EXIT_OK
        except AmeideError as exc:
            output.error(exc.code, exc.message, exc.details, as_json=_wants_json(state, argv))
            code = exit_code_for(exc)
        except NoArgsIsHelpError as exc:
            if exc.format_message().strip():  # rich help renders itself while being built
                typer.echo(exc.format_message())
            code = exc.exit_code
        except ClickException as exc:
            output.error(USAGE_ERROR_CODE, _usage_message(exc), as_json=_wants_json(state, argv))
            code = EXIT_USAGE
        except typer.Abort:
            sys.stderr.write("aborted\n")
            code = EXIT_INTERNAL
        finally:
            state.close()
        if not standalone_mode:
            return code
        sys.exit(code)

    def invoke(self, ctx: Any) -> Any:
        """Run the command; a reader that stops reading (``ameide element show EL | head -1``)
        ends it quietly with success, as it would a pager."""
        try:
            return super().invoke(ctx)
        except BrokenPipeError:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())  # the exit flush must not fail again
            os.close(devnull)
            return EXIT_OK


def _summaries_on_one_line(command: Any) -> None:
    """A command's help as one paragraph per blank-line-separated block: Typer's rich help
    keeps a docstring's single line breaks in a group's command list, where the wrapped
    summary then broke mid-sentence (``whoami``) and lost the words past the cell's width."""
    if command.help:
        paragraphs = inspect.cleandoc(command.help).split("\n\n")
        command.help = "\n\n".join(" ".join(p.split()) for p in paragraphs)
    for sub in getattr(command, "commands", {}).values():
        _summaries_on_one_line(sub)


def _require_text_arguments(root: Any, argv: list[str]) -> None:
    """Every word of the command line must be UTF-8 text: the shell hands an invalid byte
    (``$'p\\xff'``) to Python as a lone surrogate, which could be neither stored nor printed.
    Refused here, for every argument at once, as ``INVALID_ARGUMENT`` naming the option."""
    for index, word in enumerate(argv):
        if word.isascii() or lone_surrogate_at(word, "argument") is None:
            continue
        shown = word.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        name, given = "", shown
        if word.startswith("--") and "=" in word:
            name, given = word.split("=", 1)[0], shown.split("=", 1)[1]
        elif index and argv[index - 1].startswith("-") and argv[index - 1] not in _flags(root):
            name = argv[index - 1]
        raise InvalidArgument(
            f"{name or 'an argument'} is not valid UTF-8 text: {given}", field=name or "argument"
        )


def _flags(command: Any) -> set[str]:
    """The names of every option, anywhere in the command tree, that takes no value."""
    names = {
        opt
        for param in command.params
        if getattr(param, "is_flag", False) or getattr(param, "count", False)
        for opt in (*param.opts, *param.secondary_opts)
    }
    for sub in getattr(command, "commands", {}).values():
        names |= _flags(sub)
    return names


def _wants_json(state: CliState, argv: list[str]) -> bool:
    # A usage error can stop parsing before the --json flag is read, so look at the words too.
    words = argv[: argv.index("--")] if "--" in argv else argv
    return state.json or "--json" in words


def _usage_message(exc: ClickException) -> str:
    ctx = getattr(exc, "ctx", None)
    hint = f" (see `{ctx.command_path} --help`)" if ctx is not None else ""
    return exc.format_message() + hint


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"ameide {package_version()}")
        raise typer.Exit(EXIT_OK)


def main(
    ctx: typer.Context,
    home: Annotated[
        Path,
        typer.Option(
            "--home",
            envvar="AMEIDE_HOME",
            metavar="DIR",
            help="State directory: the embedded SQLite database, the index and config.json.",
        ),
    ] = Path(".ameide"),
    database_url: Annotated[
        str | None,
        typer.Option(
            "--database-url",
            envvar="AMEIDE_DATABASE_URL",
            metavar="URL",
            help="SQLAlchemy URL, e.g. postgresql+psycopg://user@host/db "
            "(default: SQLite file HOME/ameide.db).",
            show_default=False,
        ),
    ] = None,
    principal: Annotated[
        str | None,
        typer.Option(
            "--as",
            envvar="AMEIDE_PRINCIPAL",
            metavar="PRINCIPAL",
            help="Act as this principal (user:ID, agent:ID or service:ID); default: the admin "
            "saved by `ameide init --admin`.",
            show_default=False,
        ),
    ] = None,
    on_behalf_of: Annotated[
        str | None,
        typer.Option(
            "--on-behalf-of",
            envvar="AMEIDE_ON_BEHALF_OF",
            metavar="PRINCIPAL",
            help="Act on behalf of this principal (needs a delegation grant: `ameide grant YOU "
            "delegate --for PRINCIPAL`); permissions are the intersection of both.",
            show_default=False,
        ),
    ] = None,
    purpose: Annotated[
        str | None,
        typer.Option(
            "--purpose",
            envvar="AMEIDE_PURPOSE",
            help="Why you are doing this; recorded with every read and write.",
            show_default=False,
        ),
    ] = None,
    server: Annotated[
        str | None,
        typer.Option(
            "--server",
            envvar="AMEIDE_SERVER",
            metavar="URL",
            help="Remote mode: run the command against `ameide serve` at URL over REST, as the "
            "holder of --token (commands that need the database stay local-only).",
            show_default=False,
        ),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            "--token",
            envvar="AMEIDE_TOKEN",
            metavar="TOKEN",
            help="Remote mode: the bearer token (default: the one `ameide login URL` saved); "
            "prefer AMEIDE_TOKEN or `ameide login`, which keep it out of the process list.",
            show_default=False,
        ),
    ] = None,
    json_: JsonFlag = False,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            help="Print the version of ameide and exit.",
            is_eager=True,
            callback=_print_version,
        ),
    ] = False,
) -> None:
    """Global options (each also an AMEIDE_* environment variable)."""
    state = session(ctx, json_)
    state.home = home
    state.database_url = database_url
    state.principal = principal
    state.on_behalf_of = on_behalf_of
    state.purpose = purpose
    state.server = server or None
    state.token = token or None


app: typer.Typer
"""Every command (built on first use by ``__getattr__`` below)."""

MODULES: dict[str, tuple[str, ...]] = {
    "admin": ("init", "whoami", "grant", "revoke", "grants", "repo", "token", "hold"),
    "elements": ("erase", "element", "relationship"),
    "proposals": ("propose", "accept", "reject", "rebase", "withdraw", "proposal"),
    "drift": ("drift", "gaps"),
    "publish": ("promote", "rollback", "published", "baseline"),
    "audit": ("history", "access-log", "audit"),
    "read": ("context", "search", "verify-citations", "replay", "eval"),
    "ingest": ("ingest", "routing"),
    "sources": ("source",),
    "index": ("index",),
    "mcp": ("mcp",),
    "serve": ("serve",),
    "smoke": ("test",),
    "remote": ("login", "logout"),
}
"""Each module of :mod:`cli.commands` (in the order ``--help`` lists them) and the top-level
commands and groups it registers: a command line that names one is built with that module
alone."""
MODULE_OF = {command: module for module, names in MODULES.items() for command in names}
VALUED_OPTIONS = frozenset(
    ("--home", "--database-url", "--as", "--on-behalf-of", "--purpose", "--server", "--token")
)
"""The global options that take a value (the word after them is not the command)."""


def build(modules: Iterable[str] = MODULES) -> typer.Typer:
    """The ``ameide`` app with the commands of ``modules`` (every command by default)."""
    root = typer.Typer(
        cls=AmeideGroup,
        name="ameide",
        help="Ameide Memory: a governed, versioned knowledge repository for AI agents.\n\n"
        "Agents propose, curators accept or reject, publishers promote baselines, auditors "
        "replay any past state. Every command that prints a result takes --json for scripts.",
        no_args_is_help=True,
        add_completion=True,
        pretty_exceptions_show_locals=False,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    root.callback()(main)
    for name in modules:
        importlib.import_module(f"cli.commands.{name}").register(root)
    return root


def command_named(argv: Sequence[str]) -> str | None:
    """The command (or group) a command line runs, when it names one before any option of its
    own (``ameide --home H context …`` → ``context``); None for ``--help``, completion or a
    word that is no command."""
    if any(key.startswith("_AMEIDE_COMPLETE") for key in os.environ):
        return None
    words = iter(argv)
    for word in words:
        if word in VALUED_OPTIONS:
            next(words, None)
        elif not word.startswith("-"):
            return word if word in MODULE_OF else None
        elif word.split("=", 1)[0] not in VALUED_OPTIONS and word != "--json":
            return None  # --help, --version, --install-completion: the whole app answers
    return None


def __getattr__(name: str) -> Any:
    """``cli.main.app``: every command (built on first use; ``run`` builds only the one that
    a command line names — importing and declaring every command costs ~0.3 s)."""
    if name != "app":
        raise AttributeError(name)
    global app
    app = build()
    return app


def run() -> None:
    """Console-script entry point (``ameide``)."""
    command = command_named(sys.argv[1:])
    build((MODULE_OF[command],) if command else MODULES)()
