"""ToolApprovalMiddleware: standing rules in the session, scoping by tool source, auto-approval predicates."""

from __future__ import annotations

import json
from typing import Any

import pytest

import agentnb
from agentnb import (
    Agent,
    AgentSession,
    Content,
    FunctionTool,
    Message,
    ToolApprovalMiddleware,
    ToolApprovalRule,
    ToolApprovalState,
    create_always_approve_tool_response,
    create_always_approve_tool_with_arguments_response,
    pending_approval_requests,
)
from agentnb._approval import AUTO_APPROVED_KEY
from agentnb.exceptions import ApprovalError
from agentnb.local import ScriptedChatClient
from tests.approval.approval_helpers import Run, Tools

call = ScriptedChatClient.call


def _answered_automatically(messages: list[Message]) -> list[Content]:
    return [
        c
        for m in messages
        if m.role == "user"
        for c in m.contents
        if c.type == "function_approval_response" and AUTO_APPROVED_KEY in c.additional_properties
    ]


async def test_always_approve_tool_approves_later_calls_with_any_arguments(tools: Tools, run: Run) -> None:
    client = ScriptedChatClient(
        [call("delete", path="a"), "Deleted a.", call("delete", path="b"), "Deleted b.", call("delete", path="c"), "c."]
    )
    middleware = ToolApprovalMiddleware()
    agent = Agent(client, tools=tools.all, middleware=[middleware])
    session = agent.create_session()

    _, response = await run(agent, "Delete a", session=session)
    answer = create_always_approve_tool_response(response.user_input_requests[0])
    assert answer.type == "function_approval_response" and answer.approved is True
    _, response = await run(agent, Message("user", [answer]), session=session)
    assert response.text == "Deleted a."
    assert middleware.rules(session) == [ToolApprovalRule("delete")]

    for path in ("b", "c"):
        _, response = await run(agent, f"Delete {path}", session=session)
        assert response.user_input_requests == []
        [auto] = _answered_automatically(response.messages)
        assert "always approve 'delete'" in auto.additional_properties[AUTO_APPROVED_KEY]
    assert [args["path"] for _, args in tools.ran] == ["a", "b", "c"]
    assert response.text == "c."


async def test_always_approve_with_arguments_only_approves_exactly_those_arguments(tools: Tools, run: Run) -> None:
    client = ScriptedChatClient(
        [
            call("delete", path="tmp"),
            "Deleted tmp.",
            call("delete", path="tmp"),
            "Deleted tmp again.",
            call("delete", path="home"),
        ]
    )
    middleware = ToolApprovalMiddleware()
    agent = Agent(client, tools=tools.all, middleware=[middleware])
    session = agent.create_session()
    _, response = await run(agent, "Clean tmp", session=session)
    answer = create_always_approve_tool_with_arguments_response(response.user_input_requests[0])
    await run(agent, Message("user", [answer]), session=session)
    assert middleware.rules(session) == [ToolApprovalRule("delete", arguments={"path": "tmp"})]

    _, response = await run(agent, "Clean tmp again", session=session)
    assert response.text == "Deleted tmp again."
    _, response = await run(agent, "Clean home", session=session)

    [request] = response.user_input_requests  # other arguments: the person is asked
    assert request.function_call is not None and request.function_call.parse_arguments() == {"path": "home"}
    assert [args["path"] for _, args in tools.ran] == ["tmp", "tmp"]


def test_argument_rules_compare_json_values_exactly() -> None:
    rule = ToolApprovalRule("set", arguments={"n": 1, "flags": ["a"]})
    assert rule.matches(Content.from_function_call("c", "set", '{"flags": ["a"], "n": 1}'))
    assert rule.matches(Content.from_function_call("c", "set", {"n": 1, "flags": ["a"]}))
    for other in (
        '{"n": true, "flags": ["a"]}',
        '{"n": 1.0, "flags": ["a"]}',
        '{"n": 1}',
        '{"n": 1, "flags": ["a"], "x": 0}',
    ):
        assert not rule.matches(Content.from_function_call("c", "set", other)), other
    assert not rule.matches(Content.from_function_call("c", "set", "not json"))
    assert not rule.matches(Content.from_function_call("c", "other", '{"n": 1, "flags": ["a"]}'))
    no_args = ToolApprovalRule("ping", arguments={})
    assert no_args.matches(Content.from_function_call("c", "ping", None))
    assert no_args.matches(Content.from_function_call("c", "ping", "{}"))
    assert not no_args.matches(Content.from_function_call("c", "ping", '{"host": "x"}'))
    with pytest.raises(ValueError, match="tool_name"):
        ToolApprovalRule("")
    with pytest.raises(ValueError, match="JSON-serializable"):
        ToolApprovalRule("x", arguments={"f": object()})


