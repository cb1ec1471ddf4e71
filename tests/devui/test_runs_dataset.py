"""The Runs view's "Add to dataset" action: the selected run joins a dataset version in the run store."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from agentnb import Agent
from agentnb.devui._runs import RunsView
from agentnb.evals import load_dataset, run_batch
from agentnb.local import FunctionChatClient
from agentnb.store import RunStore


@pytest.fixture
def store() -> Iterator[RunStore]:
    s = RunStore(":memory:")
    yield s
    s.close()


async def test_add_to_dataset_saves_the_selected_run_as_a_new_version(store: RunStore) -> None:
    agent = Agent(FunctionChatClient(lambda m, o: m[-1].text.upper()), name="shout")
    await run_batch(agent, ["hi", "<b>bye</b>"], store=store, progress=False)
    view = RunsView(store)
    assert view.refresh() == 2 and view.add_to_dataset.disabled
    ids = list(view.table.value["run_id"])
    view.table.selection = [0]
    assert not view.add_to_dataset.disabled
    view.dataset_name.value = "picked"
    view.add_to_dataset.clicks += 1  # the button's click, as the browser sends it
    first = load_dataset("picked", store=store)
    assert (first.version, [r["source_run"] for r in first.rows]) == (1, [ids[0]])
    view.add_to_dataset.clicks += 1  # the same run again: not added twice
    view.table.selection = [1]
    view.add_to_dataset.clicks += 1
    latest = load_dataset("picked", store=store)
    assert latest.version == 3 and [r["source_run"] for r in latest.rows] == ids
    assert {r["input"]: r["expected"] for r in latest.rows} == {"hi": "HI", "<b>bye</b>": "<B>BYE</B>"}
    assert "picked v3: 2 rows" in view.dataset_note.object
    # Several rows selected: one click adds them all (the button says how many).
    view.table.selection = [0, 1]
    assert view.add_to_dataset.name == "Add 2 to dataset"
    view.dataset_name.value = "both"
    view.add_to_dataset.clicks += 1
    both = load_dataset("both", store=store)
    assert (both.version, [r["source_run"] for r in both.rows]) == (1, ids)
