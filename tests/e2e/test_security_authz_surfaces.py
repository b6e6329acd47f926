"""Authorization holes of issue 16, reproduced on every surface.

- A grant that cannot read (``ingestor``) never raises what its holder may read: read
  clearance comes only from the grants whose role allows reading.
- An ingestor-only caller gets the same ``NOT_FOUND`` for an existing element (even a
  restricted one) as for a missing one: no existence oracle.
"""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from service.authz import Caller
from tests.conftest import World
from tests.e2e.conftest import without_ameide_env
from tests.e2e.surface_drivers import SurfaceError, open_driver

SURFACES = ("service", "cli", "rest", "grpc", "mcp")


def _enrol(driver: object, world: World, who: Caller) -> None:
    """The gRPC harness mints tokens only for the world's principals: add one for ``who``."""
    client = getattr(driver, "g", None)
    if client is not None:
        client.tokens[who.principal_id] = world.svc.tokens.create(world.admin, who.principal_id)[
            "token"
        ]


def _code_of(call: object, *args: object) -> tuple[str, str]:
    with pytest.raises(SurfaceError) as caught:
        call(*args)  # type: ignore[operator]
    return caught.value.code, caught.value.message


@pytest.mark.parametrize("surface", SURFACES)
def test_an_ingestor_grant_never_raises_read_clearance(
    surface: str, world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    without_ameide_env(monkeypatch)
    svc = world.svc
    mix = Caller(f"user:mix-{secrets.token_hex(4)}", purpose="probe")
    svc.admin.grant(world.admin, world.curator.principal_id, "curator", world.repo, "restricted")
    restricted, _ = world.canonical("Plan", "# Plan\n\nsecret plan\n", classification="restricted")
    public, _ = world.canonical("Notes", "# Notes\n\nopen notes\n", classification="public")
    svc.admin.grant(world.admin, mix.principal_id, "reader", world.repo, "public")
    svc.admin.grant(world.admin, mix.principal_id, "ingestor", world.repo, "restricted")
    with open_driver(surface, world, world.admin, tmp_path / "scratch") as driver:
        _enrol(driver, world, mix)
        assert driver.get_element(mix, public)["element"]["element_id"] == public
        code, message = _code_of(driver.get_element, mix, restricted)
        assert code == "NOT_FOUND"
        assert "secret plan" not in message
        out = driver.read_context(mix, world.repo, selector="head", element_ids=[restricted])
        assert out["items"] == []


@pytest.mark.parametrize("surface", SURFACES)
def test_an_ingestor_only_caller_cannot_tell_existing_elements_from_missing_ones(
    surface: str, world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    without_ameide_env(monkeypatch)
    svc = world.svc
    ingestor = Caller(f"service:ing-{secrets.token_hex(4)}", purpose="probe")
    svc.admin.grant(world.admin, ingestor.principal_id, "ingestor", world.repo, "restricted")
    svc.admin.grant(world.admin, world.curator.principal_id, "curator", world.repo, "restricted")
    existing, _ = world.canonical("Plan", "# Plan\n\nsecret\n", classification="restricted")
    missing = "el_" + secrets.token_hex(12)
    with open_driver(surface, world, world.admin, tmp_path / "scratch") as driver:
        _enrol(driver, world, ingestor)
        seen = _code_of(driver.get_element, ingestor, existing)
        unseen = _code_of(driver.get_element, ingestor, missing)
        assert seen[0] == unseen[0] == "NOT_FOUND"
        assert seen[1].replace(existing, "X") == unseen[1].replace(missing, "X")
        assert world.repo not in seen[1]


@pytest.mark.parametrize("surface", SURFACES)
def test_a_version_written_restricted_stays_restricted_after_routing_lowers_it(
    surface: str, world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 16 item 2: ingest under a restricted routing default, re-ingest with the default
    lowered to public: a public reader reads the new public version, never the restricted one."""
    from ingest.plan import element_id_for
    from tests.integration.ingest.conftest import GitRepo

    without_ameide_env(monkeypatch)
    svc = world.svc
    ingestor = Caller(f"service:ing-{secrets.token_hex(4)}", purpose="mirror")
    public = Caller(f"user:public-{secrets.token_hex(4)}", purpose="probe")
    svc.admin.grant(world.admin, ingestor.principal_id, "ingestor", world.repo, "restricted")
    svc.admin.grant(world.admin, public.principal_id, "reader", world.repo, "public")
    git = GitRepo(tmp_path / "backlog")
    git.write("plan.md", "# Plan\n\nsecret acquisition plan\n")
    git.commit("plan")
    rules = {
        level: f"defaults: {{classification: {level}}}\n" for level in ("restricted", "public")
    }
    svc.ingest.ingest_backlog(ingestor, str(git.root), world.repo, routing=rules["restricted"])
    el = element_id_for(world.repo, str(git.root.resolve()), "plan.md")
    v1 = svc.elements.get_element(world.admin, el)["version"]["version_id"]
    svc.ingest.ingest_backlog(
        ingestor, str(git.root), world.repo, routing=rules["public"], full_scan=True
    )
    with open_driver(surface, world, world.admin, tmp_path / "scratch") as driver:
        _enrol(driver, world, public)
        head = driver.get_element(public, el)
        assert head["version"]["version_id"] != v1
        code, message = _code_of(driver.get_element, public, el, v1)
        assert code == "NOT_FOUND"
        assert "acquisition" not in message


@pytest.mark.parametrize("surface", SURFACES)
def test_erased_text_is_gone_from_a_rebased_proposal_on_every_surface(
    surface: str, world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 16 item 3: a proposal pinned to an erased version, then rebased, kept the text."""
    without_ameide_env(monkeypatch)
    svc = world.svc
    secret = "# Contacts\n\nCall Mallory Quince on +44 20 7946 0958.\n"
    el, v1 = world.canonical("Contacts", secret)
    first = svc.curation.propose(
        world.agent, world.repo, body=secret + "\nAnd the backup line.\n",
        summary="Mallory Quince backup", element_id=el, target_version_id=v1,
    )  # fmt: skip
    other = svc.curation.propose(
        world.agent, world.repo, body="# Contacts\n\nAsk the desk.\n", summary="simplify",
        element_id=el, target_version_id=v1,
    )  # fmt: skip
    svc.review.accept(world.curator, other["proposal_id"])
    rebased = svc.review.rebase(world.agent, first["proposal_id"])["proposal_id"]
    svc.erasure.erase_version(world.admin, v1, "gdpr")
    with open_driver(surface, world, world.admin, tmp_path / "scratch") as driver:
        for proposal_id in (first["proposal_id"], rebased):
            shown = driver.show_proposal(world.curator, proposal_id)
            assert "Mallory" not in str(shown)
            assert "7946 0958" not in str(shown)  # the number, not a random id


def test_rest_history_names_no_version_written_above_the_callers_clearance(
    world: World, tmp_path: Path
) -> None:
    """Issue 28 item 9 over REST: after routing lowers an element from restricted, the
    restricted v1's id and hash appear in no history an internal reader or auditor gets —
    the repository's, the element's, or an ``as_of`` read at an instant v1 was the head."""
    import json

    from ingest.plan import element_id_for
    from tests.e2e.rest_harness import rest_client
    from tests.integration.ingest.conftest import GitRepo

    svc = world.svc
    ingestor = Caller(f"service:ing-{secrets.token_hex(4)}", purpose="mirror")
    svc.admin.grant(world.admin, ingestor.principal_id, "ingestor", world.repo, "restricted")
    git = GitRepo(tmp_path / "backlog")
    git.write("plan.md", "# Plan\n\nsecret acquisition plan\n")
    git.commit("plan")
    rules = {
        level: f"defaults: {{classification: {level}}}\n" for level in ("restricted", "public")
    }
    svc.ingest.ingest_backlog(ingestor, str(git.root), world.repo, routing=rules["restricted"])
    el = element_id_for(world.repo, str(git.root.resolve()), "plan.md")
    v1 = svc.elements.get_element(world.admin, el)["version"]
    then = world.app.clock.now().isoformat().replace("+00:00", "Z")
    git.write("plan.md", "# Plan\n\nthe plan, public now\n")
    git.commit("public plan")
    svc.ingest.ingest_backlog(
        ingestor, str(git.root), world.repo, routing=rules["public"], full_scan=True
    )
    with rest_client(world) as rest:
        for who in (world.reader, world.auditor):
            answers = [
                rest.ok("GET", f"{rest.repo_path}/history", who),
                rest.ok("GET", f"{rest.repo_path}/history", who, params={"element_id": el}),
                rest.ok("GET", f"/v1/elements/{el}/history", who),
                rest.fail("GET", f"/v1/elements/{el}", who, 404, params={"as_of": then}),
            ]
            text = json.dumps(answers)
            assert el in text
            assert v1["version_id"] not in text
            assert v1["content_sha256"] not in text
        admin = json.dumps(rest.ok("GET", f"{rest.repo_path}/history", world.admin))
        assert v1["version_id"] in admin
        assert v1["content_sha256"] in admin