def _server_tool(name: str, server: str | None, ran: list[str]) -> FunctionTool:
    def body(query: str) -> str:
        ran.append(f"{server}:{query}")
        return f"{server} results for {query}"

    return FunctionTool(
        body,
        name=name,
        description="Search.",
        approval_mode="always_require",
        additional_properties={"server_label": server} if server is not None else None,
    )


async def test_rules_are_scoped_by_the_tools_server(run: Run) -> None:
    ran: list[str] = []
    docs = _server_tool("search", "docs", ran)
    mail = _server_tool("search", "mail", ran)
    local = _server_tool("search", None, ran)
    middleware = ToolApprovalMiddleware()
    script = [call("search", query=q) for q in ("q1", "q2", "q3", "q4")]
    client = ScriptedChatClient([script[0], "ok", script[1], script[2], script[3], "docs ok"])
    session = AgentSession()
    docs_agent = Agent(client, tools=[docs], middleware=[middleware])
    mail_agent = Agent(client, tools=[mail], middleware=[middleware])
    local_agent = Agent(client, tools=[local], middleware=[middleware])

    _, response = await run(docs_agent, "Search docs", session=session)
    request = response.user_input_requests[0]
    assert request.additional_properties["server_label"] == "docs"  # the loop records the source
    await run(docs_agent, Message("user", [create_always_approve_tool_response(request)]), session=session)
    assert middleware.rules(session) == [ToolApprovalRule("search", server_label="docs")]

    # Same session, same tool name, another server: the docs rule does not apply.
    _, response = await run(mail_agent, "Search mail", session=session)
    [mail_request] = response.user_input_requests
    assert mail_request.additional_properties["server_label"] == "mail"
    _, response = await run(
        local_agent, Message("user", [mail_request.to_function_approval_response(False)]), session=session
    )
    # A local tool of that name is another source too, even when a docs agent picks the call up later.
    [local_request] = response.user_input_requests
    assert local_request.additional_properties["server_label"] is None
    _, response = await run(docs_agent, "Search docs again", session=session)
    assert [r.id for r in response.user_input_requests] == [local_request.id]
    assert ran == ["docs:q1"]

    # Once the local call is answered (rejected), the docs server's next call is approved by the rule.
    _, response = await run(
        docs_agent, Message("user", [local_request.to_function_approval_response(False)]), session=session
    )
    assert response.user_input_requests == []
    assert ran == ["docs:q1", "docs:q4"]
    assert response.text == "docs ok"


async def test_an_approval_does_not_run_a_same_named_tool_from_another_source(run: Run) -> None:
    ran: list[str] = []
    client = ScriptedChatClient([call("search", query="secret"), "ok"])
    session = AgentSession()
    mail_agent = Agent(client, tools=[_server_tool("search", "mail", ran)])
    web_agent = Agent(client, tools=[_server_tool("search", "web", ran)])
    _, response = await run(mail_agent, "Search my mail", session=session)
    answer = response.user_input_requests[0].to_function_approval_response(True)

    _, response = await run(web_agent, Message("user", [answer]), session=session)

    assert ran == []  # approved for the mail server; the web server's tool must not run in its place
    result = response.messages[0].contents[0]
    assert "another source" in result.result


