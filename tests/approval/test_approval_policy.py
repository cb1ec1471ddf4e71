"""ApprovalPolicy: one answer to "may this call run without asking?", bounded by the tool's source."""

from __future__ import annotations

from typing import Any

import pytest

from agentnb import (
    Agent,
    AgentSession,
    ApprovalPolicy,
    Content,
    FunctionTool,
    ToolApprovalMiddleware,
    ToolApprovalRule,
)
from agentnb._approval import AUTO_APPROVED_KEY
from agentnb._approval_policy import AUTO_APPROVE_ENV
from agentnb.local import ScriptedChatClient


def _request(name: str, server: str | None = None, *, record: bool = True, **arguments: Any) -> Content:
    call = Content.from_function_call(f"call-{name}", name, arguments=arguments)
    request = Content.from_function_approval_request(f"req-{name}-{server}", call)
    if record:
        request.additional_properties["server_label"] = server
    return request


@pytest.mark.parametrize(
    ("text", "fallback"),
    [("all", "approve"), ("TRUE", "approve"), ("none", "deny"), ("deny", "deny"), ("ask", "ask"), ("pending", "ask")],
)
def test_parse_reads_the_words(text: str, fallback: str) -> None:
    assert ApprovalPolicy.parse(text) == ApprovalPolicy(fallback=fallback)  # type: ignore[arg-type]


def test_parse_reads_tool_names_bounded_by_source() -> None:
    policy = ApprovalPolicy.parse(" lookup , docs:search ")
    assert policy.rules == (ToolApprovalRule("lookup"), ToolApprovalRule("search", server_label="docs"))
    for bad in ("", "a,,b", "docs:", ":x"):
        with pytest.raises(ValueError, match=r"approval policy|server:name"):
            ApprovalPolicy.parse(bad)


def test_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(AUTO_APPROVE_ENV, raising=False)
    assert ApprovalPolicy.from_env() is None
    monkeypatch.setenv(AUTO_APPROVE_ENV, "delete_file")
    assert ApprovalPolicy.from_env() == ApprovalPolicy(rules=[ToolApprovalRule("delete_file")])


def test_coerce_takes_what_the_front_ends_accept() -> None:
    def judge(request: Content) -> bool | None:
        return None

    assert ApprovalPolicy.coerce(True).fallback == "approve"
    assert ApprovalPolicy.coerce(False).fallback == "deny"
    assert ApprovalPolicy.coerce("pending").fallback == "ask"
    assert ApprovalPolicy.coerce(None) == ApprovalPolicy()
    assert ApprovalPolicy.coerce(judge).fallback is judge
    assert ApprovalPolicy.coerce(["a", "srv:b"]).rules == (ToolApprovalRule("a"), ToolApprovalRule("b", "srv"))
    policy = ApprovalPolicy(fallback="deny")
    assert ApprovalPolicy.coerce(policy) is policy
    with pytest.raises(TypeError, match="not a string"):
        ApprovalPolicy.coerce("delete_file")
    with pytest.raises(TypeError, match="names or ToolApprovalRule"):
        ApprovalPolicy.coerce([1])
    with pytest.raises(ValueError, match="fallback"):
        ApprovalPolicy(fallback="maybe")  # type: ignore[arg-type]


async def test_a_named_tool_is_approved_only_from_its_own_source() -> None:
    policy = ApprovalPolicy.parse("search")
    assert (await policy.decide(_request("search"))).approved is True
    assert (await policy.decide(_request("search", "docs"))).asks  # an MCP server's search is another tool
    scoped = ApprovalPolicy.parse("docs:search")
    assert (await scoped.decide(_request("search", "docs"))).approved is True
    assert (await scoped.decide(_request("search", "mail"))).asks
    assert (await scoped.decide(_request("search"))).asks


async def test_the_sessions_standing_rules_come_first_and_stay_bounded() -> None:
    session = AgentSession()
    policy = ApprovalPolicy(fallback="deny")
    rule = policy.remember(session, _request("search", "docs"))
    assert rule == ToolApprovalRule("search", server_label="docs")
    approved = await policy.decide(_request("search", "docs"), session=session)
    assert approved.approved is True
    assert approved.by is not None and "standing rule" in approved.by
    answer = approved.response(_request("search", "docs"))
    assert answer.approved is True and answer.additional_properties[AUTO_APPROVED_KEY] == approved.by
    denied = await policy.decide(_request("search", "mail"), session=session)
    assert (denied.approved, denied.reason) == (False, "denied by policy")
    # The rule lives in the session state and travels with it.
    restored = AgentSession.from_dict(session.to_dict())
    assert (await ApprovalPolicy().decide(_request("search", "docs"), session=restored)).approved is True


async def test_remember_with_arguments_matches_only_those_arguments() -> None:
    session = AgentSession()
    policy = ApprovalPolicy()
    policy.remember(session, _request("delete", path="a"), scope="arguments")
    assert (await policy.decide(_request("delete", path="a"), session=session)).approved is True
    assert (await policy.decide(_request("delete", path="b"), session=session)).asks


async def test_the_source_is_looked_up_on_the_agent_when_the_request_lacks_it() -> None:
    docs_search = FunctionTool(
        lambda query: query,
        name="search",
        approval_mode="always_require",
        additional_properties={"server_label": "docs"},
    )
    agent = Agent(ScriptedChatClient([]), tools=[docs_search])
    policy = ApprovalPolicy.parse("search")
    assert (await policy.decide(_request("search", record=False), agent=agent)).asks
    assert (await ApprovalPolicy.parse("docs:search").decide(_request("search", record=False), agent=agent)).approved


async def test_callbacks_approve_and_the_fallback_decides_the_rest() -> None:
    seen: list[Any] = []

    async def docs_only(call: Content) -> bool:
        seen.append(call.additional_properties.get("server_label"))
        return call.additional_properties.get("server_label") == "docs"

    def judge(request: Content) -> bool | None:
        return False if request.function_call and request.function_call.name == "drop" else None

    policy = ApprovalPolicy(auto_approval_rules=[docs_only], fallback=judge)
    assert (await policy.decide(_request("search", "docs"))).approved is True
    assert (await policy.decide(_request("drop"))).approved is False
    assert (await policy.decide(_request("search"))).asks
    assert seen == ["docs", None, None]
    with pytest.raises(ValueError, match="leaves the request"):
        (await policy.decide(_request("search"))).response(_request("search"))

    def sloppy(request: Content) -> Any:
        return "yes"

    with pytest.raises(TypeError, match="True, False or None"):
        await ApprovalPolicy(fallback=sloppy).decide(_request("x"))


async def test_the_middleware_applies_a_whole_policy() -> None:
    ran: list[str] = []

    def delete(path: str) -> str:
        ran.append(path)
        return f"deleted {path}"

    tool = FunctionTool(delete, name="delete", approval_mode="always_require")
    client = ScriptedChatClient([ScriptedChatClient.call("delete", path="a"), "done"])
    policy = ApprovalPolicy(fallback="deny")
    agent = Agent(client, tools=[tool], middleware=[ToolApprovalMiddleware(policy=policy)])
    response = await agent.run("Delete a", session=AgentSession())
    assert response.user_input_requests == []
    assert ran == []  # denied by the policy, never run
    answers = [c for m in response.messages if m.role == "user" for c in m.contents]
    assert [(c.type, c.approved) for c in answers] == [("function_approval_response", False)]
    with pytest.raises(ValueError, match="not both"):
        ToolApprovalMiddleware(policy=policy, auto_approval_rules=[lambda c: True])
