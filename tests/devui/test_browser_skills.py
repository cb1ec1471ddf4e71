"""Drive `panel serve devui --args DIR` with an agent that has skills, in Chromium.

The side panel's Skills card lists the agent's skills and, per turn, which were advertised, loaded and used;
a skill script waits for Approve like any tool and runs only after the click.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.devui.devui_harness import DOCS, WAIT, DevUIServer, send_chat, text

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.timeout(240)]

SKILL_MD = "---\nname: converter\ndescription: Converts <b>units</b>.\n---\nRun scripts/convert.py.\n"
SCRIPT = "import sys\nopen(sys.argv[1], 'w').write('ran')\nprint('converted')\n"


@pytest.fixture(scope="module")
def skills_app(tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Iterator[tuple[Any, Path]]:
    folder = tmp_path_factory.mktemp("entities")
    skills = folder / "skills" / "converter"
    (skills / "scripts").mkdir(parents=True)
    (skills / "SKILL.md").write_text(SKILL_MD)
    (skills / "scripts" / "convert.py").write_text(SCRIPT)
    marker = folder / "ran.txt"
    (folder / "skilled.py").write_text(
        textwrap.dedent(
            f"""
            from agentnb import Agent, SkillsProvider, SubprocessScriptRunner
            from agentnb.local import ScriptedChatClient

            call = ScriptedChatClient.call
            provider = SkillsProvider.from_paths(
                {str(folder / "skills")!r}, script_runner=SubprocessScriptRunner(), disable_load_skill_approval=True
            )
            client = ScriptedChatClient([
                call("load_skill", skill_name="converter"),
                "Loaded the converter.",
                call("run_skill_script", skill_name="converter", script_name="scripts/convert.py",
                     args=[{str(marker)!r}]),
                "Converted.",
            ])
            agents = [Agent(client, name="skilled", description="Has a converter skill.", context_providers=[provider])]
            """
        )
    )
    server = DevUIServer(tmp_path_factory.mktemp("devui-home-skills"), args=[str(folder)])
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    try:
        page.goto(server.url)
        page.get_by_text("agentnb DevUI").first.wait_for(timeout=WAIT)
        yield page, marker
    finally:
        context.close()
        server.stop()


def test_skills_card_and_script_approval(skills_app: tuple[Any, Path]) -> None:
    app, marker = skills_app
    app.locator(".anb-entity-skilled button").click()
    app.get_by_text("Has a converter skill.").first.wait_for(timeout=WAIT)
    send_chat(app, "skilled", "load it")
    app.locator(".anb-msg.anb-assistant", has_text="Loaded the converter.").wait_for(timeout=WAIT)
    card = app.locator(".anb-side-skills")
    card.get_by_text("Skills by turn").wait_for(timeout=WAIT)
    shown = text(card)
    assert "converter" in shown and "Converts <b>units</b>." in shown  # the description as text, not markup
    assert card.locator("b", has_text="units").count() == 0

    send_chat(app, "skilled", "convert")
    app.get_by_text("Approval needed").first.wait_for(timeout=WAIT)
    card.get_by_text("(awaiting approval)").first.wait_for(timeout=WAIT)
    assert not marker.exists()  # the script has not run
    app.screenshot(path=str(DOCS / "devui-skills.png"))
    app.locator(".anb-approve button").click()
    app.locator(".anb-msg.anb-assistant", has_text="Converted.").wait_for(timeout=WAIT)
    assert marker.read_text() == "ran"
    card.get_by_text("converter ▶ scripts/convert.py").first.wait_for(timeout=WAIT)
