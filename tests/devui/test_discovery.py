"""Entity discovery: directories, files, module names, objects, the environment variable, import failures."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from agentnb import Agent
from agentnb.devui import Catalog, discover, entity_kind
from agentnb.devui._discovery import app_catalog
from agentnb.devui.demos import demo_catalog
from agentnb.local import ScriptedChatClient
from agentnb.workflows import WorkflowBuilder, WorkflowContext, executor

AGENT_MODULE = textwrap.dedent(
    """
    from agentnb import Agent
    from agentnb.local import ScriptedChatClient

    agent = Agent(ScriptedChatClient(["hi"]), name="greeter", description="Says hi.")
    """
)

WORKFLOW_PACKAGE = textwrap.dedent(
    """
    from agentnb.workflows import WorkflowBuilder, WorkflowContext, executor

    @executor(id="echo")
    async def echo(text: str, ctx: WorkflowContext[str, str]) -> None:
        await ctx.yield_output(text)

    workflow = WorkflowBuilder(start_executor=echo, name="echoer").build()
    """
)


def make_folder(root: Path) -> Path:
    folder = root / "entities"
    folder.mkdir()
    (folder / "greeter.py").write_text(AGENT_MODULE)
    (folder / "pipeline").mkdir()
    (folder / "pipeline" / "__init__.py").write_text(WORKFLOW_PACKAGE)
    (folder / "broken.py").write_text("import does_not_exist_anywhere\n")
    (folder / "empty.py").write_text("x = 1\n")
    (folder / "_private.py").write_text("raise SystemExit('must not be imported')\n")
    (folder / "notes.txt").write_text("not python")
    return folder


def test_directory_scan_finds_agents_workflows_and_reports_failures(tmp_path: Path) -> None:
    catalog = discover([make_folder(tmp_path)], env=False)
    assert [(e.id, e.kind) for e in catalog.entities] == [("greeter", "agent"), ("echoer", "workflow")]
    assert catalog.get("greeter").description == "Says hi."
    errors = {Path(e.source).name: e for e in catalog.errors}
    assert set(errors) == {"broken.py", "empty.py"}
    assert "does_not_exist_anywhere" in errors["broken.py"].message
    assert "Traceback" in errors["broken.py"].traceback
    assert "exports no" in errors["empty.py"].message


def test_environment_variable_adds_sources(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = make_folder(tmp_path)
    monkeypatch.setenv("AGENTNB_ENTITIES", str(folder / "greeter.py"))
    assert [e.id for e in discover([]).entities] == ["greeter"]
    assert discover([], env=False).entities == []


def test_module_names_objects_and_unknown_sources() -> None:
    catalog = discover(["agentnb.devui.demos.does_not_exist", "no/such/dir"], env=False)
    assert len(catalog.errors) == 2
    assert "No such directory" in catalog.errors[1].message
    agent = Agent(ScriptedChatClient(["a"]), name="same")
    twin = Agent(ScriptedChatClient(["b"]), name="same")
    catalog = discover([agent, twin], env=False)
    assert [e.id for e in catalog.entities] == ["same", "same-2"]
    with pytest.raises(KeyError, match="known: same, same-2"):
        catalog.get("other")
    with pytest.raises(TypeError, match="neither an agent nor a workflow"):
        Catalog().add(object())


def test_entity_kind() -> None:
    @executor(id="one")
    async def one(text: str, ctx: WorkflowContext[str, str]) -> None:
        await ctx.yield_output(text)

    assert entity_kind(WorkflowBuilder(start_executor=one).build()) == "workflow"
    assert entity_kind(Agent(ScriptedChatClient(["x"]))) == "agent"
    assert entity_kind(Agent) is None
    assert entity_kind("text") is None


def test_demo_catalog_is_offline_without_a_key(monkeypatch: pytest.MonkeyPatch) -> None:
    catalog = demo_catalog()
    assert catalog.offline and "offline" in catalog.note
    assert not catalog.errors
    assert [e.id for e in catalog.agents] == ["assistant", "mailer", "planner"]
    assert [e.id for e in catalog.workflows] == ["greeting-pipeline", "human-review", "text-stats"]
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    online = demo_catalog()
    assert not online.offline
    assert "OpenAI" in type(online.agents[0].obj.client).__name__


def test_app_catalog_is_built_once_per_arguments(tmp_path: Path) -> None:
    folder = make_folder(tmp_path)
    first = app_catalog([str(folder)])
    assert app_catalog([str(folder)]) is first
    assert app_catalog([]) is app_catalog([])
    assert app_catalog([]).offline


def test_importing_the_package_does_not_import_panel() -> None:
    import subprocess

    code = "import agentnb.devui, sys; print('panel' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
