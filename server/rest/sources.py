"""``POST /v1/sources/{source_id}/hook``: a git host's push webhook for a registered source.

Authenticated by the source's secret, not a bearer token (a git host cannot send ours): GitHub's
``X-Hub-Signature-256`` (HMAC-SHA256 of the raw body) or GitLab's ``X-Gitlab-Token``. A missing
or bad signature, and an unknown source, are the same 401 and start nothing. A valid push to the
source's ref queues a run and answers 202 at once — ``ameide serve``'s background scheduler runs
it; a redelivery (same delivery id) is 202 and queues nothing; over the source's rate, 429.
The body is bounded by the app's body limit (413 above it).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Request
from starlette.concurrency import run_in_threadpool

from server.rest.deps import ServiceDep
from server.rest.errors import ERROR_RESPONSES, ErrorBody, error_response
from service.ingesting.results import HookAnswer

router = APIRouter(tags=["sources"])

SourceId = Annotated[
    str,
    Path(description="The source's id (src_…), as `ameide source add` printed it.", max_length=64),
]


@router.post(
    "/sources/{source_id}/hook",
    response_model=HookAnswer,
    status_code=202,
    operation_id="source_hook",
    openapi_extra={"security": []},
    responses={
        **{status: ERROR_RESPONSES[status] for status in (400, 401, 413, 415)},
        429: {"model": ErrorBody, "description": "RATE_LIMITED: too many deliveries; retry"},
    },
)
async def source_hook(source_id: SourceId, request: Request, svc: ServiceDep) -> Any:
    """Queue a run of the source for a push (GitHub or GitLab webhook; no bearer token)."""
    body = await request.body()
    headers = {name.lower(): value for name, value in request.headers.items()}
    answer: HookAnswer = await run_in_threadpool(svc.sources.source_hook, source_id, headers, body)
    if answer.outcome == "rate_limited":
        return error_response(
            429, "RATE_LIMITED", answer.reason or "too many deliveries", {"source_id": source_id}
        )
    return answer  # 202, dumped by FastAPI as its response_model
