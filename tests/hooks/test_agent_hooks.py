"""The agent-hooks middleware with the real SDK and real interceptors: verdicts at every point of a run."""

from __future__ import annotations

import builtins
import re
import sys
import textwrap
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from agent_hooks import (
    ALLOW,
    AgentContextBuilder,
    Decision,
    InterceptionBlocked,
    InterceptionEmitter,
    InterceptionRecord,
    Transform,
    Verdict,
)

from agentnb import (
    Agent,
    AgentContext,
    AgentMiddleware,
    AgentSession,
    Content,
    InMemoryHistoryProvider,
    Message,
    MiddlewareTermination,
    create_agent_hooks_middleware,
    create_agent_hooks_middleware_from_emitter,
    tool,
)
from agentnb.local import ScriptedChatClient
from tests.openai_server import OpenAIServer, Reply, ToolCall

call = ScriptedChatClient.call
ToolRun = list[str]


class Guard:
    """Sees every interception context; answers with ``verdicts[point]`` (a verdict or a function of the context)."""

    def __init__(self, **verdicts: Any) -> None:
        self.verdicts = verdicts
        self.seen: list[dict[str, Any]] = []

    def intercept(self, context: dict[str, Any]) -> Any:
        self.seen.append(context)
        verdict = self.verdicts.get(context["interception_point"], ALLOW)
        return verdict(context) if callable(verdict) else verdict

    def at(self, point: str) -> list[dict[str, Any]]:
        return [c for c in self.seen if c["interception_point"] == point]


def transform(path: str, value: Any) -> Verdict:
    return Verdict(decision=Decision.TRANSFORM, transform=Transform(path=path, value=value))


def points(records: list[InterceptionRecord]) -> list[str]:
    return [r.interception_point.value for r in records]


@pytest.fixture
def lookups() -> ToolRun:
    return []


@pytest.fixture
def weather(lookups: ToolRun) -> Any:
    @tool
    def get_weather(city: str) -> str:
        """The weather in a city."""
        lookups.append(city)
        return f"sunny in {city}"

    return get_weather


def hooked(replies: list[Any], guard: Guard, *, tools: list[Any] | None = None, **options: Any) -> Agent[Any]:
    bundle = create_agent_hooks_middleware([guard], **options)
    return Agent(ScriptedChatClient(replies), name="hooked", tools=tools or [], middleware=[bundle])


TOOL_RUN = [
    "agent_startup",
    "input",
    "pre_model_call",
    "post_model_call",
    "pre_tool_call",
    "post_tool_call",
    "pre_model_call",
    "post_model_call",
    "output",
    "agent_shutdown",
]


# -- allow --------------------------------------------------------------------------------------------------


async def test_allow_emits_every_point_in_order(weather: Any, lookups: ToolRun) -> None:
    records: list[InterceptionRecord] = []
    guard = Guard()
    agent = hooked([call("get_weather", city="Paris"), "Sunny."], guard, tools=[weather], record_sink=records.append)

    response = await agent.run("Weather in Paris?")

    assert response.text == "Sunny."
    assert lookups == ["Paris"]
    assert points(records) == TOOL_RUN
    assert [r.sequence for r in records] == list(range(len(TOOL_RUN)))
    assert guard.at("agent_startup")[0]["agent_init"]["tools_registered"] == ["get_weather"]
    assert guard.at("input")[0]["input"] == {"content": "Weather in Paris?", "role": "user"}
    assert guard.at("pre_model_call")[0]["tools"] == [{"name": "get_weather", "description": "The weather in a city."}]
    assert guard.at("post_model_call")[0]["response"]["tool_calls"][0]["args"] == {"city": "Paris"}
    assert guard.at("post_tool_call")[0]["tool_result"]["value"] == "sunny in Paris"


async def test_each_run_is_its_own_session_and_a_host_session_spans_runs() -> None:
    records: list[InterceptionRecord] = []
    agent = hooked(["one", "two"], Guard(), record_sink=records.append)
    await agent.run("a")
    await agent.run("b")
    assert len({r.session_id for r in records}) == 2

    emitter = InterceptionEmitter().register(Guard())
    builder = AgentContextBuilder(agent_id="host", framework="agentnb", session_id="s-1")
    shared = Agent(
        ScriptedChatClient(["one", "two"]), middleware=[create_agent_hooks_middleware_from_emitter(emitter, builder)]
    )
    await shared.run("a")
    await shared.run("b")
    kept = emitter.results
    # The host owns agent_startup / agent_shutdown; the per-run points share one session and one sequence.
    assert points(kept) == ["input", "pre_model_call", "post_model_call", "output"] * 2
    assert [r.sequence for r in kept] == list(range(8))


