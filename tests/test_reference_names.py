"""The reference's small public helpers behave as code written for it expects."""

from __future__ import annotations

import base64
from typing import TypedDict

import pytest

import agentnb
from agentnb import (
    AgentSession,
    FunctionTool,
    Message,
    MiddlewareType,
    SecretString,
    SessionStore,
    detect_media_type_from_base64,
    load_settings,
    merge_chat_options,
    normalize_tools,
    prepend_instructions_to_messages,
    tool,
    validate_chat_options,
    validate_tool_mode,
    validate_tools,
)
from agentnb.exceptions import IntegrationException, ServiceError, SettingNotFoundError


class _Settings(TypedDict, total=False):
    api_key: SecretString | None
    timeout: float | None
    verbose: bool | None
    endpoint: str | None
    deployment: str | None


def test_load_settings_takes_overrides_then_env_file_then_environment(tmp_path, monkeypatch) -> None:
    env_file = tmp_path / ".env"
    env_file.write_text('# keys\nexport MY_API_KEY="from-file"\nMY_TIMEOUT=2.5 # seconds\n')
    monkeypatch.setenv("MY_API_KEY", "from-env")
    monkeypatch.setenv("MY_VERBOSE", "yes")
    settings = load_settings(
        _Settings, env_prefix="MY_", env_file_path=str(env_file), endpoint="http://x", timeout=None
    )
    assert settings["api_key"] == "from-file" and isinstance(settings["api_key"], SecretString)
    assert "from-file" not in repr(settings["api_key"])
    assert settings["timeout"] == 2.5 and settings["verbose"] is True
    assert settings["endpoint"] == "http://x" and settings["deployment"] is None
    with pytest.raises(ValueError, match="Invalid type for setting 'timeout'"):
        load_settings(_Settings, timeout="soon")
    with pytest.raises(FileNotFoundError):
        load_settings(_Settings, env_file_path=str(tmp_path / "missing.env"))


def test_load_settings_checks_required_fields_and_exclusive_groups(monkeypatch) -> None:
    monkeypatch.delenv("MY_API_KEY", raising=False)
    with pytest.raises(SettingNotFoundError, match=r"'api_key' was not provided.*MY_API_KEY"):
        load_settings(_Settings, env_prefix="MY_", required_fields=["api_key"])
    group = [("endpoint", "deployment")]
    with pytest.raises(SettingNotFoundError, match="none was set"):
        load_settings(_Settings, required_fields=group)
    with pytest.raises(SettingNotFoundError, match="multiple were set"):
        load_settings(_Settings, required_fields=group, endpoint="e", deployment="d")
    assert load_settings(_Settings, required_fields=group, endpoint="e")["endpoint"] == "e"
    assert issubclass(SettingNotFoundError, agentnb.AgentnbError) and IntegrationException is ServiceError


def test_tool_mode_validation() -> None:
    assert validate_tool_mode("auto") == {"mode": "auto"}
    assert validate_tool_mode(None) is None
    assert validate_tool_mode({"mode": "required", "allowed_tools": ("a", "b")}) == {
        "mode": "required",
        "allowed_tools": ["a", "b"],
    }
    for bad in ("sometimes", {"mode": "auto", "required_function_name": "f"}, {"mode": "none", "allowed_tools": []}):
        with pytest.raises(ValueError):
            validate_tool_mode(bad)  # type: ignore[arg-type]


async def test_chat_options_are_validated_and_merged() -> None:
    def double(x: int) -> int:
        return 2 * x

    options = await validate_chat_options({"temperature": 1, "tools": [double]})
    assert options["temperature"] == 1.0 and isinstance(options["temperature"], float)
    assert [t.name for t in options["tools"]] == ["double"]
    for bad in ({"temperature": 3}, {"top_p": -0.1}, {"max_tokens": 0}, {"presence_penalty": 2.5}):
        with pytest.raises(ValueError):
            await validate_chat_options(bad)
    first, second = tool(double), tool(lambda y: y, name="ident")
    merged = merge_chat_options(
        {"instructions": "Be brief.", "tools": [first], "metadata": {"a": 1}, "temperature": 0.2},
        {"instructions": "Answer in French.", "tools": [first, second], "metadata": {"b": 2}, "temperature": None},
    )
    assert merged == {
        "instructions": "Be brief.\nAnswer in French.",
        "tools": [first, second],
        "metadata": {"a": 1, "b": 2},
        "temperature": 0.2,
    }
    normalized = normalize_tools(double)
    assert len(normalized) == 1 and isinstance(normalized[0], FunctionTool)
    assert [t.name for t in await validate_tools([first, second])] == ["double", "ident"]


def test_instructions_are_prepended_once() -> None:
    messages = [Message("user", ["hi"])]
    once = prepend_instructions_to_messages(messages, "Be brief.")
    assert [(m.role, m.text) for m in once] == [("system", "Be brief."), ("user", "hi")]
    assert prepend_instructions_to_messages(once, "Be brief.") is once
    assert prepend_instructions_to_messages(messages, None) is messages


