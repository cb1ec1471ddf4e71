"""Light spans: made only when every span processor accepts them, and the same spans the SDK would make."""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from opentelemetry import context as context_api
from opentelemetry import trace
from opentelemetry.attributes import BoundedAttributes
from opentelemetry.sdk.trace import ReadableSpan, SpanLimits, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.sdk.trace.id_generator import IdGenerator
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF, TraceIdRatioBased
from opentelemetry.trace import NonRecordingSpan, SpanContext, SpanKind, Status, StatusCode, TraceFlags

from agentnb import Agent, _telemetry, tool
from agentnb._telemetry_spans import LightSpan, start_light_span
from agentnb.local import ScriptedChatClient
from agentnb.observability import SpanStore
from agentnb.observability._span_store import _encode_spans  # pyright: ignore[reportPrivateUsage]
from tests.observability.otel_fixtures import Otel


def _agent(tool_fn: Any) -> Agent:
    replies = [ScriptedChatClient.call(tool_fn.name, key="k"), "Done."]
    return Agent(ScriptedChatClient(replies), name="helper", tools=[tool_fn])


async def test_light_spans_are_made_exactly_when_every_processor_accepts_them(otel: Otel) -> None:
    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return "v"

    await _agent(lookup).run("go")
    spans = otel.spans()
    assert len(spans) == 4
    light = otel.exporter is None
    assert [isinstance(s, LightSpan) for s in spans] == [light] * 4
    assert all(isinstance(s, ReadableSpan) for s in spans)


async def test_spans_of_your_own_nest_with_agentnb_spans_both_ways(otel: Otel) -> None:
    tracer = trace.get_tracer("my.app")

    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        with tracer.start_as_current_span("my inner step"):
            return "v"

    with tracer.start_as_current_span("my outer step"):
        await _agent(lookup).run("go")
    by_name = {s.name: s for s in otel.spans()}
    outer, inner = by_name["my outer step"], by_name["my inner step"]
    agent_span, tool_span = by_name["invoke_agent helper"], by_name["execute_tool lookup"]
    assert agent_span.parent is not None and agent_span.parent.span_id == outer.context.span_id
    assert inner.parent is not None and inner.parent.span_id == tool_span.context.span_id
    assert len({s.context.trace_id for s in by_name.values()}) == 1


async def test_tool_code_can_annotate_the_current_span(otel: Otel) -> None:
    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        span = trace.get_current_span()
        span.set_attribute("my.list", [1, 2])
        span.set_attributes(unusual)
        span.add_event("looked up", {"key": key, "tags": ["a", "b"]})
        return "v"

    # Values the SDK converts, keeps as they are, or refuses, depending on its version: both kinds of span
    # end up with what the installed SDK's own attribute mapping keeps.
    unusual: dict[str, Any] = {"my.none": None, "my.bytes": b"x", "my.mixed": [1, "a"], "": "no key"}
    await _agent(lookup).run("go")
    (tool_span,) = [s for s in otel.spans() if s.name == "execute_tool lookup"]
    attributes = dict(tool_span.attributes or {})
    assert attributes["my.list"] == (1, 2)
    assert {k: attributes[k] for k in unusual if k in attributes} == dict(BoundedAttributes(None, unusual))
    (event,) = [e for e in tool_span.events if e.name == "looked up"]
    assert dict(event.attributes or {}) == {"key": "k", "tags": ("a", "b")}


async def test_an_unsampled_parent_leaves_the_decision_to_the_sampler(otel: Otel) -> None:
    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return "v"

    remote = SpanContext(0xABC, 0xDEF, is_remote=True, trace_flags=TraceFlags(TraceFlags.DEFAULT))
    token = context_api.attach(trace.set_span_in_context(NonRecordingSpan(remote)))
    try:
        response = await _agent(lookup).run("go")
    finally:
        context_api.detach(token)
    assert response.text == "Done."
    assert otel.spans() == []  # the default sampler follows the parent: nothing is recorded


# --- light spans on providers of their own ------------------------------------------------------------