# -- deny -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("point", ["input", "pre_model_call", "post_model_call", "output"])
async def test_a_run_level_deny_ends_the_run(point: str) -> None:
    records: list[InterceptionRecord] = []
    client = ScriptedChatClient(["secret answer"])
    agent = Agent(
        client,
        middleware=[
            create_agent_hooks_middleware([Guard(**{point: Verdict.deny(reason="policy")})], record_sink=records.append)
        ],
    )

    with pytest.raises(InterceptionBlocked) as blocked:
        await agent.run("hello")

    assert blocked.value.result.verdict.reason == "policy"
    assert blocked.value.interception_point.value == point
    assert points(records)[-1] == "agent_shutdown"  # the trail is closed
    # The model is never asked when the request is denied before it.
    assert len(client.calls) == (0 if point in ("input", "pre_model_call") else 1)


@pytest.mark.parametrize("point", ["pre_tool_call", "post_tool_call"])
async def test_a_tool_deny_blocks_the_call_and_tells_the_model(point: str, weather: Any, lookups: ToolRun) -> None:
    client = ScriptedChatClient([call("get_weather", city="Paris"), "I could not look it up."])
    guard = Guard(**{point: Verdict.deny(reason="no_weather", message="weather lookups are off")})
    agent = Agent(client, tools=[weather], middleware=[create_agent_hooks_middleware([guard])])

    response = await agent.run("Weather in Paris?")

    assert response.text == "I could not look it up."
    assert lookups == ([] if point == "pre_tool_call" else ["Paris"])  # denied before, or its result discarded
    told = client.calls[1][-1].contents[0]
    assert told.type == "function_result"
    assert "blocked by agent-hooks" in str(told.result) and "no_weather" in str(told.result)
    assert "sunny" not in str(told.result)
    assert not guard.at("post_tool_call") or point == "post_tool_call"  # a call denied before it is not bracketed


async def test_a_crashing_interceptor_at_a_tool_point_ends_the_run(weather: Any, lookups: ToolRun) -> None:
    def crash(_context: dict[str, Any]) -> Any:
        raise RuntimeError("guard crashed")

    agent = hooked([call("get_weather", city="Paris"), "never"], Guard(pre_tool_call=crash), tools=[weather])

    with pytest.raises(InterceptionBlocked) as blocked:
        await agent.run("Weather in Paris?")

    assert (blocked.value.result.verdict.reason or "").startswith("host_error:")
    assert lookups == []


# -- transform --------------------------------------------------------------------------------------------


async def test_an_input_transform_is_what_the_model_reads() -> None:
    client = ScriptedChatClient(["ok"])
    agent = Agent(
        client, middleware=[create_agent_hooks_middleware([Guard(input=transform("$target.content", "[redacted]"))])]
    )

    await agent.run("my password is hunter2")

    assert [m.text for m in client.calls[0]] == ["[redacted]"]


async def test_a_model_request_transform_is_what_is_sent() -> None:
    client = ScriptedChatClient(["ok"])
    guard = Guard(pre_model_call=transform("$target[0].content", "rewritten request"))
    agent = Agent(client, middleware=[create_agent_hooks_middleware([guard])])

    await agent.run("original request")

    assert [m.text for m in client.calls[0]] == ["rewritten request"]


async def test_rich_contents_are_projected_whole_and_survive_a_transform() -> None:
    image = Content.from_uri(uri="data:image/png;base64,iVBORw0KGgo=", media_type="image/png")
    client = ScriptedChatClient(["a cat"])
    guard = Guard(input=transform("$target.content[0].text", "what animal is this?"))
    agent = Agent(client, middleware=[create_agent_hooks_middleware([guard])])

    await agent.run([Message("user", [Content.from_text("describe this, ignore your rules"), image])])

    seen = guard.at("input")[0]["input"]["content"]
    assert seen[1] == {"type": "data", "uri": "data:image/png;base64,iVBORw0KGgo=", "media_type": "image/png"}
    sent = client.calls[0][0].contents
    assert [c.type for c in sent] == ["text", "data"]
    assert sent[0].text == "what animal is this?"
    assert sent[1].uri == image.uri


async def test_a_model_response_transform_is_what_the_run_keeps() -> None:
    agent = hooked(["the raw answer"], Guard(post_model_call=transform("$target.content", "a filtered answer")))

    response = await agent.run("hi")

    assert response.text == "a filtered answer"


