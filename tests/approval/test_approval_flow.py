"""The approval flow of the function-invocation loop: requests, answers, mixed batches, streaming, limits."""

from __future__ import annotations

import json

import pytest

from agentnb import Agent, AgentSession, Content, Message, tool
from agentnb.exceptions import ApprovalError
from agentnb.local import ScriptedChatClient
from tests.approval.approval_helpers import Run, Tools

call = ScriptedChatClient.call


def _types(message: Message) -> list[str]:
    return [c.type for c in message.contents]


async def test_approval_required_call_ends_the_turn_with_a_request(tools: Tools, run: Run, stream: bool) -> None:
    client = ScriptedChatClient([call("delete", call_id="c1", path="a.txt"), "Deleted a.txt."])
    agent = Agent(client, tools=tools.all)
    session = agent.create_session()

    updates, response = await run(agent, "Delete a.txt", session=session)

    assert tools.ran == []
    [request] = response.user_input_requests
    assert request.type == "function_approval_request"
    assert request.function_call is not None
    assert (request.function_call.call_id, request.function_call.name) == ("c1", "delete")
    assert request.function_call.parse_arguments() == {"path": "a.txt"}
    assert response.text == ""
    assert len(client.calls) == 1  # the model was not called again
    if stream:  # the request arrives as an update, and the stream ends there
        assert any(c.type == "function_approval_request" for u in updates for c in u.contents)
        assert updates[-1].contents[-1].type == "function_approval_request"

    answer = Message("user", [request.to_function_approval_response(True)])
    updates, response = await run(agent, answer, session=session)

    assert tools.ran == [("delete", {"path": "a.txt"})]
    assert response.text == "Deleted a.txt."
    assert response.user_input_requests == []
    assert [m.role for m in response.messages] == ["tool", "assistant"]
    assert response.messages[0].contents[0].result == "deleted a.txt"
    if stream:  # resuming streams the rest: the tool result, then the answer
        kinds = [c.type for u in updates for c in u.contents]
        assert kinds.index("function_result") < kinds.index("text")
    # What the model saw on resume: the call and its result, no approval bookkeeping.
    seen = client.calls[-1]
    assert not any(c.type.startswith("function_approval") for m in seen for c in m.contents)
    assert [c.type for m in seen for c in m.contents][-2:] == ["function_call", "function_result"]


async def test_rejected_call_becomes_a_denial_result_with_the_reason(tools: Tools, run: Run) -> None:
    client = ScriptedChatClient([call("delete", call_id="c1", path="a.txt"), "OK, I left it."])
    agent = Agent(client, tools=tools.all)
    session = agent.create_session()
    _, response = await run(agent, "Delete a.txt", session=session)
    request = response.user_input_requests[0]

    answer = request.to_function_approval_response(False, reason="it is my thesis")
    _, response = await run(agent, Message("user", [answer]), session=session)

    assert tools.ran == []
    result = response.messages[0].contents[0]
    assert result.type == "function_result" and result.call_id == "c1"
    assert result.result == "Error: Tool call invocation was rejected by user. Reason: it is my thesis"
    assert result.additional_properties["approval"] == "rejected"
    assert response.text == "OK, I left it."
    # The model continued after seeing the denial.
    assert client.calls[-1][-1].contents[0].result == result.result


async def test_mixed_batch_resumes_only_when_every_request_is_answered(tools: Tools, run: Run, stream: bool) -> None:
    client = ScriptedChatClient(
        [
            [
                call("delete", call_id="c1", path="a"),
                call("lookup", call_id="c2", key="k"),
                call("delete", call_id="c3", path="b"),
            ],
            "Done.",
        ]
    )
    agent = Agent(client, tools=tools.all)
    session = agent.create_session()

    _, response = await run(agent, "Clean up", session=session)
    requests = response.user_input_requests
    assert [r.function_call.call_id for r in requests if r.function_call] == ["c1", "c3"]
    assert tools.ran == []  # the free call waits with the batch

    # Answer the second request first: still one missing, nothing runs, the missing one is asked again.
    _, response = await run(agent, Message("user", [requests[1].to_function_approval_response(True)]), session=session)
    assert tools.ran == []
    assert [r.id for r in response.user_input_requests] == [requests[0].id]
    assert len(client.calls) == 1

    _, response = await run(agent, Message("user", [requests[0].to_function_approval_response(True)]), session=session)
    assert [name for name, _ in tools.ran] == ["delete", "lookup", "delete"]
    tool_message = response.messages[0]
    assert tool_message.role == "tool"
    assert [c.call_id for c in tool_message.contents] == ["c1", "c2", "c3"]  # results keep the calls' order
    assert [c.result for c in tool_message.contents] == ["deleted a", "value of k", "deleted b"]
    assert response.text == "Done."


