"""Functional workflows in the DevUI: in the catalog beside graph workflows, the run view with its step
timeline, the input form built from the function's first parameter's type, human-input forms, and time travel
(inspect, fork with edited state, re-run one step)."""

from __future__ import annotations

import json

import panel as pn
import pytest
from pydantic import BaseModel

from agentnb.devui import Catalog
from agentnb.devui._timetravel import TimeTravelView
from agentnb.devui._workflow import WorkflowView
from agentnb.devui.demos import demo_catalog
from agentnb.store import RunStore
from agentnb.workflows import FunctionalWorkflow, RunContext, step, workflow


class Trip(BaseModel):
    city: str
    nights: int = 2


@step
async def hotel(trip: Trip) -> str:
    return f"{trip.nights} nights in {trip.city}"


@step
async def summary(booking: str) -> str:
    return f"Booked: {booking}"


@workflow(description="Books a trip after a person approves it.")
async def travel(trip: Trip, ctx: RunContext) -> str:
    booking = await hotel(trip)
    answer = await ctx.request_info({"booking": booking}, response_type=str, request_id="approve")
    return await summary(f"{booking} ({answer})")


@pytest.fixture
def store() -> RunStore:
    return RunStore(":memory:")


def _text(column: pn.Column) -> str:
    return "\n".join(str(p.object) for p in column.select(pn.pane.HTML))


async def test_catalog_view_form_timeline_requests_and_time_travel(store: RunStore) -> None:
    catalog = demo_catalog()
    graph_count = len(catalog.workflows)
    entity = catalog.add(travel)
    assert entity.kind == "workflow" and isinstance(entity.obj, FunctionalWorkflow)
    assert len(catalog.workflows) == graph_count + 1 and entity.description.startswith("Books a trip")

    view = WorkflowView(entity, store=store)
    view.panel()
    assert set(view.form._widgets) == {"city", "nights"}  # the form comes from the first parameter's type
    view.form._widgets["city"].value = "Lisbon"
    await view._on_run()
    assert "waiting for your input" in str(view.status.object)
    timeline = str(view.graph.pane.object)
    assert "hotel#0" in timeline and "done" in timeline
    [box] = view.requests.objects
    assert "needs input" in _text(box) and "approve" in _text(box)
    view.requests.remove(box)  # what the form's "Send answer" does: the form goes, the answer resumes the run
    await view.run(responses={"approve": "yes"})
    assert "completed" in str(view.status.object)
    timeline = str(view.graph.pane.object)
    assert "cached" in timeline and "summary#0" in timeline
    assert "Booked: 2 nights in Lisbon (yes)" in _text(view.outputs)

    travel_view = TimeTravelView(store, catalog)
    travel_view.panel()
    travel_view.open_run(view.run_id or "")
    chain = travel_view._chain
    assert [c.step for c in chain][-1] == 2 and chain[0].step == 0  # the timeline goes back through the pause
    after_hotel = next(c for c in chain if c.step == 1)
    travel_view.select_checkpoint(after_hotel.checkpoint_id)
    assert travel_view.inspector.object["executor_states"] == {"hotel": {"0": "2 nights in Lisbon"}}
    # Re-run summary from the last checkpoint, frozen neighbours, edited input.
    travel_view.select_checkpoint(chain[-1].checkpoint_id)
    await travel_view.offer_rerun()
    assert list(travel_view.rerun_executor.options) == ["hotel", "summary"]
    travel_view.rerun_executor.value = "summary"
    travel_view.rerun_input.value = travel_view.rerun_input.value_input = '"a chalet"'
    await travel_view._on_rerun()
    assert travel_view.rerun_result is not None and travel_view.rerun_result.outputs == ["Booked: a chalet"]
    # Fork the end of the run with an edited step result: the answer is kept, the steps after it run on it.
    travel_view.select_checkpoint(chain[-1].checkpoint_id)
    edits = json.loads(travel_view.fork_editor.value)
    edits["executor_states"]["hotel"]["0"] = "5 nights in Porto"
    travel_view.fork_editor.value = travel_view.fork_editor.value_input = json.dumps(edits)
    await travel_view._on_fork()
    result = _text(travel_view.action_result)
    assert "Booked: 5 nights in Porto (yes)" in result, result


def test_a_module_exporting_a_definition_is_discovered(tmp_path: object) -> None:
    catalog = Catalog()
    entity = catalog.add(travel, source="module")
    assert entity.kind == "workflow" and entity.obj.steps == ["hotel", "summary"]
