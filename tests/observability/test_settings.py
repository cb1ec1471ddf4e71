"""ObservabilitySettings / OBSERVABILITY_SETTINGS (the reference's switches) and the MCP client span helpers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pytest
from opentelemetry.trace import SpanKind, StatusCode

from agentnb import _telemetry, observability
from agentnb.observability import (
    ROLE_EVENT_MAP,
    ObservabilitySettings,
    OtelAttr,
    create_mcp_client_span,
    disable_instrumentation,
    enable_instrumentation,
    enable_sensitive_telemetry,
    is_instrumentation_enabled,
    set_mcp_span_error,
)
from tests.observability.otel_fixtures import Otel


@pytest.fixture
def fresh_settings() -> Iterator[ObservabilitySettings]:
    """A fresh active settings object for the test; the previous one is active again afterwards."""
    previous = observability.OBSERVABILITY_SETTINGS
    saved = dict(_telemetry._state)  # pyright: ignore[reportPrivateUsage]
    settings = ObservabilitySettings(enable_instrumentation=False, enable_sensitive_data=False)
    observability.OBSERVABILITY_SETTINGS = settings
    yield settings
    observability.OBSERVABILITY_SETTINGS = previous
    _telemetry._state.update(saved)  # pyright: ignore[reportPrivateUsage]


def test_settings_read_the_reference_variables_then_agentnbs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("ENABLE_INSTRUMENTATION", "ENABLE_SENSITIVE_DATA", "AGENTNB_ENABLE_INSTRUMENTATION"):
        monkeypatch.delenv(name, raising=False)
    assert ObservabilitySettings().enable_instrumentation is False  # off unless switched on, unlike the reference
    monkeypatch.setenv("AGENTNB_ENABLE_INSTRUMENTATION", "true")
    assert ObservabilitySettings().enable_instrumentation is True
    monkeypatch.setenv("ENABLE_INSTRUMENTATION", "false")  # the reference's name wins when both are set
    assert ObservabilitySettings().ENABLED is False
    monkeypatch.setenv("ENABLE_CONSOLE_EXPORTERS", "true")
    monkeypatch.setenv("VS_CODE_EXTENSION_PORT", "4317")
    settings = ObservabilitySettings(enable_sensitive_data=True, enable_instrumentation=True)
    assert (settings.enable_console_exporters, settings.vs_code_extension_port) == (True, 4317)
    assert settings.SENSITIVE_DATA_ENABLED and settings.enable_message_events and not settings.is_setup
    env_file = tmp_path / ".env"
    env_file.write_text("ENABLE_INSTRUMENTATION=true\n", encoding="utf-8")
    assert ObservabilitySettings(env_file_path=str(env_file)).ENABLED is True


def test_the_active_settings_switch_agentnbs_spans(fresh_settings: ObservabilitySettings) -> None:
    assert not is_instrumentation_enabled()
    fresh_settings.enable_instrumentation = True
    assert is_instrumentation_enabled() and not _telemetry.sensitive_data_enabled()
    fresh_settings.enable_sensitive_data = True
    assert _telemetry.sensitive_data_enabled()
    # Patching the module attribute (as the reference's tests do) makes the new object the one obeyed.
    with patch("agentnb.observability.OBSERVABILITY_SETTINGS", ObservabilitySettings(enable_instrumentation=False)):
        assert not is_instrumentation_enabled()
    assert is_instrumentation_enabled() and _telemetry.sensitive_data_enabled()
    ObservabilitySettings(enable_instrumentation=False).enable_instrumentation = False  # not active: no effect
    assert is_instrumentation_enabled()


def test_disable_is_sticky_until_forced(fresh_settings: ObservabilitySettings) -> None:
    enable_instrumentation(span_store=False)
    disable_instrumentation()
    assert fresh_settings.is_user_disabled and not is_instrumentation_enabled()
    enable_instrumentation(span_store=False)
    enable_sensitive_telemetry()
    fresh_settings.enable_instrumentation = True
    assert not is_instrumentation_enabled() and fresh_settings.enable_instrumentation is False
    enable_sensitive_telemetry(force=True)
    assert is_instrumentation_enabled() and _telemetry.sensitive_data_enabled()
    assert not fresh_settings.is_user_disabled


def test_configure_otel_providers_records_the_reference_options(
    fresh_settings: ObservabilitySettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ENABLE_CONSOLE_EXPORTERS", "true")
    with patch.object(fresh_settings, "_configure") as configure:
        observability.configure_otel_providers(enable_sensitive_data=True, vs_code_extension_port=4317)
    assert fresh_settings.enable_console_exporters and fresh_settings.vs_code_extension_port == 4317
    assert is_instrumentation_enabled() and _telemetry.sensitive_data_enabled()
    assert configure.call_args.kwargs["span_store"] is True


def test_otel_attr_prints_its_value_and_roles_map_to_message_events() -> None:
    assert repr(OtelAttr.MCP_METHOD_NAME) == str(OtelAttr.MCP_METHOD_NAME) == "mcp.method.name"
    assert ROLE_EVENT_MAP["assistant"] is OtelAttr.ASSISTANT_MESSAGE


def test_mcp_client_span_names_the_method_and_target(otel: Otel) -> None:
    with create_mcp_client_span("tools/call", "get_weather", {"mcp.session.id": "s1"}) as span:
        assert span.is_recording()
    with create_mcp_client_span("initialize"):
        pass
    call = otel.one("tools/call get_weather")
    assert call.kind == SpanKind.CLIENT
    assert call.attributes is not None and call.attributes["mcp.method.name"] == "tools/call"
    assert call.attributes["mcp.session.id"] == "s1"
    assert otel.one("initialize").status.status_code == StatusCode.UNSET


def test_mcp_client_span_records_errors_without_their_message(otel: Otel) -> None:
    with pytest.raises(KeyError), create_mcp_client_span("tools/call", "broken"):
        raise KeyError("secret")
    with create_mcp_client_span("prompts/get", "p", capture_unhandled_exceptions=False) as span:
        set_mcp_span_error(span, "tool_error", "the prompt said secret")
    failed, marked = otel.one("tools/call broken"), otel.one("prompts/get p")
    assert failed.attributes is not None and failed.attributes["error.type"] == "KeyError"
    assert failed.status.status_code == StatusCode.ERROR and not failed.status.description
    assert marked.attributes is not None and marked.attributes["error.type"] == "tool_error"
    assert marked.status.status_code == StatusCode.ERROR and not marked.status.description


def test_mcp_client_span_is_not_recorded_with_instrumentation_off(fresh_settings: ObservabilitySettings) -> None:
    with create_mcp_client_span("tools/call", "x") as span:
        assert not span.is_recording()


async def test_the_agent_telemetry_layer_traces_an_agent_class_of_ones_own(otel: Otel) -> None:
    from agentnb import AgentResponse, AgentResponseUpdate, Content, Message, ResponseStream
    from agentnb.observability import AgentTelemetryLayer

    class _Echo:
        AGENT_PROVIDER_NAME = "echo_provider"
        id, name, description = "echo-1", "echo", "repeats"

        async def run(self, messages: Any = None, *, stream: bool = False, session: Any = None, **kwargs: Any) -> Any:
            if stream:

                async def updates() -> Any:
                    yield AgentResponseUpdate(contents=[Content.from_text("hi")], role="assistant")

                return ResponseStream(updates(), finalizer=AgentResponse.from_updates)
            if messages == "fail":
                raise RuntimeError("no")
            return AgentResponse(messages=[Message("assistant", ["hi"])], response_id="r1")

    class Echo(AgentTelemetryLayer, _Echo):
        pass

    assert (await Echo().run("hello")).text == "hi"
    assert [u.text async for u in Echo().run("hello", stream=True)] == ["hi"]
    with pytest.raises(RuntimeError):
        await Echo().run("fail")
    spans = otel.by_name("invoke_agent echo")
    assert len(spans) == 3
    attributes = spans[0].attributes
    assert attributes is not None and attributes["gen_ai.provider.name"] == "echo_provider"
    assert attributes["gen_ai.agent.id"] == "echo-1" and attributes["gen_ai.response.id"] == "r1"
    assert spans[2].status.status_code == StatusCode.ERROR


def test_a_function_span_of_ones_own(otel: Otel) -> None:
    from agentnb import tool
    from agentnb.observability import get_function_span, get_function_span_attributes

    @tool
    def lookup(city: str) -> str:
        """Look a city up."""
        return city

    attributes = get_function_span_attributes(lookup, tool_call_id="call-1")
    assert attributes["gen_ai.tool.description"] == "Look a city up."
    with get_function_span(attributes) as span:
        span.set_attribute("extra", 1)
    recorded = otel.one("execute_tool lookup")
    assert recorded.attributes is not None and recorded.attributes["gen_ai.tool.call.id"] == "call-1"
    assert recorded.attributes["gen_ai.operation.name"] == "execute_tool" and recorded.attributes["extra"] == 1
