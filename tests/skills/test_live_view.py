"""Skills in the notebook's live agent view: loads, reads and scripts awaiting approval show as they happen."""

from __future__ import annotations

from pathlib import Path

from agentnb import Agent, SkillsProvider, SubprocessScriptRunner
from agentnb.local import ScriptedChatClient
from agentnb.notebook import AgentView, ApprovalCard

from .helpers import CONVERT, write_skill

call = ScriptedChatClient.call


async def test_the_live_view_shows_each_skill_step_and_the_script_approval_card(tmp_path: Path) -> None:
    write_skill(tmp_path, "conv", files={"references/TABLE.md": "miles 1.609", "scripts/convert.py": CONVERT})
    provider = SkillsProvider.from_paths(
        tmp_path,
        script_runner=SubprocessScriptRunner(),
        disable_load_skill_approval=True,
        disable_read_skill_resource_approval=True,
    )
    client = ScriptedChatClient(
        [
            call("load_skill", skill_name="conv"),
            call("read_skill_resource", skill_name="conv", resource_name="references/TABLE.md"),
            call(
                "run_skill_script",
                skill_name="conv",
                script_name="scripts/convert.py",
                args=["--value", "2", "--factor", "3"],
            ),
            "Six.",
        ]
    )
    view = AgentView(Agent(client, name="converter", context_providers=[provider]), stream=False)
    frames: list[str] = []
    view.controller.subscribe(lambda _run: frames.append(view.to_html()))
    await view.run("2 miles?", display=False).wait()

    html = view.to_html()
    assert "loading skill &#x27;conv&#x27;" in html
    assert "reading &#x27;references/TABLE.md&#x27; of skill &#x27;conv&#x27;" in html
    assert "running &#x27;scripts/convert.py&#x27; of skill &#x27;conv&#x27;" in html
    assert "awaiting approval" in html and len(view.pending) == 1
    assert any("awaiting approval" in frame and "running &#x27;scripts" in frame for frame in frames)
    (card,) = view.cards.values()
    assert isinstance(card, ApprovalCard)  # the same approval card any tool gets

    view.approve(0)
    await view.wait()
    assert view.text.endswith("Six.")
    assert "&quot;result&quot;: 6.0" in view.to_html()
    text = view.to_text()
    assert "[running 'scripts/convert.py' of skill 'conv']" in text
    view.close()
