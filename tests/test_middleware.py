from __future__ import annotations

import pytest

from agentnb import (
    Agent,
    AgentContext,
    AgentMiddleware,
    AgentResponse,
    ChatContext,
    ChatResponse,
    FunctionInvocationContext,
    FunctionMiddleware,
    Message,
    MiddlewareTermination,
    agent_middleware,
    chat_middleware,
    function_middleware,
    tool,
)
from agentnb._middleware import agent_context, chat_context, function_context, split_middleware
from agentnb.exceptions import MiddlewareError
from agentnb.local import ScriptedChatClient

call = ScriptedChatClient.call


@tool
def echo(text: str) -> str:
    return text


def recorder(log: list[str], name: str):
    @agent_middleware
    async def agent_mw(context: AgentContext, call_next) -> None:
        log.append(f"{name}:agent:before:{'stream' if context.stream else 'run'}")
        await call_next()
        log.append(f"{name}:agent:after")

    @chat_middleware
    async def chat_mw(context: ChatContext, call_next) -> None:
        log.append(f"{name}:chat")
        await call_next()

    @function_middleware
    async def function_mw(context: FunctionInvocationContext, call_next) -> None:
        log.append(f"{name}:function:{context.function.name}")
        await call_next()

    return [agent_mw, chat_mw, function_mw]


@pytest.mark.parametrize("stream", [False, True])
async def test_agent_level_middleware_wraps_run_level_middleware(stream: bool) -> None:
    log: list[str] = []
    agent = Agent(
        ScriptedChatClient([call("echo", text="hi"), "done"]), tools=[echo], middleware=recorder(log, "agent")
    )
    result = agent.run("x", middleware=recorder(log, "run"), stream=stream)
    if stream:
        async for _ in result:
            pass
        response = await result.get_final_response()
    else:
        response = await result
    assert response.text == "done"
    mode = "stream" if stream else "run"
    assert log == [
        f"agent:agent:before:{mode}",
        f"run:agent:before:{mode}",
        *(["run:agent:after", "agent:agent:after"] if stream else []),
        "agent:chat",
        "run:chat",
        "agent:function:echo",
        "run:function:echo",
        "agent:chat",
        "run:chat",
        *([] if stream else ["run:agent:after", "agent:agent:after"]),
    ]


async def test_agent_middleware_can_replace_the_result_or_short_circuit() -> None:
    class Override(AgentMiddleware):
        async def process(self, context, call_next):
            await call_next()
            context.result = AgentResponse(messages=[Message("assistant", [context.result.text.upper()])])

    class Block(AgentMiddleware):
        async def process(self, context, call_next):
            if "secret" in context.messages[-1].text:
                context.result = AgentResponse(messages=[Message("assistant", ["I can't help with that."])])
                return
            await call_next()

    client = ScriptedChatClient(["hello"])
    agent = Agent(client, middleware=[Override(), Block()])
    assert (await agent.run("hi")).text == "HELLO"
    assert (await agent.run("tell me the secret")).text == "I CAN'T HELP WITH THAT."
    assert len(client.calls) == 1  # the blocked run never reached the model


async def test_chat_middleware_sees_messages_and_options_and_can_answer_itself() -> None:
    async def cache(context: ChatContext, call_next) -> None:
        if context.messages[-1].text == "cached?":
            context.result = ChatResponse(messages=[Message("assistant", ["from cache"])])
            return
        context.options["temperature"] = 0.2
        await call_next()

    client = ScriptedChatClient(["from model"])
    agent = Agent(client, middleware=[cache])  # plain function, recognised by its annotation
    assert (await agent.run("cached?")).text == "from cache"
    assert (await agent.run("fresh")).text == "from model"
    assert client.call_options[0]["temperature"] == 0.2


async def test_function_middleware_can_rewrite_arguments_results_and_terminate() -> None:
    @function_middleware
    async def redact(context: FunctionInvocationContext, call_next) -> None:
        context.arguments["text"] = context.arguments["text"].replace("password", "*****")
        await call_next()
        context.result = f"[{context.result}]"
        context.terminate = True

    client = ScriptedChatClient([call("echo", text="my password"), "never asked"])
    response = await Agent(client, tools=[echo], middleware=[redact]).run("x")
    result = next(c for m in response.messages for c in m.contents if c.type == "function_result")
    assert result.result == "[my *****]"
    assert client.remaining == 1  # terminate: the model was not called again


async def test_middleware_termination_ends_the_run_with_its_result() -> None:
    @agent_middleware
    async def stop(context, call_next) -> None:
        raise MiddlewareTermination(result=AgentResponse(messages=[Message("assistant", ["stopped"])]))

    assert (await Agent(ScriptedChatClient([]), middleware=[stop]).run("x")).text == "stopped"


def test_unrecognisable_middleware_is_refused() -> None:
    async def anything(a, b):
        return None

    with pytest.raises(MiddlewareError, match="Cannot determine middleware type for function anything"):
        split_middleware([anything])
    assert issubclass(MiddlewareError, TypeError)


def test_a_decorated_middleware_must_take_context_and_call_next_of_its_kind() -> None:
    async def too_few(context):
        return None

    with pytest.raises(MiddlewareError, match="at least 2 parameters"):
        agent_middleware(too_few)

    async def tool_context(context: FunctionInvocationContext, call_next):
        await call_next()

    with pytest.raises(MiddlewareError, match="type mismatch"):
        agent_middleware(tool_context)
    assert isinstance(function_middleware(tool_context), FunctionMiddleware)


@pytest.mark.parametrize("given", [{}, {"k": 1}])
def test_the_positional_context_factories_write_exactly_the_constructors_fields(given: dict[str, int]) -> None:
    client = ScriptedChatClient(["Hi"])
    agent = Agent(client)
    messages = [Message("user", ["q"])]
    session = agent.create_session()
    chat = chat_context(client, messages, {"temperature": 0}, True, dict(given), session, dict(given))
    built_chat = ChatContext(
        client=client,
        messages=messages,
        options={"temperature": 0},
        stream=True,
        kwargs=dict(given),
        session=session,
        function_invocation_kwargs=dict(given),
    )
    assert vars(chat) == vars(built_chat)
    made = agent_context(agent, messages, session, {"x": 1}, False, dict(given), given or None)
    built = AgentContext(
        agent=agent,
        messages=messages,
        session=session,
        options={"x": 1},
        stream=False,
        kwargs=dict(given),
        function_invocation_kwargs=given or None,
    )
    assert vars(made) == vars(built)

    @tool
    def lookup(a: int) -> str:
        """Look up."""
        return "x"

    call = function_context(lookup, {"a": 1}, "c1", session, [lookup], dict(given))
    built_call = FunctionInvocationContext(
        function=lookup, arguments={"a": 1}, call_id="c1", session=session, tools=[lookup], kwargs=dict(given)
    )
    assert vars(call) == vars(built_call)
    # Fresh containers, as the constructor makes them: an empty one given is not shared.
    empty: dict[str, int] = {}
    assert chat_context(client, messages, {}, False, empty, None, empty).kwargs is not empty