@pytest.fixture
def use_provider(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[TracerProvider], None]]:
    """Send agentnb's spans to a provider of the test's own (the global one can be set only once)."""
    saved = dict(_telemetry._state)  # pyright: ignore[reportPrivateUsage]

    def use(provider: TracerProvider) -> None:
        monkeypatch.setattr(_telemetry, "_tracer", provider.get_tracer("agentnb"))
        _telemetry.enable(sensitive_data=False)

    yield use
    _telemetry._state.update(saved)  # pyright: ignore[reportPrivateUsage]


def _provider(store: SpanStore, **kwargs: Any) -> TracerProvider:
    provider = TracerProvider(shutdown_on_exit=False, **kwargs)
    provider.add_span_processor(store)
    return provider


@tool
def _lookup(key: str) -> str:
    """Look a key up."""
    return "v"


@pytest.mark.parametrize("sampler", [ALWAYS_OFF, TraceIdRatioBased(0.0)], ids=["always off", "ratio 0"])
async def test_a_sampler_of_your_own_decides_and_the_sdk_makes_the_spans(
    use_provider: Callable[[TracerProvider], None], sampler: Any
) -> None:
    store = SpanStore(None)
    use_provider(_provider(store, sampler=sampler))
    await _agent(_lookup).run("go")
    assert store.spans() == []


async def test_count_limits_are_kept_and_a_length_limit_hands_spans_to_the_sdk(
    use_provider: Callable[[TracerProvider], None],
) -> None:
    light_store, sdk_store = SpanStore(None), SpanStore(None)
    use_provider(_provider(light_store, span_limits=SpanLimits(max_span_attributes=3)))
    await _agent(_lookup).run("go")
    sdk_provider = _provider(sdk_store, span_limits=SpanLimits(max_span_attributes=3))
    sdk_provider.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()))
    use_provider(sdk_provider)
    await _agent(_lookup).run("go")
    light, sdk = light_store.spans(), sdk_store.spans()
    assert all(isinstance(s, LightSpan) for s in light) and not any(isinstance(s, LightSpan) for s in sdk)
    assert [len(s.attributes or {}) for s in light] == [len(s.attributes or {}) for s in sdk] == [3] * 4
    assert [s.dropped_attributes for s in light] == [s.dropped_attributes for s in sdk]
    assert [list(s.attributes or {}) for s in light] == [list(s.attributes or {}) for s in sdk]  # the newest kept
    assert all(s.dropped_attributes > 0 for s in light)

    store = SpanStore(None)
    use_provider(_provider(store, span_limits=SpanLimits(max_attribute_length=5)))
    await _agent(_lookup).run("go")
    assert store.spans() and not any(isinstance(s, LightSpan) for s in store.spans())


class _Counting(IdGenerator):
    def __init__(self) -> None:
        self.next = 0

    def generate_span_id(self) -> int:
        self.next += 1
        return self.next

    def generate_trace_id(self) -> int:
        return 0x1234

    def is_trace_id_random(self) -> bool:
        return False


async def test_ids_come_from_the_providers_id_generator(use_provider: Callable[[TracerProvider], None]) -> None:
    store = SpanStore(None)
    use_provider(_provider(store, id_generator=_Counting()))
    await _agent(_lookup).run("go")
    spans = store.spans()
    assert all(isinstance(s, LightSpan) for s in spans)
    assert {s.context.trace_id for s in spans} == {0x1234}
    assert sorted(s.context.span_id for s in spans) == [1, 2, 3, 4]
    assert all(s.context.trace_flags == TraceFlags.SAMPLED for s in spans)  # not random: no random flag


def _same_ops(span: Any) -> None:
    span.set_attribute("a", 1)
    span.set_attributes({"b": ("x", "y"), "c": None, "": 3})
    span.update_name("renamed")
    span.set_status(Status(StatusCode.UNSET))
    span.record_exception(ValueError("boom"), attributes={"extra": True})
    span.set_status(StatusCode.OK)
    span.set_status(Status(StatusCode.ERROR, "too late"))  # OK is final
    span.end()
    span.set_attribute("after", 1)  # ignored: the span has ended
    span.end()