async def test_answers_for_a_mixed_batch_can_arrive_in_one_message(tools: Tools, run: Run) -> None:
    client = ScriptedChatClient(
        [[call("delete", call_id="c1", path="a"), call("lookup", call_id="c2", key="k")], "Done."]
    )
    agent = Agent(client, tools=tools.all)
    session = agent.create_session()
    _, response = await run(agent, "Go", session=session)
    [request] = response.user_input_requests

    _, response = await run(
        agent, Message("user", [request.to_function_approval_response(False, reason="no")]), session=session
    )

    assert tools.ran == [("lookup", {"key": "k"})]  # the free call ran, the rejected one did not
    assert [c.call_id for c in response.messages[0].contents] == ["c1", "c2"]


async def test_a_call_id_reused_in_a_later_round_is_a_new_occurrence(tools: Tools, run: Run) -> None:
    client = ScriptedChatClient(
        [call("delete", call_id="c1", path="a"), call("delete", call_id="c1", path="b"), "Both deleted."]
    )
    agent = Agent(client, tools=tools.all)
    session = agent.create_session()
    _, response = await run(agent, "Delete a then b", session=session)
    first = response.user_input_requests[0]
    first_answer = first.to_function_approval_response(True)

    _, response = await run(agent, Message("user", [first_answer]), session=session)
    assert tools.ran == [("delete", {"path": "a"})]
    [second] = response.user_input_requests
    assert second.function_call is not None and second.function_call.call_id == "c1"
    assert second.id != first.id

    # Replaying the first round's answer does not approve the second occurrence of "c1".
    with pytest.raises(ApprovalError, match="no pending request"):
        await run(agent, Message("user", [first_answer]), session=session)
    assert tools.ran == [("delete", {"path": "a"})]

    _, response = await run(agent, Message("user", [second.to_function_approval_response(True)]), session=session)
    assert tools.ran == [("delete", {"path": "a"}), ("delete", {"path": "b"})]
    assert response.text == "Both deleted."


async def test_a_call_id_repeated_inside_one_reply_is_approved_per_occurrence(tools: Tools) -> None:
    # Non-streaming only: streamed fragments with one call id are, by design, pieces of one call.
    same_id = [call("delete", call_id="c1", path="a"), call("delete", call_id="c1", path="b")]
    agent = Agent(ScriptedChatClient([same_id, "ok"]), tools=tools.all)
    session = agent.create_session()
    response = await agent.run("Go", session=session)
    first, second = response.user_input_requests

    response = await agent.run(Message("user", [second.to_function_approval_response(True)]), session=session)
    assert tools.ran == []  # approving "b" must not approve "a", although both calls say c1
    assert [r.id for r in response.user_input_requests] == [first.id]

    await agent.run(Message("user", [first.to_function_approval_response(False)]), session=session)
    assert tools.ran == [("delete", {"path": "b"})]


def _forgeries(request: Content) -> dict[str, Content]:
    assert request.function_call is not None and request.id is not None
    fc = request.function_call
    return {
        "unknown id": Content.from_function_approval_response("nope:123", True, fc),
        "other arguments": Content.from_function_approval_response(
            request.id, True, Content.from_function_call(fc.call_id or "", "delete", '{"path": "/"}')
        ),
        "other tool": Content.from_function_approval_response(
            request.id, True, Content.from_function_call(fc.call_id or "", "lookup", fc.arguments)
        ),
        "other call id": Content.from_function_approval_response(
            request.id, True, Content.from_function_call("c9", "delete", fc.arguments)
        ),
        "no call": Content("function_approval_response", id=request.id, approved=True),
    }


@pytest.mark.parametrize("kind", ["unknown id", "other arguments", "other tool", "other call id", "no call"])
async def test_forged_answers_are_refused_and_execute_nothing(tools: Tools, run: Run, kind: str) -> None:
    client = ScriptedChatClient([call("delete", call_id="c1", path="a"), "Deleted."])
    agent = Agent(client, tools=tools.all)
    session = agent.create_session()
    _, response = await run(agent, "Delete a", session=session)
    request = response.user_input_requests[0]
    before = json.dumps(session.to_dict())

    with pytest.raises(ApprovalError, match="nothing was executed"):
        await run(agent, Message("user", [_forgeries(request)[kind]]), session=session)

    assert tools.ran == []
    assert json.dumps(session.to_dict()) == before  # the refused answer was not stored either
    # The real request can still be answered.
    _, response = await run(agent, Message("user", [request.to_function_approval_response(True)]), session=session)
    assert tools.ran == [("delete", {"path": "a"})]


