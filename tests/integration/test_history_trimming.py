"""History and replay answer with ids and counts about content: trimmed like every read.

- ``relationship.added`` naming a target the reader may not read is not shown to it;
- ``baseline.created`` counts only the pins the reader may read;
- an auditor sees every event, but those about content above its clearance are redacted, and
  replaying someone else's context names only what the auditor may read itself.
"""

from __future__ import annotations

import json
import secrets

from edge.results import as_json
from service.authz import Caller
from tests.conftest import World
from tests.read_world import request


def _setup(world: World) -> dict[str, str]:
    svc = world.svc
    svc.admin.grant(world.admin, world.curator.principal_id, "curator", world.repo, "restricted")
    svc.admin.grant(
        world.admin, world.publisher.principal_id, "publisher", world.repo, "restricted"
    )
    ids = {}
    for level in ("public", "internal", "confidential", "restricted"):
        ids[level], ids[f"{level}_v"] = world.canonical(
            f"Doc {level}", f"# Doc {level}\n\nzebra {level} notes\n", classification=level
        )
    return ids


def test_a_relationship_to_an_unreadable_target_is_not_named_in_history(world: World) -> None:
    svc = world.svc
    ids = _setup(world)
    svc.elements.add_relationship(
        world.curator, ids["internal"], ids["restricted"], kind="REFERENCE", type_key="ameide:cites"
    )
    events = svc.history.history(world.reader, world.repo)
    text = json.dumps(as_json(events))
    assert ids["restricted"] not in text
    assert ids["restricted_v"] not in text
    assert ids["confidential"] not in text
    assert not [e for e in events if e["event_type"] == "relationship.added"]
    # a curator cleared for it sees the relationship event with its target
    full = svc.history.history(world.curator, world.repo)
    added = [e for e in full if e["event_type"] == "relationship.added"]
    assert added[0]["payload"]["target_element_id"] == ids["restricted"]


def test_baseline_created_counts_only_the_pins_the_reader_may_read(world: World) -> None:
    svc = world.svc
    _setup(world)
    baseline = svc.publishing.create_baseline(world.publisher, world.repo)["baseline_id"]

    def pins(who: Caller) -> int:
        (event,) = [
            e
            for e in svc.history.history(who, world.repo)
            if e["event_type"] == "baseline.created" and e["baseline_id"] == baseline
        ]
        return int(event["payload"]["pins"])

    assert pins(world.publisher) == 4
    assert pins(world.reader) == 2  # public and internal
    public_reader = Caller(f"user:pub-{secrets.token_hex(4)}")
    svc.admin.grant(world.admin, public_reader.principal_id, "reader", world.repo, "public")
    assert pins(public_reader) == 1


def test_an_internal_auditor_sees_every_event_but_no_confidential_id(world: World) -> None:
    svc = world.svc
    ids = _setup(world)
    svc.elements.add_relationship(
        world.curator, ids["public"], ids["confidential"], kind="REFERENCE", type_key="ameide:cites"
    )
    events = svc.history.history(world.auditor, world.repo)
    text = json.dumps(as_json(events))
    for hidden in ("confidential", "restricted"):
        assert ids[hidden] not in text
        assert ids[f"{hidden}_v"] not in text
    everything = svc.history.history(world.curator, world.repo)
    assert len(events) == len(everything)  # the trail has no gaps, only redactions
    assert any(e["payload"] == {"redacted": True} for e in events)


def test_replay_names_only_what_the_auditor_may_read(world: World) -> None:
    svc = world.svc
    ids = _setup(world)
    cleared = Caller(f"agent:cleared-{secrets.token_hex(4)}", purpose="read")
    svc.admin.grant(world.admin, cleared.principal_id, "reader", world.repo, "restricted")
    out = svc.reading.read_context(cleared, request(world.repo, "zebra", selector="head"))
    assert {i["element_id"] for i in out["items"]} >= {ids["confidential"], ids["restricted"]}
    # new content of every level outranks the old: the replay differs for every element
    for level in ("public", "confidential", "restricted"):
        body = f"# {level}\n\nzebra zebra zebra\n"
        svc.elements.create_element(
            world.curator, world.repo, title="x", body=body, classification=level
        )
    answer = svc.reading.replay(world.auditor, out["context_id"])
    text = json.dumps(as_json(answer))
    for hidden in ("confidential", "restricted"):
        assert ids[hidden] not in text
        assert ids[f"{hidden}_v"] not in text
    verdict = svc.reading.verify_citations(
        world.auditor,
        out["context_id"],
        [c for i in out["items"] for c in i["citations"]],
    )
    readable = {ids["public_v"], ids["internal_v"]}
    assert {r["citation"]["version_id"] for r in verdict["results"] if r["valid"]} <= readable
