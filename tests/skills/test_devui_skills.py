"""The DevUI chat view of an agent with skills: the side panel lists them and what each turn did with them;
skill scripts wait for Approve / Deny like any tool."""

from __future__ import annotations

from pathlib import Path

from agentnb import Agent, SkillsProvider, SubprocessScriptRunner
from agentnb.devui import Catalog
from agentnb.devui._chat import ChatView
from agentnb.local import ScriptedChatClient
from agentnb.store import RunStore

from .helpers import CONVERT, write_skill

call = ScriptedChatClient.call


async def test_side_panel_shows_skills_per_turn_and_scripts_wait_for_approval(tmp_path: Path) -> None:
    write_skill(
        tmp_path, "conv", description="Convert <units>.", files={"scripts/convert.py": CONVERT + "open('ran', 'w')\n"}
    )
    write_skill(tmp_path, "other")
    provider = SkillsProvider.from_paths(
        tmp_path, script_runner=SubprocessScriptRunner(), disable_load_skill_approval=True
    )
    client = ScriptedChatClient(
        [
            call("load_skill", skill_name="conv"),
            "Loaded.",
            call(
                "run_skill_script",
                skill_name="conv",
                script_name="scripts/convert.py",
                args=["--value", "2", "--factor", "3"],
            ),
            "Six.",
        ]
    )
    agent = Agent(client, name="converter", context_providers=[provider])
    view = ChatView(Catalog().add(agent), store=RunStore(":memory:"))
    assert view.skill_providers == [provider]
    await view.send("Load the converter")
    html = str(view.skills_info.object)
    assert "Convert &lt;units&gt;." in html and "<units>" not in html
    assert "<td>1</td><td>2</td><td>conv</td><td>—</td>" in html  # turn 1: 2 advertised, conv loaded

    await view.send("2 times 3")
    session = view._current
    assert session is not None and len(session.driver.pending) == 1
    request = session.driver.pending[0]
    assert request.function_call is not None and request.function_call.name == "run_skill_script"
    assert session.cards[request.function_call.call_id].status == "awaiting approval"
    assert not (tmp_path / "conv" / "ran").exists()
    assert "conv ▶ scripts/convert.py (awaiting approval)" in str(view.skills_info.object)

    session.driver.answer(request, True)
    await view._maybe_resume(session)
    assert (tmp_path / "conv" / "ran").exists()
    html = str(view.skills_info.object)
    assert "<td>3</td><td>2</td><td>—</td><td>conv ▶ scripts/convert.py</td>" in html
    assert any(kind == "skill" and detail == "used conv ▶ scripts/convert.py" for _, kind, detail in session.events)


def test_agents_without_skills_get_no_skills_card() -> None:
    view = ChatView(Catalog().add(Agent(ScriptedChatClient(["hi"]), name="plain")))
    assert view.skill_providers == [] and "anb-side-skills" not in str(view.panel())
