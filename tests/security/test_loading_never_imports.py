"""Loading tagged JSON never imports a module: crafted files cannot run import-time code.

Each hostile file names a module that would leave a marker file (or end the process) if imported; every
loader must refuse it with a typed error that names the tag and how to register the type, and the marker
must stay absent. Workflows whose state holds user types still restore when the user's module is imported
or the type is registered.
"""

from __future__ import annotations

import json
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel

import agentnb
from agentnb import FileHistoryProvider, FileSessionStore
from agentnb._serialization import decode, encode, loads, register_state_type, register_type
from agentnb.exceptions import CassetteError, CheckpointCorruptError, SerializationError, SessionCorruptError
from agentnb.local import ReplayChatClient
from agentnb.workflows import (
    Executor,
    FileCheckpointStorage,
    WorkflowBuilder,
    WorkflowContext,
    handler,
    response_handler,
)

KINDS = ("pydantic", "dataclass", "enum", "object")


@pytest.fixture
def trap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[str, Path]]:
    """A module on sys.path that leaves a marker file when imported (as a hostile module's code would)."""
    name = f"sec_trap_{uuid.uuid4().hex[:10]}"
    marker = tmp_path / "imported"
    (tmp_path / f"{name}.py").write_text(
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
        "from pydantic import BaseModel\n\nclass Evil(BaseModel):\n    x: int = 0\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name, marker
    sys.modules.pop(name, None)


def tagged(kind: str, type_id: str) -> dict[str, Any]:
    body = {"pydantic": {"data": {}}, "dataclass": {"fields": {}}, "enum": {"value": 1}, "object": {"data": {}}}
    return {"__agentnb__": kind, "type": type_id, **body[kind]}


@pytest.mark.parametrize("kind", KINDS)
def test_a_type_tag_never_imports_its_module(trap: tuple[str, Path], kind: str) -> None:
    name, marker = trap
    with pytest.raises(SerializationError) as info:
        decode({"state": [tagged(kind, f"{name}:Evil")]})
    message = str(info.value)
    assert f"{name}:Evil" in message and "register_type" in message
    assert info.value.tag == f"{name}:Evil"
    assert not marker.exists() and name not in sys.modules


def test_a_tag_naming_a_main_module_cannot_end_the_process() -> None:
    sys.modules.pop("unittest.__main__", None)
    # Importing unittest.__main__ runs unittest's command line, which raises SystemExit.
    with pytest.raises(SerializationError, match=r"unittest\.__main__"):
        loads(json.dumps(tagged("dataclass", "unittest.__main__:main")))
    assert "unittest.__main__" not in sys.modules


def test_lookup_is_static_so_a_module_getattr_hook_never_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    module = type(sys)("sec_lazy_module")
    module.__getattr__ = lambda attr: calls.append(attr) or type("Made", (), {})  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "sec_lazy_module", module)
    with pytest.raises(SerializationError, match="has no 'Lazy'"):
        decode(tagged("dataclass", "sec_lazy_module:Lazy"))
    assert calls == []


def test_from_dict_classes_load_only_when_registered() -> None:
    class Note:
        def __init__(self, text: str) -> None:
            self.text = text

        def to_dict(self) -> dict[str, Any]:
            return {"text": self.text}

        @classmethod
        def from_dict(cls, data: dict[str, Any]) -> Note:
            return cls(data["text"])

    data = encode(Note("hi"))
    data["type"] = f"{__name__}:Note"  # a class from an imported module, but never registered
    globals()["Note"] = Note
    try:
        with pytest.raises(SerializationError, match="not registered"):
            decode(data)
    finally:
        del globals()["Note"]
    register_state_type(Note, type_id="tests.security.Note")
    assert decode(encode(Note("hi"))).text == "hi"


def test_registered_encoder_and_decoder_round_trip() -> None:
    class Point:
        def __init__(self, x: int, y: int) -> None:
            self.x, self.y = x, y

    register_type(Point, "tests.security.Point", encoder=lambda p: {"x": p.x, "y": p.y}, decoder=lambda d: Point(**d))
    restored = loads(json.dumps(encode([Point(1, 2)])))
    assert (restored[0].x, restored[0].y) == (1, 2)
    assert agentnb.register_state_type is register_type


# --- every loader --------------------------------------------------------------------------------------


async def test_checkpoint_file_naming_an_unimported_module_is_refused(trap: tuple[str, Path], tmp_path: Path) -> None:
    name, marker = trap
    storage = FileCheckpointStorage(tmp_path / "cps")
    hostile = {
        "checkpoint_id": "c1",
        "workflow_name": "w",
        "graph_signature": "s",
        "run_id": "r",
        "shared_state": {"x": tagged("pydantic", f"{name}:Evil")},
    }
    storage.path_of("c1").write_text(json.dumps(hostile))
    with pytest.raises(CheckpointCorruptError, match=f"{name}:Evil"):
        await storage.load("c1")
    assert not marker.exists()


