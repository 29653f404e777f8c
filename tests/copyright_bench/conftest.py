"""Shared fixtures: the default catalog and hand-built tasks with chosen candidate pools."""

import pytest

from icml26.copyright_bench import Catalog, Family, Slot, TaskInstance


@pytest.fixture(scope="session")
def catalog():
    return Catalog.load_default()


def hand_task(family, slots, product=None, task_id="hand-000"):
    """A space-themed task whose slots hold exactly the given candidates.

    ``slots`` maps slot name -> (kinds, candidate ids); lawful/infringing are left empty (the
    scorer never reads them).
    """
    built = tuple(
        Slot(name, kinds, name, f"space {name}", tuple(ids), (), (), ids[0])
        for name, (kinds, ids) in slots.items()
    )
    return TaskInstance(
        task_id, Family(family), "space", "space", "space café", "Northstar", product, built
    )


IMAGES = ("photo", "illustration", "painting")
