"""Hosted tool runs and citations in the notebook's display: readable, and escaped (it is provider output)."""

from __future__ import annotations

from agentnb import Annotation, Content, Message, TextSpanRegion
from agentnb.notebook._display import message_html, messages_text

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 8


def _hostile_message() -> Message:
    citation = Annotation(
        type="citation",
        title="<script>alert(1)</script>",
        url="https://docs.example/a?x=1&y=2",
        annotated_regions=[TextSpanRegion(type="text_span", start_index=0, end_index=4)],
    )
    trap = Annotation(type="citation", title="trap", url="javascript:alert(2)")
    return Message(
        "assistant",
        [
            Content.from_code_interpreter_tool_call(call_id="ci", inputs=[Content.from_text("print('<b>')")]),
            Content.from_code_interpreter_tool_result(
                call_id="ci",
                outputs=[Content.from_text("<b>\n"), Content.from_uri("javascript:alert(3)")],
            ),
            Content.from_search_tool_call("ws", tool_name="web_search", arguments={"query": "<i>q</i>"}),
            Content.from_image_generation_tool_result(image_id="ig", outputs=Content.from_data(PNG, "image/png")),
            Content.from_image_generation_tool_result(
                image_id="svg", outputs=Content.from_data(b"<svg onload=alert(4)>", "image/svg+xml")
            ),
            Content.from_mcp_server_tool_call("m1", "lookup", server_name="docs<>", arguments='{"k": "<v>"}'),
            Content.from_shell_tool_call(call_id="sh", commands=["echo '<hi>'"]),
            Content.from_shell_tool_result(
                call_id="sh", outputs=[Content.from_shell_command_output(stdout="<hi>\n", exit_code=0)]
            ),
            Content.from_text("Docs say hello.", annotations=[citation, trap]),
        ],
    )


def test_hosted_runs_and_citations_render_escaped():
    html = message_html(_hostile_message())
    assert "<script" not in html and "<b>" not in html and "<i>" not in html and "<svg" not in html
    assert "print(&#x27;&lt;b&gt;&#x27;)" in html  # the code, escaped
    assert "code interpreter" in html and "web_search" in html and "hosted MCP" in html
    assert "docs&lt;&gt;" in html
    assert "$ echo &#x27;&lt;hi&gt;&#x27;" in html and "exit 0" in html
    # The PNG shows as an image we encode ourselves; the SVG never becomes markup.
    assert html.count("<img") == 1 and 'src="data:image/png;base64,' in html
    assert "[image/svg+xml, 21 bytes]" in html
    # Citations: a link for https, plain text for any other scheme.
    assert 'href="https://docs.example/a?x=1&amp;y=2"' in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert 'href="javascript' not in html


def test_hosted_runs_and_citations_as_plain_text():
    text = messages_text([_hostile_message()])
    assert "(code interpreter) print('<b>')" in text
    assert "$ echo '<hi>'" in text
    assert "(hosted MCP docs<>) lookup(" in text
    assert "[1] <script>alert(1)</script> <https://docs.example/a?x=1&y=2>" in text
    assert "[generated image]" in text


def test_an_agent_with_hosted_tools_displays_them_by_name():
    from agentnb import Agent, tool
    from agentnb.local import ScriptedChatClient
    from agentnb.notebook._display import to_html, to_text
    from agentnb.openai import OpenAIChatClient

    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    agent = Agent(
        ScriptedChatClient(["x"]),
        tools=[add, OpenAIChatClient.get_web_search_tool(), OpenAIChatClient.get_mcp_tool(name="<d>", url="u")],
    )
    html = to_html(agent) or ""
    assert "<code>web_search</code>" in html and "&lt;d&gt;" in html and "hosted" in html
    assert "<code>add</code>" in html
    text = to_text(agent) or ""
    assert "tool: web_search [hosted]" in text and "tool: <d> [hosted]" in text