async def test_an_answer_sent_twice_is_refused(tools: Tools, run: Run) -> None:
    client = ScriptedChatClient([call("delete", call_id="c1", path="a"), "Deleted."])
    agent = Agent(client, tools=tools.all)
    session = agent.create_session()
    _, response = await run(agent, "Delete a", session=session)
    answer = response.user_input_requests[0].to_function_approval_response(True)

    with pytest.raises(ApprovalError, match="answered twice"):
        await run(agent, Message("user", [answer, answer]), session=session)
    assert tools.ran == []

    await run(agent, Message("user", [answer]), session=session)
    assert tools.ran == [("delete", {"path": "a"})]
    with pytest.raises(ApprovalError, match="unknown or already answered"):  # after it ran
        await run(agent, Message("user", [answer]), session=session)
    assert tools.ran == [("delete", {"path": "a"})]


async def test_a_new_question_while_waiting_asks_again_and_runs_nothing(tools: Tools, run: Run) -> None:
    client = ScriptedChatClient([call("delete", call_id="c1", path="a"), "Deleted."])
    agent = Agent(client, tools=tools.all)
    session = agent.create_session()
    _, response = await run(agent, "Delete a", session=session)
    request = response.user_input_requests[0]

    _, response = await run(agent, "Are you sure?", session=session)

    assert tools.ran == []
    assert [r.id for r in response.user_input_requests] == [request.id]
    assert len(client.calls) == 1


async def test_without_a_session_resending_the_history_and_the_answer_works(tools: Tools, run: Run) -> None:
    client = ScriptedChatClient([call("delete", call_id="c1", path="a"), "Deleted."])
    agent = Agent(client, tools=tools.all)
    history: list[Message] = [Message("user", ["Delete a"])]

    _, response = await run(agent, history)
    history += response.messages
    answer = Message("user", [response.user_input_requests[0].to_function_approval_response(True)])
    # The conversation may go through JSON in between (a web client, a file).
    history = [Message.from_dict(json.loads(json.dumps(m.to_dict()))) for m in [*history, answer]]

    _, response = await run(agent, history)

    assert tools.ran == [("delete", {"path": "a"})]
    assert response.text == "Deleted."


async def test_without_a_session_a_forged_answer_is_still_refused(tools: Tools, run: Run) -> None:
    client = ScriptedChatClient([call("delete", call_id="c1", path="a"), "Deleted."])
    agent = Agent(client, tools=tools.all)
    history: list[Message] = [Message("user", ["Delete a"])]
    _, response = await run(agent, history)
    history += response.messages
    request = response.user_input_requests[0]

    # The messages hold the pending request: an answer must match it.
    with pytest.raises(ApprovalError):
        await run(agent, [*history, Message("user", [_forgeries(request)["other arguments"]])])
    with pytest.raises(ApprovalError, match="carries no function call"):  # alone, an answer must carry its call
        await run(agent, [history[0], Message("user", [_forgeries(request)["no call"]])])
    assert tools.ran == []


async def test_without_a_session_an_answer_alone_carries_its_call(tools: Tools, run: Run, stream: bool) -> None:
    # As in Agent Framework: the request need not be in the messages, the answer says which call it decides.
    client = ScriptedChatClient([call("delete", call_id="c1", path="a"), "Deleted.", "Kept."])
    agent = Agent(client, tools=tools.all)
    history: list[Message] = [Message("user", ["Delete a"])]
    _, response = await run(agent, history)
    request = response.user_input_requests[0]

    answer = Message("user", [request.to_function_approval_response(True)])
    updates, response = await run(agent, [history[0], answer])

    assert tools.ran == [("delete", {"path": "a"})]
    assert response.text == "Deleted."
    # The response holds the call and its result, so appending it keeps the caller's history complete.
    assert [m.role for m in response.messages] == ["assistant", "tool", "assistant"]
    seen = client.calls[-1]
    assert [c.type for m in seen for c in m.contents] == ["text", "function_call", "function_result"]
    if stream:
        kinds = [c.type for u in updates for c in u.contents]
        assert kinds.index("function_call") < kinds.index("function_result") < kinds.index("text")

    # A denial alone becomes a denial result; nothing runs.
    denial = Message("user", [request.to_function_approval_response(False, reason="no")])
    _, response = await run(agent, [history[0], denial])
    assert tools.ran == [("delete", {"path": "a"})]
    assert response.messages[1].contents[0].additional_properties["approval"] == "rejected"
    assert response.text == "Kept."