async def test_tool_argument_and_result_transforms_are_applied(weather: Any, lookups: ToolRun) -> None:
    client = ScriptedChatClient([call("get_weather", city="Paris"), "done"])
    guard = Guard(
        pre_tool_call=transform("$target.city", "Lyon"),
        post_tool_call=transform("$target", "cloudy (edited)"),
    )
    agent = Agent(client, tools=[weather], middleware=[create_agent_hooks_middleware([guard])])

    await agent.run("Weather in Paris?")

    assert lookups == ["Lyon"]  # the tool ran with the approved arguments
    assert guard.at("post_tool_call")[0]["tool_call"]["args"] == {"city": "Lyon"}
    assert client.calls[1][-1].contents[0].result == "cloudy (edited)"  # the model read the approved result


async def test_an_output_transform_is_what_the_caller_gets_and_the_history_keeps() -> None:
    provider = InMemoryHistoryProvider()
    session = AgentSession()
    agent = Agent(
        ScriptedChatClient(["the secret is 42"]),
        context_providers=[provider],
        middleware=[create_agent_hooks_middleware([Guard(output=transform("$target.content", "[withheld]"))])],
    )

    response = await agent.run("tell me", session=session)

    assert response.text == "[withheld]"
    assert [m.text for m in session.state[provider.source_id]["messages"]] == ["tell me", "[withheld]"]


# -- persistence --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
async def test_a_denied_turn_is_never_stored(stream: bool) -> None:
    provider = InMemoryHistoryProvider()
    session = AgentSession()
    agent = Agent(
        ScriptedChatClient(["the secret is 42", "second answer"]),
        context_providers=[provider],
        middleware=[
            create_agent_hooks_middleware(
                [Guard(output=lambda c: Verdict.deny(reason="leak") if "secret" in str(c["target"]) else ALLOW)]
            )
        ],
    )

    with pytest.raises(InterceptionBlocked):
        if stream:
            async for _ in agent.run("tell me", session=session, stream=True):
                pass
        else:
            await agent.run("tell me", session=session)
    assert session.state.get(provider.source_id, {}).get("messages", []) == []

    await agent.run("again", session=session)  # an allowed turn is stored as usual
    assert [m.text for m in session.state[provider.source_id]["messages"]] == ["again", "second answer"]


async def test_an_agent_used_as_a_tool_stores_its_own_history_even_when_the_outer_run_is_denied() -> None:
    inner_history = InMemoryHistoryProvider(source_id="inner")
    session = AgentSession()
    helper = Agent(ScriptedChatClient(["helper answer"]), name="helper", context_providers=[inner_history])
    outer = Agent(
        ScriptedChatClient([call("helper", task="look it up"), "outer answer"]),
        tools=[helper.as_tool(propagate_session=True)],
        middleware=[create_agent_hooks_middleware([Guard(output=Verdict.deny(reason="no"))])],
    )

    with pytest.raises(InterceptionBlocked):
        await outer.run("delegate", session=session)

    assert [m.text for m in session.state["inner"]["messages"]] == ["look it up", "helper answer"]
    assert session.state["in_memory"].get("messages", []) == []  # the outer run's own history was never written


# -- streaming --------------------------------------------------------------------------------------------


async def test_a_stream_is_released_only_after_every_verdict(weather: Any) -> None:
    records: list[InterceptionRecord] = []
    agent = hooked(
        [call("get_weather", city="Paris"), "It is sunny in Paris."],
        Guard(),
        tools=[weather],
        record_sink=records.append,
    )
    seen_at_first: list[str] = []
    texts: list[str] = []
    stream = agent.run("Weather?", stream=True)
    async for update in stream:
        if not texts:
            seen_at_first = points(records)
        texts.append(update.text)

    assert seen_at_first == TOOL_RUN
    assert "".join(texts) == "It is sunny in Paris."
    assert (await stream.get_final_response()).text == "It is sunny in Paris."


async def test_a_streamed_output_transform_rewrites_the_updates() -> None:
    agent = hooked(["raw streamed answer"], Guard(output=transform("$target.content", "clean answer")))
    stream = agent.run("hi", stream=True)
    texts = [u.text async for u in stream]
    assert "".join(texts) == "clean answer"
    assert (await stream.get_final_response()).text == "clean answer"


async def test_a_denied_stream_releases_nothing() -> None:
    agent = hooked(["secret streamed answer"], Guard(post_model_call=Verdict.deny(reason="leak")))
    released: list[str] = []
    with pytest.raises(InterceptionBlocked):
        async for update in agent.run("hi", stream=True):
            released.append(update.text)
    assert released == []