async def test_predicates_see_the_call_and_its_server(tools: Tools, run: Run) -> None:
    seen: list[dict[str, Any]] = []

    def only_tmp(function_call: Content) -> bool:
        seen.append({"name": function_call.name, **function_call.additional_properties})
        return function_call.parse_arguments().get("path", "").startswith("/tmp/")

    async def never(function_call: Content) -> bool:
        return False

    client = ScriptedChatClient([call("delete", path="/tmp/x"), "Deleted /tmp/x.", call("delete", path="/etc/passwd")])
    agent = Agent(client, tools=tools.all, middleware=[ToolApprovalMiddleware(auto_approval_rules=[never, only_tmp])])
    session = agent.create_session()

    _, response = await run(agent, "Delete /tmp/x", session=session)
    assert response.text == "Deleted /tmp/x."
    [auto] = _answered_automatically(response.messages)
    assert "only_tmp" in auto.additional_properties[AUTO_APPROVED_KEY]

    _, response = await run(agent, "Delete /etc/passwd", session=session)
    assert len(response.user_input_requests) == 1
    assert [args["path"] for _, args in tools.ran] == ["/tmp/x"]
    assert seen == [{"name": "delete"}, {"name": "delete"}]  # local tool: no server_label


async def test_a_predicate_sees_the_server_label_of_an_mcp_style_tool(run: Run) -> None:
    labels: list[Any] = []

    def record(function_call: Content) -> bool:
        labels.append(function_call.additional_properties.get("server_label"))
        return function_call.additional_properties.get("server_label") == "docs"

    ran: list[str] = []
    agent = Agent(
        ScriptedChatClient([call("search", query="x"), "found"]),
        tools=[_server_tool("search", "docs", ran)],
        middleware=[ToolApprovalMiddleware(auto_approval_rules=[record])],
    )
    _, response = await run(agent, "Find x", session=agent.create_session())
    assert labels == ["docs"] and ran == ["docs:x"] and response.text == "found"


async def test_a_predicate_must_return_a_bool(tools: Tools, run: Run) -> None:
    agent = Agent(
        ScriptedChatClient([call("delete", path="a")]),
        tools=tools.all,
        middleware=[ToolApprovalMiddleware(auto_approval_rules=[lambda c: "yes"])],
    )
    with pytest.raises(TypeError, match="must return True or False"):
        await run(agent, "Delete a", session=agent.create_session())
    assert tools.ran == []
    with pytest.raises(TypeError, match="callables"):
        ToolApprovalMiddleware(auto_approval_rules=["delete"])  # type: ignore[list-item]


async def test_mixed_batch_with_automatic_and_human_answers(tools: Tools, run: Run) -> None:
    client = ScriptedChatClient(
        [
            [
                call("delete", call_id="c1", path="/tmp/a"),
                call("lookup", call_id="c2", key="k"),
                call("delete", call_id="c3", path="/home/b"),
            ],
            "Done.",
        ]
    )
    tmp_only = ToolApprovalMiddleware(auto_approval_rules=[lambda c: c.parse_arguments()["path"].startswith("/tmp/")])
    agent = Agent(client, tools=tools.all, middleware=[tmp_only])
    session = agent.create_session()

    _, response = await run(agent, "Clean up", session=session)

    [request] = response.user_input_requests  # only the one the predicate does not cover
    assert request.function_call is not None and request.function_call.call_id == "c3"
    assert len(_answered_automatically(response.messages)) == 1
    assert tools.ran == []  # nothing runs until the person answers

    _, response = await run(agent, Message("user", [request.to_function_approval_response(True)]), session=session)
    assert [c.call_id for c in response.messages[0].contents] == ["c1", "c2", "c3"]
    assert [args for _, args in tools.ran] == [{"path": "/tmp/a"}, {"key": "k"}, {"path": "/home/b"}]


async def test_a_rule_made_in_answer_to_one_request_covers_its_waiting_sibling(tools: Tools, run: Run) -> None:
    client = ScriptedChatClient(
        [[call("delete", call_id="c1", path="a"), call("delete", call_id="c2", path="b")], "ok"]
    )
    middleware = ToolApprovalMiddleware()
    agent = Agent(client, tools=tools.all, middleware=[middleware])
    session = agent.create_session()
    _, response = await run(agent, "Delete a and b", session=session)
    first, _second = response.user_input_requests

    _, response = await run(agent, Message("user", [create_always_approve_tool_response(first)]), session=session)

    assert response.user_input_requests == []
    assert [args["path"] for _, args in tools.ran] == ["a", "b"]
    assert response.text == "ok"


