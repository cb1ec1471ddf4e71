"""The DevUI survives bad data: crafted run-store rows and hostile fork edits give an error card in that view.

The rows are written straight into the shared SQLite file, as another process could; the page still builds
for every session, and no view callback lets an exception (``SystemExit`` included) escape to the server.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from agentnb.devui import create_app
from agentnb.devui._guard import guard, view_callback
from agentnb.devui._runs import RunsView
from agentnb.devui._timetravel import TimeTravelView
from agentnb.devui.demos import demo_catalog
from agentnb.store import RunStore
from agentnb.workflows import WorkflowCheckpoint


def _card_text(layout: Any) -> str:
    return " ".join(str(getattr(card, "title", "")) for card in layout.objects)


@pytest.fixture
def store(tmp_path: Path) -> Any:
    store = RunStore(tmp_path / "runs.db")
    yield store
    store.close()


def _craft(store: Any, sql: str, params: tuple[Any, ...]) -> None:
    with sqlite3.connect(store.path) as db:  # another process writing the shared file
        db.execute(sql, params)


def test_a_crafted_run_row_gives_an_error_card_in_the_runs_view(store: Any) -> None:
    _craft(
        store,
        "INSERT INTO runs (run_id, kind, name, status, started_at, metadata, rev) VALUES (?, ?, ?, ?, ?, ?, ?)",
        ("evil", "agent", "evil", "done", "2026-01-01T00:00:00", "{not json", 1),
    )
    view = RunsView(store)
    view.panel()
    assert view.refresh() is None
    assert "Cannot list runs" in _card_text(view.errors)
    view.poll()  # the live poll too: reported, never raised


def test_a_crafted_checkpoint_row_gives_an_error_card_in_time_travel(store: Any) -> None:
    store.start_run("r1", kind="workflow", name="w")
    checkpoint = WorkflowCheckpoint(checkpoint_id="c1", workflow_name="w", graph_signature="s", run_id="r1")
    _craft(
        store,
        "INSERT INTO checkpoints (checkpoint_id, run_id, workflow_name, parent_id, step, created_at, data) "
        "VALUES (?, ?, ?, ?, ?, ?, ?)",
        ("c1", "r1", "w", None, "not-a-step", "2026-01-01T00:00:00", checkpoint.to_json()),
    )
    view = TimeTravelView(store, demo_catalog())
    view.panel()
    view.open_run("r1")
    assert "Cannot" in _card_text(view.action_result)


async def test_hostile_fork_edits_give_an_error_card(store: Any) -> None:
    catalog = demo_catalog()
    entity = catalog.workflows[0]
    view = TimeTravelView(store, catalog)
    view._checkpoint = WorkflowCheckpoint(
        checkpoint_id="c1", workflow_name=entity.obj.name, graph_signature=entity.obj.graph_signature, run_id="r1"
    )
    hostile = [
        "[" * 100_000,  # json.loads raises RecursionError
        json.dumps({"shared_state": {"x": {"__agentnb__": "dataclass", "type": "unittest.__main__:main"}}}),
        json.dumps({"shared_state": {"x": {"__agentnb__": ["unhashable"]}}}),
    ]
    for text in hostile:
        view.action_result.objects = []
        view.fork_editor.value = text
        await view._on_fork()
        assert view.action_result.objects, text[:40]


def test_the_page_still_builds_for_every_session(store: Any) -> None:
    _craft(
        store,
        "INSERT INTO runs (run_id, kind, name, status, started_at, metadata, rev) VALUES (?, ?, ?, ?, ?, ?, ?)",
        ("evil", "workflow", "evil", "done", "2026-01-01T00:00:00", "{not json", 1),
    )
    for _session in range(2):
        assert create_app(store=store) is not None


class _View:
    def __init__(self) -> None:
        self.shown: list[Any] = []

    def show_error(self, card: Any) -> None:
        self.shown.append(card)

    @view_callback("Exits")
    def exits(self) -> None:
        raise SystemExit(3)

    @view_callback("Async")
    async def fails(self) -> None:
        raise RuntimeError("boom")


async def test_no_view_callback_can_end_the_server() -> None:
    view = _View()
    assert view.exits() is None
    assert await view.fails() is None
    assert [card.title for card in view.shown] == [
        '<span class="anb-error">Exits: SystemExit: 3</span>',
        '<span class="anb-error">Async: RuntimeError: boom</span>',
    ]
    shown: list[Any] = []
    wrapped = guard(lambda: pd.DataFrame().iloc[5], title="Lambda", show=shown.append)
    assert wrapped() is None and shown
    with pytest.raises(KeyboardInterrupt):  # Ctrl+C still stops the launcher
        guard(_raise_interrupt, title="x", show=None)()


def _raise_interrupt() -> None:
    raise KeyboardInterrupt