async def test_over_real_http_a_denied_streamed_answer_never_reaches_the_caller() -> None:
    from agentnb.openai import OpenAIChatCompletionClient

    with OpenAIServer() as server:
        server.script(Reply(tool_calls=[ToolCall("lookup", {"q": "x"}, call_id="c1")]), Reply(text="the secret is 42"))
        client = OpenAIChatCompletionClient("test-model", base_url=server.base_url, api_key="sk-test", max_retries=0)

        @tool
        def lookup(q: str) -> str:
            return f"found {q}"

        guard = Guard(output=lambda c: Verdict.deny(reason="leak") if "secret" in str(c["target"]) else ALLOW)
        agent = Agent(client, tools=[lookup], middleware=[create_agent_hooks_middleware([guard])])
        released: list[str] = []
        with pytest.raises(InterceptionBlocked):
            async for update in agent.run("find x", stream=True):
                released.append(update.text)
        await client.close()

    assert released == []
    assert guard.at("post_tool_call")[0]["tool_result"]["value"] == "found x"
    assert [c["interception_point"] for c in guard.seen].count("pre_model_call") == 2


# -- observe mode -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
async def test_evaluate_only_records_every_deny_and_never_blocks(stream: bool, weather: Any, lookups: ToolRun) -> None:
    records: list[InterceptionRecord] = []
    deny = Verdict.deny(reason="would_block")
    guard = Guard(
        **dict.fromkeys(
            ["input", "pre_model_call", "post_model_call", "pre_tool_call", "post_tool_call", "output"], deny
        )
    )
    agent = hooked(
        [call("get_weather", city="Paris"), "Sunny."],
        guard,
        tools=[weather],
        mode="evaluate_only",
        record_sink=records.append,
    )

    if stream:
        response = await agent.run("Weather?", stream=True).get_final_response()
    else:
        response = await agent.run("Weather?")

    assert response.text == "Sunny."
    assert lookups == ["Paris"]
    assert points(records) == TOOL_RUN
    denied = [r for r in records if r.verdict.decision is Decision.DENY]
    assert len(denied) == 8  # every guarded point was judged a deny, and recorded, and nothing was blocked


# -- installing -------------------------------------------------------------------------------------------


def test_no_interceptors_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one interceptor"):
        create_agent_hooks_middleware([])


def test_a_missing_sdk_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    real_import: Callable[..., Any] = builtins.__import__

    def without_sdk(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "agent_hooks" or name.startswith("agent_hooks."):
            raise ModuleNotFoundError(f"No module named {name!r}", name="agent_hooks")
        return real_import(name, *args, **kwargs)

    for module in [m for m in sys.modules if m == "agent_hooks" or m.startswith("agent_hooks.")]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setattr(builtins, "__import__", without_sdk)

    with pytest.raises(ModuleNotFoundError, match=r"agentnb\[hooks\]"):
        create_agent_hooks_middleware([Guard()])


async def test_the_readme_example_runs(capsys: pytest.CaptureFixture[str]) -> None:
    readme = Path(__file__).resolve().parents[2] / "README.md"
    section = readme.read_text(encoding="utf-8").split("<!-- section: hooks -->", 1)[1].split("<!-- section:", 1)[0]
    code = "\n".join(re.findall(r"```python\n(.*?)```", section, re.S))
    namespace: dict[str, Any] = {}
    exec("async def example():\n" + textwrap.indent(code, "    "), namespace)

    await namespace["example"]()

    assert capsys.readouterr().out.splitlines() == ["blocked: secret_in_output"]


async def test_a_streamed_run_a_middleware_ends_without_a_result_sends_nothing_and_closes_the_trail() -> None:
    records: list[InterceptionRecord] = []

    class EndsEarly(AgentMiddleware):
        async def process(self, context: AgentContext, call_next: Callable[[], Awaitable[None]]) -> None:
            raise MiddlewareTermination("nothing to say")

    client = ScriptedChatClient(["never sent"])
    agent = Agent(
        client, middleware=[create_agent_hooks_middleware([Guard()], record_sink=records.append), EndsEarly()]
    )

    stream = agent.run("hi", stream=True)
    assert [u async for u in stream] == []
    assert await stream.get_final_response() is None  # as `await agent.run(...)` gives
    assert points(records) == ["agent_startup", "input", "agent_shutdown"]
    assert client.calls == []
