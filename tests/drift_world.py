"""A drift scene for the drift and gaps tests (docs/drift.md): a git backlog synced by ingest, a
published public page citing the first version of its one evidence file."""

from __future__ import annotations

from pathlib import Path

from ingest.plan import element_id_for
from runtime import App
from service.authz import Caller
from tests.conftest import World, make_world
from tests.integration.ingest.conftest import GitRepo
from tests.read_world import publish

V1 = "# Testing guide\n\nRun phase 0 with make test.\n"
V2 = "# Testing guide\n\nRun phase 0 and phase 1 with make test-all.\n"
V3 = "# Testing guide\n\nRun every phase with make ci.\n"


class Scene:
    """A world, an ingestor, a git backlog with one evidence file and a published page citing
    the evidence's first version; a public-clearance agent who may read the page only."""

    def __init__(self, app: App, tmp_path: Path) -> None:
        self.w: World = make_world(app)
        tag = self.w.repo.split("/")[0]
        self.ingestor = Caller(f"service:ingest-{tag}")
        self.w.svc.admin.grant(self.w.admin, self.ingestor.principal_id, "ingestor", self.w.repo)
        self.low = Caller(f"user:low-{tag}")
        self.w.svc.admin.grant(self.w.admin, self.low.principal_id, "agent", self.w.repo, "public")
        self.git = GitRepo(tmp_path / "backlog")
        self.evidence = element_id_for(self.w.repo, str(self.git.root.resolve()), "testing.md")
        self.sync(V1)
        self.pinned = self.w.svc.elements.get_element(self.w.curator, self.evidence)["version"]
        self.page, self.page_version = self.w.canonical(
            title="Testing SOP", body="# Testing SOP\n\nSee the testing guide.\n",
            classification="public",
        )  # fmt: skip
        self.relationship = self.w.svc.elements.add_relationship(
            self.w.curator, self.page, self.evidence, kind="REFERENCE", type_key="ameide:cites",
            metadata={"target_version_id": self.pinned["version_id"]},
        )  # fmt: skip
        publish(self.w)

    def sync(self, text: str) -> None:
        self.git.write("testing.md", text)
        self.git.commit("edit testing.md")
        self.w.svc.ingest.ingest_backlog(self.ingestor, str(self.git.root), self.w.repo)

    def drift(self, who: Caller | None = None) -> list:
        return self.w.svc.drift.drift_list(who or self.w.curator, self.w.repo).entries