async def test_rules_are_not_stored_when_the_answer_is_refused(tools: Tools, run: Run) -> None:
    client = ScriptedChatClient([call("delete", call_id="c1", path="a"), "ok"])
    middleware = ToolApprovalMiddleware()
    agent = Agent(client, tools=tools.all, middleware=[middleware])
    session = agent.create_session()
    _, response = await run(agent, "Delete a", session=session)
    request = response.user_input_requests[0]
    forged = Content.from_function_approval_request("c1:forged", request.function_call)  # type: ignore[arg-type]

    with pytest.raises(ApprovalError):
        await run(agent, Message("user", [create_always_approve_tool_response(forged)]), session=session)

    assert middleware.rules(session) == []
    assert tools.ran == []


async def test_rule_metadata_that_does_not_approve_is_refused(tools: Tools, run: Run) -> None:
    agent = Agent(
        ScriptedChatClient([call("delete", path="a")]), tools=tools.all, middleware=[ToolApprovalMiddleware()]
    )
    session = agent.create_session()
    _, response = await run(agent, "Delete a", session=session)
    answer = create_always_approve_tool_response(response.user_input_requests[0])
    answer.approved = False
    with pytest.raises(ApprovalError, match="does not approve"):
        await run(agent, Message("user", [answer]), session=session)
    answer.approved = True
    answer.additional_properties["tool_approval_rule"] = {"scope": "everything"}
    with pytest.raises(ApprovalError, match="unknown standing rule"):
        await run(agent, Message("user", [answer]), session=session)
    assert tools.ran == []


async def test_rules_travel_with_the_session_as_json(tools: Tools) -> None:
    client = ScriptedChatClient([call("delete", path="a"), "ok", call("delete", path="b"), "ok again"])
    middleware = ToolApprovalMiddleware()
    agent = Agent(client, tools=tools.all, middleware=[middleware])
    session = agent.create_session()
    response = await agent.run("Delete a", session=session)
    await agent.run(
        Message("user", [create_always_approve_tool_response(response.user_input_requests[0])]), session=session
    )

    data = json.loads(json.dumps(session.to_dict()))
    restored = AgentSession.from_dict(data)

    assert isinstance(restored.state["tool_approval"], ToolApprovalState)
    assert middleware.rules(restored) == [ToolApprovalRule("delete")]
    response = await agent.run("Delete b", session=restored)
    assert response.text == "ok again"
    assert [args["path"] for _, args in tools.ran] == ["a", "b"]


async def test_rules_can_be_managed_directly(tools: Tools, run: Run) -> None:
    middleware = ToolApprovalMiddleware()
    agent = Agent(
        ScriptedChatClient([call("delete", path="a"), "ok", call("delete", path="b")]),
        tools=tools.all,
        middleware=[middleware],
    )
    session = agent.create_session()
    assert middleware.rules(session) == []
    assert middleware.add_rule(session, ToolApprovalRule("delete")) is True
    assert middleware.add_rule(session, ToolApprovalRule("delete")) is False

    _, response = await run(agent, "Delete a", session=session)
    assert response.text == "ok"
    assert middleware.remove_rule(session, ToolApprovalRule("delete")) is True
    _, response = await run(agent, "Delete b", session=session)
    assert len(response.user_input_requests) == 1
    assert [args["path"] for _, args in tools.ran] == ["a"]


async def test_without_a_session_rules_last_for_the_run_and_history_resend_works(tools: Tools, run: Run) -> None:
    client = ScriptedChatClient(
        [
            [call("delete", call_id="c1", path="a"), call("delete", call_id="c2", path="b")],
            call("delete", call_id="c3", path="c"),
            "All three.",
        ]
    )
    agent = Agent(client, tools=tools.all, middleware=[ToolApprovalMiddleware()])
    history = [Message("user", ["Delete a, b, c"])]
    _, response = await run(agent, history)
    history += response.messages
    first, _second = response.user_input_requests

    _, response = await run(agent, [*history, Message("user", [create_always_approve_tool_response(first)])])

    # The rule covered the sibling and the next round's call within this run.
    assert response.user_input_requests == []
    assert [args["path"] for _, args in tools.ran] == ["a", "b", "c"]
    assert response.text == "All three."


