"""SkillsProvider with a real agent: advertising, the three tools, and approval through the usual flow."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentnb import (
    Agent,
    Content,
    FunctionTool,
    InlineSkill,
    Message,
    SkillFrontmatter,
    SkillsProvider,
    ToolApprovalMiddleware,
)
from agentnb.local import ScriptedChatClient

from .helpers import write_skill

call = ScriptedChatClient.call


def make_skill(name: str = "style", log: list[str] | None = None) -> InlineSkill:
    seen = log if log is not None else []
    skill = InlineSkill(
        frontmatter=SkillFrontmatter(name=name, description=f"The <{name}> & guide."),
        instructions=f"Instructions of {name}.",
    )

    @skill.resource
    def guide() -> str:
        seen.append("read")
        return "the guide"

    @skill.script
    def shout(text: str) -> str:
        seen.append("run")
        return text.upper()

    return skill


def system_text(messages: list[Message]) -> str:
    return "\n".join(m.text for m in messages if m.role == "system")


def results(response: Any) -> list[Any]:
    return [c.result for m in response.messages for c in m.contents if c.type == "function_result"]


async def test_advertises_sorted_escaped_names_and_offers_three_tools() -> None:
    seen: list[dict[str, Any]] = []

    def capture(messages: list[Message], options: dict[str, Any]) -> str:
        seen.append({"instructions": system_text(messages), "tools": options.get("tools", [])})
        return "ok"

    from agentnb.local import FunctionChatClient

    provider = SkillsProvider([make_skill("zeta"), make_skill("alpha")])
    agent = Agent(FunctionChatClient(capture), context_providers=[provider])
    await agent.run("hi")
    instructions = seen[0]["instructions"]
    assert instructions.index("<name>alpha</name>") < instructions.index("<name>zeta</name>")
    assert "<description>The &lt;alpha&gt; &amp; guide.</description>" in instructions
    tools = {t.name: t for t in seen[0]["tools"]}
    assert set(tools) == {"load_skill", "read_skill_resource", "run_skill_script"}
    assert all(t.approval_mode == "always_require" for t in tools.values())
    assert [s.frontmatter.name for s in provider.skills] == ["zeta", "alpha"]


async def test_no_skills_adds_nothing() -> None:
    from agentnb.local import FunctionChatClient

    seen: list[tuple[str, Any]] = []
    agent = Agent(
        FunctionChatClient(lambda m, o: seen.append((system_text(m), o.get("tools"))) or "ok"),
        context_providers=[SkillsProvider([])],
    )
    await agent.run("hi")
    assert seen == [("", None)]


async def test_every_tool_waits_for_approval_and_runs_only_once_approved() -> None:
    log: list[str] = []
    client = ScriptedChatClient(
        [call("run_skill_script", skill_name="style", script_name="shout", args={"text": "hi"}), "Done."]
    )
    agent = Agent(client, context_providers=[SkillsProvider(make_skill(log=log))])
    session = agent.create_session()
    response = await agent.run("shout", session=session)
    (request,) = response.user_input_requests
    assert request.function_call is not None and request.function_call.name == "run_skill_script"
    assert log == []  # nothing ran
    response = await agent.run(Message("user", [request.to_function_approval_response(True)]), session=session)
    assert log == ["run"] and results(response) == ["HI"]


async def test_a_denied_script_never_runs() -> None:
    log: list[str] = []
    client = ScriptedChatClient(
        [call("run_skill_script", skill_name="style", script_name="shout", args={"text": "x"}), "OK."]
    )
    agent = Agent(client, context_providers=[SkillsProvider(make_skill(log=log))])
    session = agent.create_session()
    (request,) = (await agent.run("go", session=session)).user_input_requests
    response = await agent.run(Message("user", [request.to_function_approval_response(False)]), session=session)
    assert log == [] and "rejected by user" in str(results(response)[0])


async def test_read_only_rule_approves_reads_but_scripts_still_ask() -> None:
    log: list[str] = []
    client = ScriptedChatClient(
        [
            [
                call("load_skill", skill_name="style"),
                call("read_skill_resource", skill_name="style", resource_name="guide"),
            ],
            call("run_skill_script", skill_name="style", script_name="shout", args={"text": "x"}),
        ]
    )
    agent = Agent(
        client,
        context_providers=[SkillsProvider(make_skill(log=log))],
        middleware=[ToolApprovalMiddleware(auto_approval_rules=[SkillsProvider.read_only_tools_auto_approval_rule])],
    )
    response = await agent.run("go", session=agent.create_session())
    assert log == ["read"]
    assert "Instructions of style." in str(results(response)[0]) and results(response)[1] == "the guide"
    (pending,) = response.user_input_requests
    assert pending.function_call is not None and pending.function_call.name == "run_skill_script"


async def test_all_tools_rule_approves_scripts_too() -> None:
    log: list[str] = []
    client = ScriptedChatClient(
        [call("run_skill_script", skill_name="style", script_name="shout", args={"text": "x"}), "Done."]
    )
    agent = Agent(
        client,
        context_providers=[SkillsProvider(make_skill(log=log))],
        middleware=[ToolApprovalMiddleware(auto_approval_rules=[SkillsProvider.all_tools_auto_approval_rule])],
    )
    response = await agent.run("go", session=agent.create_session())
    assert log == ["run"] and response.text == "Done."


def test_rules_never_approve_a_same_named_tool_from_a_server() -> None:
    local = Content.from_function_call("c1", "load_skill", "{}")
    remote = Content.from_function_call("c1", "load_skill", "{}", additional_properties={"server_label": "srv"})
    other = Content.from_function_call("c1", "delete_everything", "{}")
    assert SkillsProvider.all_tools_auto_approval_rule(local) is True
    assert SkillsProvider.all_tools_auto_approval_rule(remote) is False
    assert SkillsProvider.read_only_tools_auto_approval_rule(remote) is False
    assert SkillsProvider.all_tools_auto_approval_rule(other) is False
    run = Content.from_function_call("c1", "run_skill_script", "{}")
    assert SkillsProvider.read_only_tools_auto_approval_rule(run) is False


async def test_a_server_tool_named_like_a_skill_tool_still_asks() -> None:
    # The tool's source travels with the approval request; the rule sees it and declines.
    ran: list[str] = []

    def remote_read(skill_name: str, resource_name: str) -> str:
        ran.append(resource_name)
        return "remote data"

    remote = FunctionTool(
        remote_read,
        name="read_skill_resource",
        approval_mode="always_require",
        additional_properties={"server_label": "someone-else"},
    )
    client = ScriptedChatClient([call("read_skill_resource", skill_name="x", resource_name="y"), "Done."])
    agent = Agent(
        client,
        tools=[remote],
        middleware=[ToolApprovalMiddleware(auto_approval_rules=[SkillsProvider.all_tools_auto_approval_rule])],
    )
    response = await agent.run("go", session=agent.create_session())
    assert ran == [] and len(response.user_input_requests) == 1


async def test_disable_switches_register_tools_without_approval(tmp_path: Path) -> None:
    write_skill(tmp_path, "s")
    provider = SkillsProvider.from_paths(
        tmp_path, disable_load_skill_approval=True, disable_read_skill_resource_approval=True
    )
    client = ScriptedChatClient([call("load_skill", skill_name="s"), "Loaded."])
    response = await Agent(client, context_providers=[provider]).run("go")
    assert response.text == "Loaded." and "Follow these steps." in str(results(response)[0])
    assert (provider.load_skill_approval, provider.run_skill_script_approval) == ("never_require", "always_require")
    assert SkillsProvider([], disable_run_skill_script_approval=True).run_skill_script_approval == "never_require"


async def test_tool_errors_are_messages_to_the_model() -> None:
    provider = SkillsProvider(make_skill(), disable_load_skill_approval=True, disable_read_skill_resource_approval=True)
    client = ScriptedChatClient(
        [
            [
                call("load_skill", skill_name="nope"),
                call("load_skill", skill_name=" "),
                call("read_skill_resource", skill_name="style", resource_name="missing"),
            ],
            "ok",
        ]
    )
    response = await Agent(client, context_providers=[provider]).run("go")
    assert results(response) == [
        "Error: Skill 'nope' not found.",
        "Error: Skill name cannot be empty.",
        "Error: Resource 'missing' not found in skill 'style'.",
    ]


async def test_caching_and_rescanning(tmp_path: Path) -> None:
    write_skill(tmp_path, "first")
    cached = SkillsProvider.from_paths(tmp_path)
    rescanning = SkillsProvider.from_paths(tmp_path, disable_caching=True)
    for provider in (cached, rescanning):
        await Agent(ScriptedChatClient(["a"]), context_providers=[provider]).run("go")
    write_skill(tmp_path, "second")
    tools_before = list(cached._turn.tools)  # type: ignore[union-attr]  # pyright: ignore[reportPrivateUsage]
    for provider in (cached, rescanning):
        await Agent(ScriptedChatClient(["a"]), context_providers=[provider]).run("go")
    assert [s.frontmatter.name for s in cached.skills] == ["first"]
    assert sorted(s.frontmatter.name for s in rescanning.skills) == ["first", "second"]
    assert cached._turn.tools == tools_before  # type: ignore[union-attr]  # pyright: ignore[reportPrivateUsage]


def test_constructor_checks() -> None:
    with pytest.raises(TypeError, match="from_paths"):
        SkillsProvider("./skills")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="skills"):
        SkillsProvider([], instruction_template="no placeholder")
    with pytest.raises(ValueError, match="format string"):
        SkillsProvider([], instruction_template="{skills} {unknown}")
    assert SkillsProvider([]).source_id == "agent_skills"
    assert (SkillsProvider.LOAD_SKILL_TOOL_NAME, SkillsProvider.RUN_SKILL_SCRIPT_TOOL_NAME) == (
        "load_skill",
        "run_skill_script",
    )


async def test_custom_template_without_the_optional_placeholders() -> None:
    from agentnb.local import FunctionChatClient

    seen: list[str] = []
    provider = SkillsProvider(make_skill(), instruction_template="Skills:\n{skills}")
    await Agent(FunctionChatClient(lambda m, o: seen.append(system_text(m)) or "ok"), context_providers=[provider]).run(
        "hi"
    )
    assert seen[0].startswith("Skills:\n  <skill>") and "run_skill_script" not in seen[0]
