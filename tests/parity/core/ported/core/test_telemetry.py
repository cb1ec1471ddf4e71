# Copyright (c) Microsoft. All rights reserved.

import ast
import concurrent.futures
import importlib.metadata
import importlib.util
import os
import re
from pathlib import Path
from unittest.mock import MagicMock, patch

import pytest

from agentnb import AGENT_FRAMEWORK_USER_AGENT, USER_AGENT_KEY, USER_AGENT_TELEMETRY_DISABLED_ENV_VAR, prepend_agent_framework_to_user_agent

# region Test constants


def test_telemetry_disabled_env_var():
    """Test that the telemetry disabled environment variable is correctly defined."""
    assert USER_AGENT_TELEMETRY_DISABLED_ENV_VAR == "AGENT_FRAMEWORK_USER_AGENT_DISABLED"


def test_user_agent_key():
    """Test that the user agent key is correctly defined."""
    assert USER_AGENT_KEY == "User-Agent"


def test_agent_framework_user_agent_format():
    """Test that the agent framework user agent is correctly formatted."""
    assert AGENT_FRAMEWORK_USER_AGENT.startswith("agent-framework-python/")


def test_agent_framework_user_agent_uses_core_distribution_version() -> None:
    core_version = importlib.metadata.version("agent-framework-core")

    assert f"agent-framework-python/{core_version}" == AGENT_FRAMEWORK_USER_AGENT


































# region Test prepend_agent_framework_to_user_agent


def test_prepend_to_existing_user_agent():
    """Test prepending to existing User-Agent header."""
    headers = {"User-Agent": "existing-agent/1.0"}
    result = prepend_agent_framework_to_user_agent(headers)

    assert "User-Agent" in result
    assert result["User-Agent"].startswith("agent-framework-python/")
    assert "existing-agent/1.0" in result["User-Agent"]


def test_prepend_to_empty_headers():
    """Test prepending to headers without User-Agent."""
    headers = {"Content-Type": "application/json"}
    result = prepend_agent_framework_to_user_agent(headers)

    assert "User-Agent" in result
    assert result["User-Agent"] == AGENT_FRAMEWORK_USER_AGENT
    assert "Content-Type" in result


def test_prepend_to_empty_dict():
    """Test prepending to empty headers dict."""
    headers: dict[str, str] = {}
    result = prepend_agent_framework_to_user_agent(headers)

    assert "User-Agent" in result
    assert result["User-Agent"] == AGENT_FRAMEWORK_USER_AGENT


def test_modifies_original_dict():
    """Test that the function modifies the original headers dict."""
    headers = {"Other-Header": "value"}
    result = prepend_agent_framework_to_user_agent(headers)

    assert result is headers  # Same object
    assert "User-Agent" in headers


# region Test _add_user_agent_prefix










# region Test _detect_hosted_environment








def _mock_agent_config(*, is_hosted: bool) -> MagicMock:
    """Create a mock azure.ai.agentserver.core module with AgentConfig."""
    mock_config = MagicMock()
    mock_config.is_hosted = is_hosted
    mock_module = MagicMock()
    mock_module.AgentConfig.from_env.return_value = mock_config
    return mock_module








# region Test module-level auto-detection


