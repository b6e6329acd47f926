"""The fixtures build migrated databases on both dialects."""

from tests.conftest import World


def test_a_world_has_a_repository_with_a_curator_who_can_create_elements(any_world: World):
    element_id, version_id = any_world.canonical()
    shown = any_world.svc.elements.get_element(any_world.reader, element_id)
    assert shown["version"]["version_id"] == version_id
