"""Edge rules: what every adapter (CLI, REST, gRPC, MCP) decides the same way, written once.

No framework lives here (an import-linter contract forbids FastAPI, grpc, Typer, mcp, Starlette,
uvicorn, SQLAlchemy, storage and the adapters), so each adapter imports these rules and keeps
only its transport's translation — an HTTP response, a ``grpc.StatusCode``, a process exit:

    edge.errors    the error table (class → HTTP status, gRPC status name, exit code, advice),
                   the ``{"error": {code, message, details}}`` body, validation problems
    edge.callers   bearer token / local principal + roles, on-behalf-of, purpose → ``Caller``
    edge.headers   the narrowing headers' names (and their gRPC metadata keys)
    edge.network   ``is_loopback``, refusing an open bind without auth, Origin patterns
    edge.reading   the read scope ``TENANT/ORG[/REPO]`` and the read defaults
    edge.exports   the audit history as a CSV or JSON file (spreadsheet-safe cells)
    edge.results   a service result (a pydantic model) as the JSON every surface emits

Rules the service needs as well (instants, grant scopes, how one validation problem reads) live
in ``domain.values``, which this package re-uses.
"""
