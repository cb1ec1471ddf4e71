"""The reference's OpenTelemetry helpers: attribute names as an enum, the service resource, metric views."""

from __future__ import annotations

import os
from enum import Enum
from typing import TYPE_CHECKING, Any

from .. import _telemetry as tel
from .._settings import read_env_file

if TYPE_CHECKING:
    from opentelemetry.sdk.metrics.view import View
    from opentelemetry.sdk.resources import Resource

__all__ = ["ROLE_EVENT_MAP", "OtelAttr", "create_metric_views", "create_resource"]


class OtelAttr(str, Enum):
    """Span attribute, metric and operation names agentnb records (values are the semantic conventions').

    Example:
        >>> OtelAttr.OPERATION.value
        'gen_ai.operation.name'
    """

    OPERATION = tel.GEN_AI_OPERATION_NAME
    PROVIDER_NAME = tel.GEN_AI_PROVIDER_NAME
    ERROR_TYPE = tel.ERROR_TYPE
    ADDRESS = "server.address"
    PORT = "server.port"
    SEED = tel.GEN_AI_REQUEST_SEED
    REQUEST_MODEL = tel.GEN_AI_REQUEST_MODEL
    REQUEST_MAX_TOKENS = tel.GEN_AI_REQUEST_MAX_TOKENS
    REQUEST_TEMPERATURE = tel.GEN_AI_REQUEST_TEMPERATURE
    REQUEST_TOP_P = tel.GEN_AI_REQUEST_TOP_P
    RESPONSE_MODEL = tel.GEN_AI_RESPONSE_MODEL
    RESPONSE_ID = tel.GEN_AI_RESPONSE_ID
    FINISH_REASONS = tel.GEN_AI_RESPONSE_FINISH_REASONS
    INPUT_TOKENS = tel.GEN_AI_USAGE_INPUT_TOKENS
    OUTPUT_TOKENS = tel.GEN_AI_USAGE_OUTPUT_TOKENS
    TOOL_CALL_ID = tel.GEN_AI_TOOL_CALL_ID
    TOOL_NAME = tel.GEN_AI_TOOL_NAME
    TOOL_TYPE = tel.GEN_AI_TOOL_TYPE
    TOOL_DESCRIPTION = tel.GEN_AI_TOOL_DESCRIPTION
    TOOL_ARGUMENTS = tel.GEN_AI_TOOL_CALL_ARGUMENTS
    TOOL_RESULT = tel.GEN_AI_TOOL_CALL_RESULT
    MEASUREMENT_FUNCTION_TAG_NAME = tel.FUNCTION_NAME
    MEASUREMENT_FUNCTION_INVOCATION_DURATION = tel.FUNCTION_INVOCATION_DURATION
    AGENT_ID = tel.GEN_AI_AGENT_ID
    AGENT_NAME = tel.GEN_AI_AGENT_NAME
    AGENT_DESCRIPTION = tel.GEN_AI_AGENT_DESCRIPTION
    CONVERSATION_ID = tel.GEN_AI_CONVERSATION_ID
    INPUT_MESSAGES = tel.GEN_AI_INPUT_MESSAGES
    OUTPUT_MESSAGES = tel.GEN_AI_OUTPUT_MESSAGES
    SYSTEM_INSTRUCTIONS = tel.GEN_AI_SYSTEM_INSTRUCTIONS
    T_TYPE = tel.GEN_AI_TOKEN_TYPE
    T_TYPE_INPUT = "input"
    T_TYPE_OUTPUT = "output"
    T_UNIT = "tokens"
    DURATION_UNIT = "s"
    LLM_OPERATION_DURATION = "gen_ai.client.operation.duration"
    LLM_TOKEN_USAGE = "gen_ai.client.token.usage"
    SERVICE_NAME = "service.name"
    SERVICE_VERSION = "service.version"
    WORKFLOW_ID = tel.WORKFLOW_ID
    WORKFLOW_NAME = tel.WORKFLOW_NAME
    WORKFLOW_RUN_SPAN = tel.SPAN_WORKFLOW_RUN
    EXECUTOR_PROCESS_SPAN = tel.SPAN_EXECUTOR
    EXECUTOR_ID = tel.EXECUTOR_ID
    EXECUTOR_TYPE = tel.EXECUTOR_TYPE
    WORKFLOW_BUILDER_NAME = tel.WORKFLOW_BUILDER_NAME
    WORKFLOW_BUILDER_DESCRIPTION = tel.WORKFLOW_BUILDER_DESCRIPTION
    WORKFLOW_DESCRIPTION = "workflow.description"
    WORKFLOW_DEFINITION = tel.WORKFLOW_DEFINITION
    WORKFLOW_BUILD_SPAN = tel.SPAN_WORKFLOW_BUILD
    # Events on the workflow run and build spans.
    WORKFLOW_STARTED = tel.EVENT_WORKFLOW_STARTED
    WORKFLOW_COMPLETED = tel.EVENT_WORKFLOW_COMPLETED
    WORKFLOW_ERROR = tel.EVENT_WORKFLOW_ERROR
    BUILD_STARTED = tel.EVENT_BUILD_STARTED
    BUILD_VALIDATION_COMPLETED = tel.EVENT_BUILD_VALIDATION_COMPLETED
    BUILD_COMPLETED = tel.EVENT_BUILD_COMPLETED
    BUILD_ERROR = tel.EVENT_BUILD_ERROR
    BUILD_ERROR_MESSAGE = tel.BUILD_ERROR_MESSAGE
    BUILD_ERROR_TYPE = tel.BUILD_ERROR_TYPE
    # Edge groups and the messages they carry between executors.
    EDGE_GROUP_PROCESS_SPAN = "edge_group.process"
    EDGE_GROUP_TYPE = "edge_group.type"
    EDGE_GROUP_ID = "edge_group.id"
    EDGE_GROUP_DELIVERED = "edge_group.delivered"
    EDGE_GROUP_DELIVERY_STATUS = "edge_group.delivery_status"
    MESSAGE_SEND_SPAN = tel.SPAN_MESSAGE_SEND
    MESSAGE_SOURCE_ID = tel.MESSAGE_SOURCE_ID
    MESSAGE_TARGET_ID = tel.MESSAGE_TARGET_ID
    MESSAGE_TYPE = tel.MESSAGE_TYPE
    MESSAGE_PAYLOAD_TYPE = tel.MESSAGE_PAYLOAD_TYPE
    MESSAGE_DESTINATION_EXECUTOR_ID = "message.destination_executor_id"
    CHAT_COMPLETION_OPERATION = tel.OP_CHAT
    EMBEDDING_OPERATION = "embeddings"
    TOOL_EXECUTION_OPERATION = tel.OP_EXECUTE_TOOL
    AGENT_INVOKE_OPERATION = tel.OP_INVOKE_AGENT
    SYSTEM = "gen_ai.system"
    # The v1.36.0 GenAI message events, one per role, and the choice event.
    SYSTEM_MESSAGE = "gen_ai.system.message"
    USER_MESSAGE = "gen_ai.user.message"
    ASSISTANT_MESSAGE = "gen_ai.assistant.message"
    TOOL_MESSAGE = "gen_ai.tool.message"
    CHOICE = "gen_ai.choice"
    # MCP client spans (the OpenTelemetry MCP conventions).
    MCP_METHOD_NAME = "mcp.method.name"
    MCP_PROTOCOL_VERSION = "mcp.protocol.version"
    MCP_SESSION_ID = "mcp.session.id"

    def __str__(self) -> str:
        return self.value

    def __repr__(self) -> str:
        return self.value


