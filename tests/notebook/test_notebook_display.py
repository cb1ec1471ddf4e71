"""Rich display of core types: safe HTML (hostile model output stays inert) and readable text."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from pydantic import BaseModel

from agentnb import (
    Agent,
    AgentResponse,
    AgentSession,
    ChatResponse,
    Content,
    FunctionTool,
    InMemoryHistoryProvider,
    Message,
    tool,
)
from agentnb.local import ScriptedChatClient, ToolCallingChatClient
from agentnb.notebook import messages_html, register_renderer, to_html, to_text

HOSTILE = '<script>alert(1)</script><img src=x onerror="alert(2)"> [x](javascript:alert(3)) <svg onload=alert(4)>'


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


def assert_inert(html: str) -> None:
    """No script, no event handler, no javascript:/data: link, no SVG, no stray image anywhere in ``html``."""
    parser = _Tags()
    parser.feed(html)
    for tag, attrs in parser.tags:
        assert tag not in {"script", "svg", "iframe", "object", "embed"}, tag
        for name, value in attrs:
            assert not name.startswith("on"), (tag, name)
            if name in {"href", "src"}:
                low = (value or "").strip().lower()
                assert not low.startswith(("javascript:", "vbscript:")), value
                if low.startswith("data:"):
                    assert tag == "img" and low.startswith(("data:image/png", "data:image/jpeg")), value
    # The only <style> is our stylesheet.
    assert html.count("<style>") <= 1


@tool(approval_mode="always_require")
def delete_file(path: str) -> str:
    """Delete a file <b>now</b>."""
    return f"deleted {path}"


@tool
def get_weather(city: str) -> str:
    """Return the weather for a city."""
    return f"Sunny in {city}."


def test_message_html_escapes_every_hostile_field() -> None:
    call = Content.from_function_call("c1", HOSTILE, arguments={"x": HOSTILE})
    msg = Message(
        "assistant",
        [
            Content.from_text(HOSTILE),
            Content.from_reasoning(HOSTILE),
            call,
            Content.from_function_result("c1", result=HOSTILE),
            Content.from_function_approval_request("r1", call),
            Content.from_function_approval_response("r1", False, call, reason=HOSTILE),
            Content.from_uri("javascript:alert(1)"),
            Content.from_data(b"<svg onload=alert(1)>", "image/svg+xml"),
            Content.from_error(message=HOSTILE, error_code=HOSTILE),
        ],
        author_name=HOSTILE,
    )
    html = to_html(msg)
    assert html is not None
    assert_inert(html)
    assert "&lt;script&gt;" in html  # shown as text, not dropped silently


def test_markdown_in_replies_is_rendered() -> None:
    html = to_html(Message("assistant", ["**bold** and `code`\n\n- a\n- b"]))
    assert html is not None
    assert "<strong>bold</strong>" in html and "<code>code</code>" in html and "<li>a</li>" in html


def test_raster_images_show_inline_and_svg_does_not() -> None:
    png = Message("assistant", [Content.from_data(b"\x89PNG\r\n", "image/png")])
    svg = Message("assistant", [Content.from_data(b"<svg/>", "image/svg+xml")])
    assert 'src="data:image/png;base64,' in (to_html(png) or "")
    svg_html = to_html(svg) or ""
    assert "data:image/svg" not in svg_html and "[image/svg+xml, 6 bytes]" in svg_html


async def test_agent_response_pairs_tool_calls_with_results() -> None:
    agent = Agent(ToolCallingChatClient(), "Be brief.", name="weather", tools=[get_weather])
    response = await agent.run("What's the weather in Paris?")
    html = to_html(response) or ""
    text = to_text(response) or ""
    assert "get_weather" in html and "Sunny in Paris." in html and "done" in html
    assert "AgentResponse" in text and "get_weather(city='Paris') -> Sunny in Paris." in text
    assert "tokens" in text
    # The function result is shown inside its call, not a second time on its own.
    assert text.count("Sunny in Paris.") == 2  # once as the tool result, once in the model's summary
    assert_inert(html)


async def test_pending_approval_is_visible_in_response_and_session() -> None:
    agent = Agent(ToolCallingChatClient(), name="ops", tools=[delete_file])
    session = agent.create_session()
    response = await agent.run("Delete Notes", session=session)
    assert response.user_input_requests
    assert "approval(s) pending" in (to_text(response) or "")
    assert "awaiting approval" in (to_html(response) or "")
    assert "1 approval(s) pending" in (to_html(session) or "")
    text = to_text(session) or ""
    assert text.startswith(f"AgentSession {session.session_id}") and "approval needed: delete_file" in text


def test_agent_display_lists_tools_schemas_and_approval() -> None:
    agent = Agent(
        ScriptedChatClient(["hi"]),
        "Use <b>tools</b>.",
        name="ops<script>",
        description="Ops helper",
        tools=[delete_file, get_weather],
    )
    html = to_html(agent) or ""
    text = to_text(agent) or ""
    assert_inert(html)
    assert "ops&lt;script&gt;" in html and "Use &lt;b&gt;tools&lt;/b&gt;." in html
    assert "needs approval" in html and "&quot;city&quot;" in html  # schema shown as JSON
    assert "ScriptedChatClient" in html and "scripted" in html
    assert text.splitlines()[0] == "Agent ops<script> · ScriptedChatClient (scripted)"
    assert "  tool: delete_file(path: string) [needs approval]" in text


def test_tool_display() -> None:
    html = to_html(delete_file) or ""
    assert "delete_file" in html and "needs approval" in html and "Delete a file &lt;b&gt;now&lt;/b&gt;." in html
    assert (to_text(get_weather) or "").startswith("FunctionTool get_weather(city: string)")


def test_chat_response_and_structured_value() -> None:
    response = ChatResponse(
        messages=[Message("assistant", ["ok"])], model_id="m1", finish_reason="stop", value={"a": 1}
    )
    html = to_html(response) or ""
    assert "structured value" in html and "&quot;a&quot;: 1" in html and "m1" in html
    assert (to_text(response) or "").startswith("ChatResponse · model m1 · 1 message(s)")


async def test_session_shows_the_history_its_in_memory_provider_keeps() -> None:
    # A history kept under its own source id is found where the provider keeps it, not by searching state.
    agent = Agent(ScriptedChatClient(["Hi Ada."]), context_providers=[InMemoryHistoryProvider("mine")])
    session = agent.create_session()
    await agent.run("I'm Ada.", session=session)
    assert [m.text for m in session.messages] == ["I'm Ada.", "Hi Ada."]
    assert "2 message(s)" in (to_text(session) or "") and "Hi Ada." in (to_html(session) or "")
    # Messages some other state holds are not the conversation.
    other = AgentSession(state={"notes": {"kept": [Message("user", ["not history"])]}})
    assert other.messages == [] and "0 message(s)" in (to_text(other) or "")


def test_agent_display_names_sub_agents_and_tool_providers() -> None:
    class Provider:
        """Stands for several tools, listed when a run starts (as an MCP server does)."""

        async def get_tools(self) -> list[FunctionTool]:
            return []

        def __repr__(self) -> str:
            return "Provider(name='files<b>')"

    helper = Agent(ScriptedChatClient(["ok"]), name="helper", description="Helps.")
    agent = Agent(ScriptedChatClient(["hi"]), name="lead", tools=[helper, Provider(), get_weather])
    html, text = to_html(agent) or "", to_text(agent) or ""
    assert_inert(html)
    assert "tools (3)" in html and "<code>helper</code>" in html and "Provider(name=&#x27;files&lt;b&gt;&#x27;)" in html
    assert "  tool: helper(" in text and "  tool: Provider(name='files<b>')" in text


def test_structured_value_that_does_not_parse_is_shown_as_an_error() -> None:
    class Movie(BaseModel):
        title: str
        year: int

    html = to_html(ChatResponse(text='{"title": "Alien"}', response_format=Movie)) or ""
    assert "anb-error" in html and "structured value" in html and "year" in html
    ok = to_html(ChatResponse(text='{"title": "Alien", "year": 1979}', response_format=Movie)) or ""
    assert "&quot;year&quot;: 1979" in ok


def test_empty_session_and_unknown_types() -> None:
    session = AgentSession(session_id="s1")
    assert to_text(session) == "AgentSession s1 · 0 message(s)"
    assert to_html(object()) is None and to_text(42) is None


def test_register_renderer_for_new_types() -> None:
    class Thing:
        pass

    register_renderer(Thing, lambda t: "<b>thing</b>", lambda t: "a thing")
    assert to_text(Thing()) == "a thing"
    assert "<b>thing</b>" in (to_html(Thing()) or "")


def test_messages_html_shows_running_calls_while_streaming() -> None:
    call = Content.from_function_call("c1", "slow_tool", arguments="{}")
    html = messages_html([Message("assistant", [call])], pending=True)
    assert "running…" in html
    assert "no result" in messages_html([Message("assistant", [call])], pending=False)


@pytest.mark.parametrize("role", ["user", "assistant", "system", "tool"])
def test_each_role_gets_its_bubble(role: str) -> None:
    assert f"anb-msg anb-{role}" in (to_html(Message(role, ["x"])) or "")


def test_agent_response_from_dict_round_trip_renders_the_same() -> None:
    response = AgentResponse(messages=[Message("assistant", ["hello"])], agent_id="a1")
    again = AgentResponse.from_dict(response.to_dict())
    assert to_text(again) == to_text(response)


def test_importing_the_notebook_layer_stays_light() -> None:
    import subprocess
    import sys

    code = (
        "import sys, agentnb, agentnb.notebook;"
        "heavy = ('IPython', 'ipywidgets', 'pandas', 'markdown_it', 'nh3', 'opentelemetry.sdk', 'agentnb.workflows');"
        "print([m for m in heavy if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_public_names_are_sorted_and_importable() -> None:
    import agentnb.notebook as nb

    assert list(nb.__all__) == sorted(nb.__all__)
    for name in nb.__all__:
        assert getattr(nb, name) is not None, name