async def test_without_a_session_an_answer_for_a_call_that_already_ran_is_refused(tools: Tools, run: Run) -> None:
    client = ScriptedChatClient([call("delete", call_id="c1", path="a"), "Deleted."])
    agent = Agent(client, tools=tools.all)
    history: list[Message] = [Message("user", ["Delete a"])]
    _, response = await run(agent, history)
    history += response.messages
    answer = Message("user", [response.user_input_requests[0].to_function_approval_response(True)])
    _, response = await run(agent, [*history, answer])
    history += [answer, *response.messages]
    assert tools.ran == [("delete", {"path": "a"})]

    with pytest.raises(ApprovalError, match="already answered"):  # replayed after the run
        await run(agent, [*history, answer])
    # Resumed with the answer alone, then replayed: the call it carries already has a result.
    client.replies.append("Deleted.")
    _, response = await run(agent, [history[0], answer])
    with pytest.raises(ApprovalError, match="already has a result"):
        await run(agent, [history[0], answer, *response.messages, answer])
    assert tools.ran == [("delete", {"path": "a"})] * 2


async def test_without_a_session_a_mixed_batch_asks_about_every_call(tools: Tools, run: Run, stream: bool) -> None:
    # Agent Framework's rule: one approval-required call pauses the batch; without a session every call of it
    # gets a request, so answers sent alone still carry every call and no call is lost.
    batch = [call("delete", call_id="c1", path="a"), call("lookup", call_id="c2", key="k")]
    client = ScriptedChatClient([batch, "Done."])
    agent = Agent(client, tools=tools.all)
    question = Message("user", ["Go"])

    updates, response = await run(agent, question)
    requests = response.user_input_requests
    assert [r.function_call.name for r in requests if r.function_call] == ["delete", "lookup"]
    assert tools.ran == []
    if stream:
        assert [r.id for u in updates for r in u.user_input_requests] == [r.id for r in requests]

    answers = Message("user", [r.to_function_approval_response(True) for r in requests])
    _, response = await run(agent, [question, answers])

    assert [name for name, _ in tools.ran] == ["delete", "lookup"]
    seen = client.calls[-1]
    results = [c for m in seen for c in m.contents if c.type == "function_result"]
    assert [(c.call_id, c.result) for c in results] == [("c1", "deleted a"), ("c2", "value of k")]
    assert response.text == "Done."


async def test_with_a_session_a_mixed_batch_asks_only_about_calls_that_need_approval(tools: Tools, run: Run) -> None:
    batch = [call("delete", call_id="c1", path="a"), call("lookup", call_id="c2", key="k"), call("nope", call_id="c3")]
    client = ScriptedChatClient([batch, "Done."])
    agent = Agent(client, tools=tools.all)
    session = agent.create_session()
    _, response = await run(agent, "Go", session=session)
    # The unknown tool is asked about as well (the person decides what an unknown call means).
    assert [r.function_call.call_id for r in response.user_input_requests if r.function_call] == ["c1", "c3"]

    answers = [r.to_function_approval_response(True) for r in response.user_input_requests]
    _, response = await run(agent, Message("user", answers), session=session)

    assert [name for name, _ in tools.ran] == ["delete", "lookup"]
    results = [c for m in client.calls[-1] for c in m.contents if c.type == "function_result"]
    assert [c.call_id for c in results] == ["c1", "c2", "c3"]  # every call's result reaches the model
    assert 'Requested function "nope" not found' in (results[2].exception or "")


async def test_chat_client_level_approval_without_an_agent(tools: Tools) -> None:
    client = ScriptedChatClient([call("delete", call_id="c1", path="a"), "Deleted."])
    history = [Message("user", ["Delete a"])]
    response = await client.get_response(history, tools=tools.all)
    history += response.messages
    history.append(Message("user", [response.user_input_requests[0].to_function_approval_response(True)]))

    response = await client.get_response(history, tools=tools.all)

    assert tools.ran == [("delete", {"path": "a"})]
    assert response.text == "Deleted."