# The message event of each role (the v1.36.0 GenAI conventions).
ROLE_EVENT_MAP: dict[str, OtelAttr] = {
    "system": OtelAttr.SYSTEM_MESSAGE,
    "user": OtelAttr.USER_MESSAGE,
    "assistant": OtelAttr.ASSISTANT_MESSAGE,
    "tool": OtelAttr.TOOL_MESSAGE,
}


def create_resource(
    service_name: str | None = None,
    service_version: str | None = None,
    env_file_path: str | None = None,
    env_file_encoding: str | None = None,
    **attributes: Any,
) -> Resource:
    """An OpenTelemetry ``Resource`` naming this service, for providers you build yourself.

    ``service.name`` comes from the argument, else ``OTEL_SERVICE_NAME``, else ``"agentnb"``; the version
    likewise from ``OTEL_SERVICE_VERSION`` or agentnb's version; ``OTEL_RESOURCE_ATTRIBUTES`` (``k=v,k=v``)
    and ``attributes`` are added. A ``.env`` file, when given, is read before the environment.
    """
    from opentelemetry.sdk.resources import Resource

    from .. import __version__

    env = dict(os.environ)
    if env_file_path is not None:
        env = {**read_env_file(env_file_path, env_file_encoding or "utf-8"), **env}
    values: dict[str, Any] = {}
    for pair in env.get("OTEL_RESOURCE_ATTRIBUTES", "").split(","):
        key, sep, value = pair.partition("=")
        if sep and key.strip():
            values[key.strip()] = value.strip()
    values.update(attributes)
    values["service.name"] = service_name or env.get("OTEL_SERVICE_NAME") or "agentnb"
    values["service.version"] = service_version or env.get("OTEL_SERVICE_VERSION") or __version__
    return Resource.create(values)


def create_metric_views() -> list[View]:
    """Metric views that keep agentnb's and the GenAI conventions' instruments and drop every other one."""
    from opentelemetry.sdk.metrics.view import DropAggregation, View

    return [
        View(instrument_name="agentnb*"),
        View(instrument_name="gen_ai*"),
        View(instrument_name="*", aggregation=DropAggregation()),
    ]
