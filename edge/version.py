"""The version every surface reports (MCP ``serverInfo.version``, OpenAPI ``info.version``,
``ameide --version``): the installed package's, never a literal that drifts."""

from __future__ import annotations

DISTRIBUTION = "ameide-memory"


def package_version() -> str:
    """The installed ``ameide-memory`` version (``0+unknown`` when run from a bare checkout)."""
    # imported here: a command other than --version does not pay for importlib.metadata
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(DISTRIBUTION)
    except PackageNotFoundError:
        return "0+unknown"
