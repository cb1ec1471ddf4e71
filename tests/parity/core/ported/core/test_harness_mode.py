# Copyright (c) Microsoft. All rights reserved.

from __future__ import annotations

import json

import pytest

from agentnb import DEFAULT_MODE_SOURCE_ID, Agent, AgentModeProvider, AgentSession, Message, SupportsChatGetResponse, get_agent_mode, set_agent_mode


def _tool_by_name(tools: list[object], name: str) -> object:
    """Return the tool with the requested name from a prepared tool list."""
    for tool in tools:
        if getattr(tool, "name", None) == name:
            return tool
    raise AssertionError(f"Tool {name!r} was not found.")


def test_get_and_set_agent_mode_manage_session_state() -> None:
    """Mode helpers should initialize session state, normalize values, and validate modes."""
    session = AgentSession(session_id="session-1")

    assert get_agent_mode(session) == "plan"
    assert session.state[DEFAULT_MODE_SOURCE_ID] == {"current_mode": "plan"}
    assert set_agent_mode(session, " execute ") == "execute"
    assert get_agent_mode(session) == "execute"

    custom_session = AgentSession(session_id="session-2")
    assert (
        get_agent_mode(
            custom_session,
            default_mode="draft",
            available_modes=("draft", "final"),
        )
        == "draft"
    )

    with pytest.raises(ValueError, match="Invalid mode"):
        set_agent_mode(session, "ship")


def test_agent_mode_helpers_reject_non_dict_provider_state() -> None:
    """Mode helpers should not overwrite unrelated non-dict session state."""
    session = AgentSession(session_id="session-1")
    session.state[DEFAULT_MODE_SOURCE_ID] = "unrelated state"

    with pytest.raises(TypeError, match="source_id 'agent_mode'.*str"):
        get_agent_mode(session)

    assert session.state[DEFAULT_MODE_SOURCE_ID] == "unrelated state"


def test_agent_mode_context_provider_validates_configuration() -> None:
    """Mode provider should validate configuration; graduated types carry no experimental metadata."""
    with pytest.raises(ValueError, match="at least one mode"):
        AgentModeProvider(mode_instructions={})

    with pytest.raises(ValueError, match="Invalid mode"):
        AgentModeProvider(default_mode="ship")

    for graduated in (AgentModeProvider, get_agent_mode, set_agent_mode):
        assert not hasattr(graduated, "__feature_id__")
    assert AgentModeProvider.__doc__ is not None
    assert ".. warning:: Experimental" not in AgentModeProvider.__doc__










def test_default_mode_falls_back_to_first_available_mode() -> None:
    """When ``default_mode`` is omitted, helpers and provider should use the first configured mode."""
    session = AgentSession(session_id="session-1")

    assert get_agent_mode(session, available_modes=("draft", "final")) == "draft"

    provider = AgentModeProvider(mode_instructions={"Draft": "Draft it.", "Final": "Finalize it."})
    assert provider.default_mode == "draft"


def test_get_agent_mode_falls_back_when_stored_mode_not_in_available_modes() -> None:
    """A previously persisted mode that is no longer configured should be reset to the default."""
    session = AgentSession(session_id="session-1")
    set_agent_mode(session, "execute")
    assert session.state[DEFAULT_MODE_SOURCE_ID]["current_mode"] == "execute"

    # Reconfigure with a smaller mode set that no longer includes "execute".
    current = get_agent_mode(session, default_mode="draft", available_modes=("draft", "final"))
    assert current == "draft"
    assert session.state[DEFAULT_MODE_SOURCE_ID]["current_mode"] == "draft"


def test_set_agent_mode_records_previous_mode_for_external_change_notification() -> None:
    """External mode changes via ``set_agent_mode`` should record the previous mode for notification."""
    session = AgentSession(session_id="session-1")
    set_agent_mode(session, "plan")
    set_agent_mode(session, "execute")

    assert session.state[DEFAULT_MODE_SOURCE_ID]["current_mode"] == "execute"
    assert session.state[DEFAULT_MODE_SOURCE_ID]["previous_mode_for_notification"] == "plan"


def test_set_agent_mode_no_op_does_not_record_previous_mode() -> None:
    """Setting the same mode should not queue a notification."""
    session = AgentSession(session_id="session-1")
    set_agent_mode(session, "plan")
    set_agent_mode(session, "plan")

    assert "previous_mode_for_notification" not in session.state[DEFAULT_MODE_SOURCE_ID]


