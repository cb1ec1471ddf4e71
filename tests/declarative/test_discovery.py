"""A folder of YAML agents and workflows shows in the DevUI like Python ones, with its YAML, and reloads."""

from __future__ import annotations

import os
from pathlib import Path

from agentnb.devui import discover
from agentnb.devui._app import DevUI
from agentnb.devui._chat import ChatView
from agentnb.devui._workflow import WorkflowView
from agentnb.store import RunStore

AGENT = """\
kind: Prompt
name: Helper
description: Answers briefly.
instructions: Be brief.
model:
  id: offline
  provider: Local
"""

WORKFLOW = """\
name: ask-helper
description: Asks the helper <and shows its answer>.
actions:
  - kind: InvokeAzureAgent
    id: ask
    agent:
      name: Helper
  - kind: SendActivity
    id: done
    activity:
      text: done
"""


def _folder(tmp_path: Path) -> Path:
    (tmp_path / "helper.yaml").write_text(AGENT)
    (tmp_path / "pipeline.yml").write_text(WORKFLOW)
    (tmp_path / "broken.yaml").write_text("kind: Prompt\nname: B\ninstructionz: x\n")
    (tmp_path / "py_agent.py").write_text(
        "from agentnb import Agent\nfrom agentnb.local import ScriptedChatClient\n"
        "agent = Agent(ScriptedChatClient(['hi']), name='PyAgent')\n"
    )
    return tmp_path


async def test_yaml_files_become_entities_beside_python_ones(tmp_path: Path) -> None:
    catalog = discover([_folder(tmp_path)], env=False)
    names = {e.name: e.kind for e in catalog.entities}
    assert names == {"PyAgent": "agent", "Helper": "agent", "ask-helper": "workflow"}
    (error,) = catalog.errors
    assert error.source.endswith("broken.yaml")
    assert "line 3: unknown key 'instructionz'" in error.message

    workflow = catalog.get("ask-helper")
    assert workflow.definition == WORKFLOW
    outputs = (await workflow.obj.run("Hello?")).get_outputs()
    assert len(outputs) == 2
    assert outputs[-1] == "done"  # the workflow ran the folder's YAML agent by name


def test_views_show_the_yaml_escaped(tmp_path: Path) -> None:
    catalog = discover([_folder(tmp_path)], env=False)
    view = WorkflowView(catalog.get("ask-helper"), store=None)
    html = _all_html(view.panel())
    assert "Definition (pipeline.yml)" in _titles(view.panel())
    assert "Asks the helper &lt;and shows its answer&gt;." in html
    assert "<and shows" not in html
    chat = ChatView(catalog.get("helper"), store=None)
    assert "instructions: Be brief." in _all_html(chat.panel())


def test_a_saved_edit_reloads(tmp_path: Path) -> None:
    folder = _folder(tmp_path)
    catalog = discover([folder], env=False)
    app = DevUI(catalog, store=RunStore(":memory:"))
    app.panel()
    app.select("ask-helper")
    before = catalog.get("ask-helper").obj
    assert catalog.reload("ask-helper") is False  # nothing changed

    path = folder / "pipeline.yml"
    path.write_text(WORKFLOW.replace("text: done", "text: finished"))
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))  # a later save, whatever the clock
    app.select("helper")
    app.select("ask-helper")  # opening it again picks up the edit
    entity = catalog.get("ask-helper")
    assert app._views["ask-helper"].workflow is entity.obj
    assert entity.obj is not before
    assert "text: finished" in (entity.definition or "")

    path.write_text("name: ask-helper\nactions:\n  - kind: Nope\n")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 2_000_000))
    assert catalog.reload("ask-helper") is False  # a broken edit keeps the last good workflow
    assert "line 3: unknown action kind 'Nope'" in catalog.errors[-1].message
    assert catalog.get("ask-helper").obj is entity.obj


def _panes(root: object) -> list[object]:
    found = [root]
    for child in getattr(root, "objects", []) or []:
        found.extend(_panes(child))
    return found


def _all_html(root: object) -> str:
    return "\n".join(str(getattr(p, "object", "")) for p in _panes(root) if isinstance(getattr(p, "object", None), str))


def _titles(root: object) -> list[str]:
    return [str(getattr(p, "title", "")) for p in _panes(root)]