def test_media_types_are_detected_from_the_bytes() -> None:
    png = b"\x89PNG\r\n\x1a\n" + b"\0" * 8
    encoded = base64.b64encode(png).decode()
    assert detect_media_type_from_base64(data_bytes=png) == "image/png"
    assert detect_media_type_from_base64(data_str=encoded) == "image/png"
    assert detect_media_type_from_base64(data_uri=f"data:image/jpeg;base64,{encoded}") == "image/png"
    assert detect_media_type_from_base64(data_bytes=b"RIFF\0\0\0\0WAVEfmt ") == "audio/wav"
    assert detect_media_type_from_base64(data_bytes=b"plain text") is None
    with pytest.raises(ValueError, match="exactly one"):
        detect_media_type_from_base64(data_bytes=png, data_str=encoded)
    with pytest.raises(ValueError, match="base64"):
        detect_media_type_from_base64(data_str="not base64!")


async def test_session_store_hands_out_independent_copies() -> None:
    store = SessionStore()
    session = AgentSession(session_id="s1")
    session.state["count"] = 1
    await store.set("user-1", session)
    session.state["count"] = 2  # later changes are not stored
    first, second = await store.get("user-1"), await store.get("user-1")
    assert first is not None and second is not None and first is not second
    assert first.state["count"] == 1 and first.session_id == "s1"
    first.state["count"] = 5
    assert (await store.get("user-1")).state["count"] == 1  # type: ignore[union-attr]
    await store.delete("user-1")
    assert await store.get("user-1") is None and len(store) == 0
    with pytest.raises(ValueError, match="non-empty string"):
        await store.get("")


def test_middleware_and_telemetry_names() -> None:
    from agentnb.observability import OtelAttr, create_metric_views, create_resource

    assert MiddlewareType("chat") is MiddlewareType.CHAT
    assert OtelAttr.OPERATION == "gen_ai.operation.name" and str(OtelAttr.TOOL_NAME) == "gen_ai.tool.name"
    resource = create_resource(service_name="svc", team="ml")
    assert resource.attributes["service.name"] == "svc" and resource.attributes["team"] == "ml"
    assert resource.attributes["service.version"] == agentnb.__version__
    assert [v._instrument_name for v in create_metric_views()] == ["agentnb*", "gen_ai*", "*"]


def test_parse_result_gives_the_contents_a_function_result_carries() -> None:
    from pydantic import BaseModel

    from agentnb import Content

    class Weather(BaseModel):
        city: str
        degrees: int

    assert [c.text for c in FunctionTool.parse_result(None)] == [""]
    assert [c.text for c in FunctionTool.parse_result("sunny")] == ["sunny"]
    assert [c.text for c in FunctionTool.parse_result(Weather(city="Oslo", degrees=3))] == [
        '{"city":"Oslo","degrees":3}'
    ]
    image = Content.from_data(b"\x89PNG", "image/png")
    mixed = FunctionTool.parse_result([image, {"n": 1}])
    assert mixed[0] is image and mixed[1].text == '{"n": 1}'
    assert [c.text for c in FunctionTool.parse_result([1, 2])] == ["[1, 2]"]


def test_text_reasoning_and_service_sessions_as_the_reference_spells_them() -> None:
    from agentnb import Agent, Content
    from agentnb.local import ScriptedChatClient

    reasoning = Content.from_text_reasoning(text="think", protected_data="sig", id="r1")
    assert (reasoning.type, reasoning.text, reasoning.protected_data, reasoning.id) == (
        "text_reasoning",
        "think",
        "sig",
        "r1",
    )
    session = Agent(ScriptedChatClient(["hi"])).get_session("resp_123", session_id="s1")
    assert (session.service_session_id, session.session_id) == ("resp_123", "s1")


def test_user_agent_names_put_agentnb_first_unless_disabled(monkeypatch) -> None:
    headers = agentnb.prepend_agent_framework_to_user_agent({"User-Agent": "my-app/1.0"})
    assert headers["User-Agent"] == f"agentnb-python/{agentnb.__version__} my-app/1.0"
    assert agentnb.prepend_agent_framework_to_user_agent() == {"User-Agent": agentnb.AGENT_FRAMEWORK_USER_AGENT}
    monkeypatch.setenv(agentnb.USER_AGENT_TELEMETRY_DISABLED_ENV_VAR, "true")
    assert agentnb.prepend_agent_framework_to_user_agent({"User-Agent": "x/1"}) == {"User-Agent": "x/1"}
    assert agentnb.prepend_agent_framework_to_user_agent() == {}


def test_openai_settings_resolve_from_the_environment_and_feature_ids_exist(monkeypatch) -> None:
    from agentnb.openai import ContentFilterResultSeverity, OpenAISettings

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_CHAT_MODEL", "gpt-4o")
    settings = load_settings(OpenAISettings, env_prefix="OPENAI_", base_url="http://localhost:8000/v1")
    assert isinstance(settings["api_key"], SecretString) and settings["api_key"].get_secret_value() == "sk-test"
    assert (settings["chat_model"], settings["base_url"]) == ("gpt-4o", "http://localhost:8000/v1")
    assert ContentFilterResultSeverity("medium") is ContentFilterResultSeverity.MEDIUM
    assert agentnb.ExperimentalFeature("SESSION_STORE") is agentnb.ExperimentalFeature.SESSION_STORE
    assert list(agentnb.ReleaseCandidateFeature) == []
    assert not hasattr(SessionStore, "__feature_stage__")  # agentnb marks no API with a stage
