"""Run-time argument checks for callers no type checker sees (notebook cells, stored JSON, the model's tool calls).

The annotations already say what each argument must be, so a type checker calls these checks unnecessary;
they stay because a notebook passes whatever is at hand. Each case passes a wrong type and expects the
error that names the argument, not a failure somewhere later.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agentnb import Agent, Content, Message, ToolApprovalRule, ToolApprovalState
from agentnb._serialization import resolve_type
from agentnb._session_store import FileSessionStore, session_filename
from agentnb._sessions import AgentSession
from agentnb._types import normalize_messages
from agentnb.exceptions import SerializationError, SessionError, ToolExecutionError, WorkflowRunError
from agentnb.local import FunctionChatClient
from agentnb.mcp import MCPStdioTool, MCPStreamableHTTPTool
from agentnb.mcp._disclosure import _requested
from agentnb.orchestrations import GroupChatBuilder, HandoffBuilder, MagenticBuilder, SequentialBuilder
from agentnb.workflows import Executor, WorkflowBuilder, WorkflowContext, handler
from agentnb.workflows._checkpoints import _check_id
from agentnb.workflows._orchestrations._handoff import HandoffAgentUserRequest
from agentnb.workflows._timetravel import _to_pending


def _agent(name: str) -> Agent:
    return Agent(FunctionChatClient(lambda messages, options: "ok"), name=name)


class _Start(Executor):
    @handler
    async def go(self, text: str, ctx: WorkflowContext[str]) -> None:
        await ctx.yield_output(text)


CASES: list[tuple[str, Callable[[], Any], type[Exception], str]] = [
    ("Content.from_data", lambda: Content.from_data("text", "image/png"), TypeError, "data must be bytes, got str"),
    ("Message contents", lambda: Message("user", [5]), TypeError, "Message contents must be str or Content, got int"),
    ("normalize_messages", lambda: normalize_messages(["a", 5]), TypeError, "Cannot use a int as a message"),
    ("rule tool_name", lambda: ToolApprovalRule(5), ValueError, "tool_name must be a non-empty string, got 5"),
    ("rule arguments", lambda: ToolApprovalRule("t", arguments=[1]), ValueError, "arguments must be None or a JSON"),
    ("saved rule", lambda: ToolApprovalRule.from_dict([1]), ValueError, "Not a saved ToolApprovalRule: [1]"),
    ("saved state", lambda: ToolApprovalState.from_dict("x"), ValueError, "Not a saved ToolApprovalState: 'x'"),
    ("saved session", lambda: AgentSession.from_dict([1]), SessionError, "Not a saved AgentSession"),
    ("session id", lambda: session_filename(5, ".json"), ValueError, "session_id must be a non-empty string, got 5"),
    ("type id", lambda: resolve_type(5), SerializationError, "Malformed type id 5"),
    (
        "max_iterations",
        lambda: WorkflowBuilder(_Start("s"), max_iterations="3"),
        ValueError,
        "max_iterations must be an int >= 1",
    ),
    (
        "checkpoint_every",
        lambda: WorkflowBuilder(_Start("s"), checkpoint_every=1.5),
        ValueError,
        "checkpoint_every must be an int",
    ),
    ("executor id", lambda: Executor(5), ValueError, "Executor id must be a non-empty str, got 5."),
    ("checkpoint id", lambda: _check_id(5), ValueError, "Invalid checkpoint id 5"),
    ("pending message", lambda: _to_pending(("a", 1, 2, 3)), TypeError, "Pending messages must be PendingMessage"),
    ("model's tool names", lambda: _requested(["a", 5]), ToolExecutionError, "must be a tool name or a list"),
    ("MCP url", lambda: MCPStreamableHTTPTool("n", 5), ValueError, "url must be an http:// or https:// URL, got 5"),
    ("MCP name", lambda: MCPStdioTool(5, command="x"), ValueError, "name must be a non-empty string, got 5"),
    ("handoff reply", lambda: HandoffAgentUserRequest.create_response(["a", 5]), TypeError, "A reply is text or"),
    ("participants", lambda: SequentialBuilder(participants="ab"), TypeError, "participants must be a list of agents"),
    (
        "group chat max_rounds",
        lambda: GroupChatBuilder(participants=[_agent("a"), _agent("b")], selection_func=lambda s: "a", max_rounds="3"),
        ValueError,
        "max_rounds must be an int >= 1 or None, got '3'",
    ),
    (
        "with_max_rounds",
        lambda: GroupChatBuilder(participants=[_agent("a"), _agent("b")], selection_func=lambda s: "a").with_max_rounds(
            0.5
        ),
        ValueError,
        "max_rounds must be an int >= 1, got 0.5",
    ),
    (
        "handoff turn_limit",
        lambda: HandoffBuilder(participants=[_agent("a"), _agent("b")]).with_autonomous_mode(turn_limit=1.5),
        ValueError,
        "turn_limit must be an int >= 1, got 1.5",
    ),
    (
        "magentic max_round_count",
        lambda: MagenticBuilder(participants=[_agent("a")], manager_agent=_agent("m"), max_round_count="2"),
        ValueError,
        "max_round_count must be an int >= 1, got '2'",
    ),
    (
        "switch-case entries",
        lambda: WorkflowBuilder(start_executor=(start := _Start("s"))).add_switch_case_edge_group(start, ["x"]),
        TypeError,
        "Switch-case entries must be Case(...) or Default(...), got 'x'",
    ),
]


@pytest.mark.parametrize(("call", "error", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_a_wrong_type_is_refused_with_an_error_that_names_it(
    call: Callable[[], Any], error: type[Exception], message: str
) -> None:
    with pytest.raises(error, match=re.escape(message)):
        call()


def test_a_session_store_refuses_what_is_not_a_session(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match=r"FileSessionStore\.save expects an AgentSession, got str"):
        FileSessionStore(tmp_path).save("not a session")


async def test_a_state_key_that_is_not_a_string_fails_the_executor() -> None:
    class Writer(Executor):
        @handler
        async def go(self, text: str, ctx: WorkflowContext[str]) -> None:
            ctx.set_state(5, text)

    workflow = WorkflowBuilder(start_executor=Writer("w")).build()
    with pytest.raises(WorkflowRunError, match="State keys must be str, got int"):
        await workflow.run("x")