async def test_max_iterations_holds_across_approval_rounds(tools: Tools, run: Run) -> None:
    # The model would delete forever; two tool-calling model calls are allowed per user turn.
    client = ScriptedChatClient(
        [*(call("delete", path=f"f{i}") for i in range(3)), "I stop here."],
        max_iterations=2,
    )
    agent = Agent(client, tools=tools.all)
    session = agent.create_session()
    _, response = await run(agent, "Delete everything", session=session)
    rounds = 0
    while response.user_input_requests:
        rounds += 1
        answers = [r.to_function_approval_response(True) for r in response.user_input_requests]
        _, response = await run(agent, Message("user", answers), session=session)

    assert rounds == 2
    assert [args["path"] for _, args in tools.ran] == ["f0", "f1"]
    # The third call could not call tools (tool_choice "none"); the call it made anyway was dropped, not left pending.
    assert client.call_options[2]["tool_choice"] == "none"
    assert not any(c.type == "function_call" for m in response.messages for c in m.contents)
    assert response.user_input_requests == []

    # The dropped call does not come back on the next turn.
    _, response = await run(agent, "Thanks", session=session)
    assert response.text == "I stop here."
    assert [args["path"] for _, args in tools.ran] == ["f0", "f1"]


async def test_max_invocations_holds_across_approval_rounds(run: Run) -> None:
    ran: list[str] = []

    @tool(approval_mode="always_require", max_invocations=1)
    def launch(target: str) -> str:
        """Launch."""
        ran.append(target)
        return f"launched at {target}"

    client = ScriptedChatClient([call("launch", target="moon"), call("launch", target="mars"), "Only the moon."])
    agent = Agent(client, tools=[launch])
    session = agent.create_session()
    _, response = await run(agent, "Launch", session=session)
    _, response = await run(
        agent, Message("user", [response.user_input_requests[0].to_function_approval_response(True)]), session=session
    )
    assert ran == ["moon"]
    _, response = await run(
        agent, Message("user", [response.user_input_requests[0].to_function_approval_response(True)]), session=session
    )

    assert ran == ["moon"]  # approved, but over the tool's limit: the body did not run
    result = response.messages[0].contents[0]
    assert result.exception is not None and "limit of 1" in result.exception
    assert response.text == "Only the moon."


async def test_the_pending_request_survives_json_in_the_same_process(tools: Tools, run: Run) -> None:
    client = ScriptedChatClient([call("delete", call_id="c1", path="a"), "Deleted."])
    agent = Agent(client, tools=tools.all)
    session = agent.create_session()
    _, response = await run(agent, "Delete a", session=session)
    request_dict = response.user_input_requests[0].to_dict()

    restored = AgentSession.from_dict(json.loads(json.dumps(session.to_dict())))
    request = Content.from_dict(json.loads(json.dumps(request_dict)))
    _, response = await run(agent, Message("user", [request.to_function_approval_response(True)]), session=restored)

    assert tools.ran == [("delete", {"path": "a"})]
    assert response.text == "Deleted."


async def test_without_a_session_requests_resent_with_their_answers_decide_the_calls(tools: Tools, run: Run) -> None:
    # Agent Framework's approval sample resends the query, then each request in an assistant message followed
    # by its answer in a user message: each answer decides its request's call.
    batch = [call("delete", call_id="c1", path="a"), call("lookup", call_id="c2", key="k")]
    client = ScriptedChatClient([batch, "Done.", batch])
    agent = Agent(client, tools=tools.all)
    query = Message("user", ["Go"])
    _, response = await run(agent, query)
    first, second = response.user_input_requests

    def resent(*answers: tuple[Content, Content]) -> list[Message]:
        out = [query]
        for request, answer in answers:
            out += [Message("assistant", [request]), Message("user", [answer])]
        return out

    approve, deny = first.to_function_approval_response(True), second.to_function_approval_response(False)
    _, done = await run(agent, resent((first, approve), (second, deny)))
    assert tools.ran == [("delete", {"path": "a"})] and done.text == "Done."
    results = [c for m in done.messages for c in m.contents if c.type == "function_result"]
    assert [r.call_id for r in results] == ["c1", "c2"]
    assert results[1].additional_properties["approval"] == "rejected"

    # An answer whose call differs from the request it answers (other arguments) runs nothing.
    other_call = Content.from_function_call("c1", "delete", json.dumps({"path": "/"}))
    forged = Content.from_function_approval_response(first.id or "", True, other_call)
    with pytest.raises(ApprovalError, match="does not match the requested call"):
        await run(agent, resent((first, forged)))
    # Resent again after the calls ran (their results are in the history): refused.
    with pytest.raises(ApprovalError, match="already answered"):
        await run(agent, [*resent((first, approve)), *done.messages[1:], Message("user", [approve])])
    assert tools.ran == [("delete", {"path": "a"})]
