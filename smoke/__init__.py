"""``ameide test``: the reference scenario (docs/product.md §9) end to end, deterministically,
stopping at the first broken step and naming it.

- ``run``: ``run_smoke(SmokeOptions, after_step=…)`` — the phases, the embedded instance, the
  report; ``after_step(name, smoke)`` lets a test break something between two steps.
- ``runner``: named steps, ok / skip / FAIL with a one-line reason, the report.
- ``phase0``: the configured installation (config, migrations at head, index, generated code).
- ``scenario``: §9 written once against a ``surface.Surface``; ``content``: its fixed cast,
  texts and sample backlog.
- ``surface`` (in-process, phase 1), ``network`` (phase 2: ``grpc_client`` from the generated
  stubs, ``mcp_client`` with the official MCP SDK), ``embedded`` (the temporary instance and
  the real server started over it on loopback).

Steps, in order (phase 2 repeats phase 1's scenario over gRPC and MCP)::

    phase0.config  phase0.migrations  phase0.index  phase0.generated-code
    phase1.instance  phase1.setup  phase1.ingest  phase1.publish-sop  phase1.read-published
    phase1.propose  phase1.stale  phase1.refused-accept  phase1.rebase  phase1.accept
    phase1.promote  phase1.read-new  phase1.as-of-old  phase1.no-grant-read
    phase1.no-grant-propose  phase1.verify-citations-rejects
    phase2.server  phase2.setup  phase2.ingest  …  phase2.verify-citations-rejects

The smoke is a client of the service and the surfaces: it holds no business rule, and only the
``ameide test`` command imports it (an import-linter contract).
"""