def test_a_light_span_behaves_like_an_sdk_span(caplog: pytest.LogCaptureFixture) -> None:
    store = SpanStore(None)
    light_tracer = _provider(store).get_tracer("agentnb")
    light = start_light_span(light_tracer, "step", {"start": "yes"}, SpanKind.INTERNAL)
    assert isinstance(light, LightSpan) and light.is_recording()
    exporter = InMemorySpanExporter()
    sdk_provider = TracerProvider(shutdown_on_exit=False)
    sdk_provider.add_span_processor(SimpleSpanProcessor(exporter))
    sdk = sdk_provider.get_tracer("agentnb").start_span("step", attributes={"start": "yes"})
    with caplog.at_level(logging.WARNING):
        _same_ops(light)
        _same_ops(sdk)
    (finished,) = exporter.get_finished_spans()
    (stored,) = store.spans()
    assert stored is light and not light.is_recording()
    for read in (lambda s: s.name, lambda s: dict(s.attributes or {}), lambda s: s.status.status_code):
        assert read(stored) == read(finished)
    assert [(e.name, dict(e.attributes or {})) for e in stored.events] == [
        (e.name, dict(e.attributes or {})) for e in finished.events
    ]
    assert stored.start_time is not None and stored.end_time is not None and stored.start_time <= stored.end_time
    assert stored.resource is light_tracer.resource  # pyright: ignore[reportAttributeAccessIssue]


def test_an_sdk_tracer_with_another_processor_gets_no_light_span() -> None:
    provider = _provider(SpanStore(None))
    tracer = provider.get_tracer("agentnb")
    assert isinstance(start_light_span(tracer, "a", {}, SpanKind.INTERNAL), LightSpan)
    provider.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()))
    assert start_light_span(tracer, "b", {}, SpanKind.INTERNAL) is None
    assert start_light_span(trace.NoOpTracer(), "c", {}, SpanKind.INTERNAL) is None


def test_the_writer_reads_light_spans_like_their_public_properties() -> None:
    store = SpanStore(None, precompute=False)
    tracer = _provider(store).get_tracer("agentnb")
    root = start_light_span(tracer, "invoke_agent a", {_telemetry.GEN_AI_AGENT_NAME: "a"}, SpanKind.INTERNAL)
    assert root is not None
    token = context_api.attach(trace.set_span_in_context(root))
    try:
        chat = start_light_span(tracer, "chat m", {_telemetry.GEN_AI_OPERATION_NAME: "chat"}, SpanKind.CLIENT)
    finally:
        context_api.detach(token)
    assert chat is not None
    chat.set_attributes({_telemetry.GEN_AI_USAGE_INPUT_TOKENS: 7, "tags": ["x"]})
    chat.add_event("retry", {"attempt": 2})
    chat.set_status(Status(StatusCode.ERROR, "nope"))
    chat.end()
    root.end()
    finished = store.spans()
    assert all(type(s) is LightSpan for s in finished)
    records = _encode_spans(finished)
    assert records == _encode_spans(finished, public=True)
    assert records[0][2] == format(root.context.span_id, "016x") and records[0][13] == 7


async def test_an_sdk_laid_out_otherwise_falls_back_to_sdk_spans_with_one_warning(
    otel: Otel, monkeypatch: pytest.MonkeyPatch
) -> None:
    import agentnb._telemetry_spans as light

    @tool
    def lookup(key: str) -> str:
        """Look a key up."""
        return "v"

    class DroppedField(ReadableSpan):
        """The SDK's ReadableSpan as a release that dropped the deprecated ``_instrumentation_info`` has it."""

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, **kwargs)
            del self._instrumentation_info

    # What the layout check inspects is swapped for that release's class; the SDK's own spans stay as they are.
    monkeypatch.setattr(light, "ReadableSpan", DroppedField)
    monkeypatch.setattr(light, "_fits", {})
    monkeypatch.setattr(light, "_warned", [])
    monkeypatch.setattr(light, "_last_tracer", [None, None])
    with pytest.warns(RuntimeWarning, match="do not fit opentelemetry-sdk") as caught:
        await _agent(lookup).run("go")
        await _agent(lookup).run("again")
    assert len([w for w in caught if "do not fit" in str(w.message)]) == 1  # one warning, not one per span
    spans = otel.spans()
    assert len(spans) == 8 and not any(isinstance(s, LightSpan) for s in spans)
    assert {s.name for s in spans} >= {"invoke_agent helper", "execute_tool lookup"}
