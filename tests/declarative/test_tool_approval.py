"""``requireApproval: true`` on InvokeFunctionTool and InvokeMcpTool: nothing runs until a person approves."""

from __future__ import annotations

from typing import Any

import pytest

from agentnb.declarative import (
    MCPToolInvocation,
    MCPToolResult,
    ToolApprovalRequest,
    ToolApprovalResponse,
    WorkflowFactory,
)
from agentnb.workflows import InMemoryCheckpointStorage

DELETE = """\
name: guarded
actions:
  - kind: InvokeFunctionTool
    id: delete
    functionName: delete_file
    requireApproval: true
    arguments:
      path: =inputs.path
    output:
      result: Local.deleted
      autoSend: true
  - kind: SendActivity
    activity:
      text: =Concat("blank result ", Text(IsBlank(Local.deleted)))
"""


async def test_an_approved_call_runs_with_the_approved_arguments() -> None:
    deleted: list[str] = []

    def delete_file(path: str) -> str:
        deleted.append(path)
        return f"deleted {path}"

    storage = InMemoryCheckpointStorage()
    workflow = WorkflowFactory(bindings={"delete_file": delete_file}, checkpoint_storage=storage)
    first = workflow.create_workflow_from_yaml(DELETE)
    result = await first.run({"path": "notes.txt"})
    (asked,) = result.get_request_info_events()
    assert isinstance(asked.data, ToolApprovalRequest)
    assert (asked.data.function_name, asked.data.arguments) == ("delete_file", {"path": "notes.txt"})
    assert deleted == []  # asking runs nothing

    with pytest.raises(TypeError, match="must be ToolApprovalResponse"):
        await first.run(responses={asked.request_id: "yes"})  # only an explicit approval answers
    assert deleted == []

    # Resumed in a workflow rebuilt from the same YAML, from the checkpoint.
    checkpoint = (await storage.list_checkpoints(workflow_name=first.name))[-1]
    again = workflow.create_workflow_from_yaml(DELETE)
    result = await again.run(
        checkpoint_id=checkpoint.checkpoint_id, responses={asked.request_id: ToolApprovalResponse(True)}
    )
    assert deleted == ["notes.txt"]
    assert result.get_outputs() == ["deleted notes.txt", "blank result false"]


async def test_a_rejected_call_runs_nothing_and_records_why() -> None:
    deleted: list[str] = []
    seen: dict[str, Any] = {}

    def delete_file(path: str) -> str:
        deleted.append(path)
        return "deleted"

    def capture(value: Any) -> None:
        seen["value"] = value

    text = (
        DELETE
        + "  - kind: InvokeFunctionTool\n    functionName: capture\n    arguments:\n      value: =Local.deleted\n"
    )
    workflow = WorkflowFactory(bindings={"delete_file": delete_file, "capture": capture}).create_workflow_from_yaml(
        text
    )
    (asked,) = (await workflow.run({"path": "notes.txt"})).get_request_info_events()
    result = await workflow.run(responses={asked.request_id: ToolApprovalResponse(False, reason="keep it")})
    assert deleted == []
    assert result.get_outputs() == ["blank result false"]
    assert seen["value"] == {"rejected": True, "reason": "keep it"}


async def test_mcp_tool_calls_ask_first_too() -> None:
    calls: list[MCPToolInvocation] = []

    def handler(invocation: MCPToolInvocation) -> MCPToolResult:
        calls.append(invocation)
        return MCPToolResult(content="pushed")

    workflow = WorkflowFactory(mcp_tool_handler=handler).create_workflow_from_yaml(
        """\
name: mcp
actions:
  - kind: InvokeMcpTool
    serverUrl: http://127.0.0.1:1/mcp
    toolName: git_push
    requireApproval: true
    arguments: {branch: main}
    output: {autoSend: true}
"""
    )
    (asked,) = (await workflow.run({})).get_request_info_events()
    assert (asked.data.function_name, asked.data.arguments, calls) == ("git_push", {"branch": "main"}, [])
    result = await workflow.run(responses={asked.request_id: ToolApprovalResponse(True)})
    assert [c.tool_name for c in calls] == ["git_push"]
    assert result.get_outputs() == ["pushed"]