async def test_automatic_answers_stream_as_user_updates(tools: Tools) -> None:
    agent = Agent(
        ScriptedChatClient([call("delete", path="a"), "Deleted."]),
        tools=tools.all,
        middleware=[ToolApprovalMiddleware(auto_approval_rules=[lambda c: True])],
    )
    stream = agent.run("Delete a", stream=True, session=agent.create_session())
    updates = [u async for u in stream]
    final = await stream.get_final_response()

    roles_and_types = [(u.role, c.type) for u in updates for c in u.contents if c.type != "usage"]
    request_at = roles_and_types.index(("assistant", "function_approval_request"))
    assert roles_and_types[request_at + 1] == ("user", "function_approval_response")
    assert ("tool", "function_result") in roles_and_types[request_at:]
    assert final.text == "Deleted."
    assert final.user_input_requests == []
    assert tools.ran == [("delete", {"path": "a"})]


async def test_outer_middleware_still_sees_the_whole_stream(tools: Tools) -> None:
    seen: list[str] = []

    @agentnb.agent_middleware
    async def outer(context: agentnb.AgentContext, call_next: Any) -> None:
        await call_next()
        inner = context.result

        async def relay() -> Any:
            async for update in inner:
                seen.append(update.role or "")
                yield update

        context.result = agentnb.ResponseStream(relay(), lambda _u: inner.get_final_response())

    agent = Agent(
        ScriptedChatClient([call("delete", path="a"), "Deleted."]),
        tools=tools.all,
        middleware=[outer, ToolApprovalMiddleware(auto_approval_rules=[lambda c: True])],
    )
    stream = agent.run("Delete a", stream=True, session=agent.create_session())
    [u async for u in stream]
    final = await stream.get_final_response()
    assert final.text == "Deleted."
    assert "tool" in seen and "user" in seen


async def test_max_iterations_holds_with_automatic_approvals(tools: Tools, run: Run) -> None:
    client = ScriptedChatClient([*(call("delete", path=f"f{i}") for i in range(4)), "stop"], max_iterations=3)
    agent = Agent(client, tools=tools.all, middleware=[ToolApprovalMiddleware(auto_approval_rules=[lambda c: True])])

    _, response = await run(agent, "Delete all", session=agent.create_session())

    assert [args["path"] for _, args in tools.ran] == ["f0", "f1", "f2"]
    assert response.user_input_requests == []
    assert client.call_options[3]["tool_choice"] == "none"


async def test_the_label_is_resolved_from_the_agents_tools_when_a_request_lacks_it(run: Run) -> None:
    ran: list[str] = []
    docs = _server_tool("search", "docs", ran)
    middleware = ToolApprovalMiddleware()
    agent = Agent(ScriptedChatClient(["found"]), tools=[docs], middleware=[middleware])
    # A conversation saved by an older program: the request does not record the tool's server.
    fc = Content.from_function_call("c1", "search", '{"query": "x"}')
    request = Content.from_function_approval_request("c1:old", fc)
    history = [Message("user", ["Find x"]), Message("assistant", [fc, request])]

    await run(agent, [*history, Message("user", [create_always_approve_tool_response(request)])])

    assert ran == ["docs:x"]


async def test_pending_requests_can_be_found_from_the_session(tools: Tools) -> None:
    agent = Agent(ScriptedChatClient([call("delete", call_id="c1", path="a"), "ok"]), tools=tools.all)
    session = agent.create_session()
    assert await pending_approval_requests(session, agent=agent) == []
    response = await agent.run("Delete a", session=session)
    pending = await pending_approval_requests(session, agent=agent)
    assert pending == response.user_input_requests
    await agent.run(Message("user", [pending[0].to_function_approval_response(True)]), session=session)
    assert await pending_approval_requests(session) == []


def test_source_id_is_the_references_name_for_the_state_key() -> None:
    assert agentnb.DEFAULT_TOOL_APPROVAL_SOURCE_ID == "tool_approval"
    assert ToolApprovalMiddleware().source_id == agentnb.DEFAULT_TOOL_APPROVAL_SOURCE_ID
    middleware = ToolApprovalMiddleware(source_id="approvals")
    assert (middleware.source_id, middleware.state_key) == ("approvals", "approvals")
    assert ToolApprovalMiddleware(source_id="a", state_key="a").state_key == "a"
    with pytest.raises(ValueError, match="not both"):
        ToolApprovalMiddleware(source_id="a", state_key="b")