def test_session_snapshot_naming_an_unimported_module_is_refused(trap: tuple[str, Path], tmp_path: Path) -> None:
    name, marker = trap
    store = FileSessionStore(tmp_path)
    session = {"type": "agent_session", "session_id": "s", "state": {"x": tagged("dataclass", f"{name}:Evil")}}
    store.path_for("s").write_text(json.dumps({"format": "agentnb.session", "version": 1, "session": session}))
    with pytest.raises(SessionCorruptError, match=f"{name}:Evil"):
        store.load("s")
    assert not marker.exists()


async def test_history_line_naming_an_unimported_module_is_refused(trap: tuple[str, Path], tmp_path: Path) -> None:
    name, marker = trap
    history = FileHistoryProvider(tmp_path)
    line = {"role": "user", "contents": [], "additional_properties": {"x": tagged("enum", f"{name}:Evil")}}
    history.path_for("s").write_text(json.dumps(line) + "\n")
    with pytest.raises(SessionCorruptError, match=f"{name}:Evil"):
        await history.get_messages("s")
    assert not marker.exists()


async def test_cassette_naming_an_unimported_module_is_refused(trap: tuple[str, Path], tmp_path: Path) -> None:
    name, marker = trap
    path = tmp_path / "c.jsonl"
    update = {"contents": [], "additional_properties": {"x": tagged("pydantic", f"{name}:Evil")}}
    interaction = {"request": {"messages": []}, "stream": True, "updates": [update]}
    path.write_text(json.dumps({"format": "agentnb-cassette", "version": 1}) + "\n" + json.dumps(interaction) + "\n")
    with pytest.raises((CassetteError, SerializationError), match=f"{name}:Evil"):
        client = ReplayChatClient(path)
        client.interactions[0].as_updates()
    assert not marker.exists()


# --- user types in workflow checkpoints ---------------------------------------------------------------

USER_MODULE = """
from pydantic import BaseModel


class Plan(BaseModel):
    steps: list[str]
"""


class Planner(Executor):
    def __init__(self, plan_type: type[BaseModel]) -> None:
        super().__init__("planner")
        self.plan_type = plan_type

    @handler
    async def plan(self, goal: str, ctx: WorkflowContext) -> None:
        ctx.set_state("plan", self.plan_type(steps=[goal, "ship"]))
        await ctx.request_info(request_data=goal, response_type=str)

    @response_handler
    async def done(self, goal: str, answer: str, ctx: WorkflowContext[Any, str]) -> None:
        await ctx.yield_output(f"{answer}: {ctx.get_state('plan').steps}")


def build(storage: FileCheckpointStorage, plan_type: type[BaseModel]) -> Any:
    return WorkflowBuilder(start_executor=Planner(plan_type), checkpoint_storage=storage, name="plans").build()


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    name = f"sec_user_{uuid.uuid4().hex[:10]}"
    (tmp_path / f"{name}.py").write_text(USER_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


async def test_workflow_with_a_user_type_restores_once_its_module_is_imported(user_module: str, tmp_path: Path) -> None:
    import importlib

    plan_type = importlib.import_module(user_module).Plan
    storage = FileCheckpointStorage(tmp_path / "cps")
    first = await build(storage, plan_type).run("design")
    checkpoint_id = first.checkpoint_id
    pending = (await storage.load(checkpoint_id)).pending_requests
    request_id = next(iter(pending))

    # A fresh process that has not imported the user's module: refused, with the fix in the message.
    del sys.modules[user_module]
    with pytest.raises(CheckpointCorruptError, match=rf"{user_module}:Plan.*import {user_module}"):
        await storage.load(checkpoint_id)
    assert user_module not in sys.modules

    # The user imports their module (as their notebook would): the checkpoint restores and the run finishes.
    plan_type = importlib.import_module(user_module).Plan
    resumed = await build(storage, plan_type).run(checkpoint_id=checkpoint_id, responses={request_id: "ok"})
    assert resumed.get_outputs() == ["ok: ['design', 'ship']"]


async def test_workflow_with_a_registered_user_type_restores_without_importing(tmp_path: Path) -> None:
    class Plan(BaseModel):  # defined inside a function: only its registered id can name it
        steps: list[str]

    register_type(Plan, "tests.security.Plan")
    storage = FileCheckpointStorage(tmp_path / "cps")
    first = await build(storage, Plan).run("design")
    saved = json.loads(storage.path_of(first.checkpoint_id).read_text())
    assert saved["state"]["plan"]["type"] == "tests.security.Plan"
    request_id = next(iter((await storage.load(first.checkpoint_id)).pending_requests))
    resumed = await build(storage, Plan).run(checkpoint_id=first.checkpoint_id, responses={request_id: "ok"})
    assert resumed.get_outputs() == ["ok: ['design', 'ship']"]
