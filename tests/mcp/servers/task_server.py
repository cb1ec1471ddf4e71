"""An MCP server that runs its tools as long-running tasks (the 2025-11-25 task lifecycle), for agentnb's tests.

Written with the official ``mcp`` SDK's low-level ``Server``: a middleware answers a task-augmented ``tools/call``
with a ``CreateTaskResult`` (the SDK's own ``tools/call`` path only returns ``CallToolResult``), and
``tasks/get`` / ``tasks/result`` / ``tasks/cancel`` are registered as request handlers.

Run it over stdio (``python task_server.py stdio --state DIR``) or streamable HTTP
(``python task_server.py http PORT --state DIR``). The state directory holds ``events.jsonl`` (every request
the server received: method and params, with a timestamp) and ``tasks.json`` (the task records), so the tests
can see what reached the server and a restarted process keeps serving the same tasks.

Tools (``taskSupport`` in brackets): ``slow_add`` [required] completes on its third ``tasks/get``;
``fail_task`` [required] fails; ``cancelled_task`` [required] is cancelled by the server; ``error_result``
[required] completes with ``isError``; ``never_done`` [required] never finishes; ``crash_on_submit`` [required]
exits the process on the augmented call before answering; ``crash_on_poll`` [required] exits the process on its
first ``tasks/get`` (the task survives in the state file and completes after a restart); ``slow_first_poll``
[required] answers its first ``tasks/get`` after 1.5 s; ``crash_twice`` [required] exits the process on its
first two ``tasks/get`` and never finishes; ``poll_error`` [required] refuses ``tasks/get`` with an
internal error; ``optional_add``
[optional] and ``plain_add`` [none] are ordinary tools.

Flags: ``--ignore-tasks`` (answer augmented calls with a plain result), ``--reject-tasks`` (refuse them with
``INVALID_PARAMS``), ``--poll-interval MS`` (the ``pollInterval`` the server suggests, default 50).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.shared.exceptions import MCPError

# Polls after which each tool's task reaches its terminal status (None: never).
POLLS_TO_FINISH: dict[str, int | None] = {
    "slow_add": 3,
    "fail_task": 1,
    "cancelled_task": 1,
    "error_result": 1,
    "never_done": None,
    "crash_on_submit": 1,
    "crash_on_poll": 2,
    "slow_first_poll": 2,
    "poll_error": None,
    "crash_twice": None,
}
TERMINAL_STATUS = {"fail_task": "failed", "cancelled_task": "cancelled"}
ADD_SCHEMA = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}


def _now() -> str:
    return datetime.now(timezone.utc).isoformat()


class State:
    """Task records and the request log, kept in files so a restarted process continues where one died."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.events = directory / "events.jsonl"
        self.tasks_file = directory / "tasks.json"

    def log(self, method: str, params: Any) -> None:
        with self.events.open("a") as f:
            f.write(json.dumps({"method": method, "params": params, "time": time.time()}) + "\n")

    def load(self) -> dict[str, dict[str, Any]]:
        if not self.tasks_file.exists():
            return {}
        return json.loads(self.tasks_file.read_text())

    def save(self, tasks: dict[str, dict[str, Any]]) -> None:
        tmp = self.tasks_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(tasks))
        os.replace(tmp, self.tasks_file)


def _task_view(record: dict[str, Any], poll_interval: int) -> dict[str, Any]:
    """The wire form of a task (``Task`` / ``GetTaskResult`` fields)."""
    view = {
        "taskId": record["id"],
        "status": record["status"],
        "createdAt": record["created"],
        "lastUpdatedAt": record["updated"],
        "ttl": record["ttl"],
        "pollInterval": poll_interval,
    }
    if record.get("message"):
        view["statusMessage"] = record["message"]
    return view


def _payload(record: dict[str, Any]) -> dict[str, Any]:
    """The ``CallToolResult`` a completed task's ``tasks/result`` returns."""
    args = record["arguments"]
    if record["tool"] == "error_result":
        return {"content": [{"type": "text", "text": "the report could not be built"}], "isError": True}
    total = int(args.get("a", 0)) + int(args.get("b", 0))
    return {
        "content": [{"type": "text", "text": str(total)}],
        "_meta": {"io.modelcontextprotocol/related-task": {"taskId": record["id"]}},
    }


def build(state: State, *, mode: str, poll_interval: int) -> Server[Any]:
    def tool(name: str, support: str | None) -> types.Tool:
        execution = types.ToolExecution(task_support=support) if support else None  # type: ignore[arg-type]
        return types.Tool(name=name, description=f"{name} (test)", input_schema=ADD_SCHEMA, execution=execution)

    async def list_tools(ctx: Any, params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(
            tools=[
                *(tool(name, "required") for name in POLLS_TO_FINISH),
                tool("optional_add", "optional"),
                tool("plain_add", None),
            ]
        )

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        args = params.arguments or {}
        total = int(args.get("a", 0)) + int(args.get("b", 0))
        return types.CallToolResult(content=[types.TextContent(type="text", text=f"plain:{total}")])

    class Tasks:
        """Middleware: logs each request, and answers task-augmented tools/call with a CreateTaskResult."""

        async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
            params = dict(ctx.params or {})
            state.log(ctx.method, params)
            if ctx.method == "server/discover":
                # A 2025-11-25 server: the task lifecycle exists only in that revision.
                raise MCPError(code=types.METHOD_NOT_FOUND, message="Method not found")
            if ctx.method != "tools/call" or "task" not in params or mode == "ignore":
                return await call_next(ctx)
            if mode == "reject":
                raise MCPError(code=types.INVALID_PARAMS, message="tasks are not supported")
            name = params["name"]
            if name == "crash_on_submit":
                os._exit(3)
            ttl = (params.get("task") or {}).get("ttl")
            record = {
                "id": uuid.uuid4().hex,
                "tool": name,
                "arguments": params.get("arguments") or {},
                "status": "working",
                "created": _now(),
                "updated": _now(),
                "ttl": ttl if ttl is not None else 60_000,
                "polls": 0,
            }
            tasks = state.load()
            tasks[record["id"]] = record
            state.save(tasks)
            return {"task": _task_view(record, poll_interval)}

    def record_for(task_id: str) -> tuple[dict[str, dict[str, Any]], dict[str, Any]]:
        tasks = state.load()
        if task_id not in tasks:
            raise MCPError(code=types.INVALID_PARAMS, message=f"unknown task {task_id}")
        return tasks, tasks[task_id]

    async def get_task(ctx: Any, params: types.GetTaskRequestParams) -> dict[str, Any]:
        tasks, record = record_for(params.task_id)
        if record["tool"] == "crash_on_poll" and not record.get("crashed"):
            record["crashed"] = True
            state.save(tasks)
            os._exit(4)
        if record["tool"] == "crash_twice" and record.get("crashes", 0) < 2:
            record["crashes"] = record.get("crashes", 0) + 1
            state.save(tasks)
            os._exit(5)
        if record["tool"] == "poll_error":
            raise MCPError(code=types.INTERNAL_ERROR, message="the task store is unavailable")
        if record["tool"] == "slow_first_poll" and record["polls"] == 0 and not record.get("slept"):
            record["slept"] = True
            state.save(tasks)
            await asyncio.sleep(1.5)
            tasks, record = record_for(params.task_id)
        if record["status"] == "working":
            record["polls"] += 1
            finish = POLLS_TO_FINISH.get(record["tool"])
            if finish is not None and record["polls"] >= finish:
                record["status"] = TERMINAL_STATUS.get(record["tool"], "completed")
                if record["status"] == "failed":
                    record["message"] = "disk full"
                record["updated"] = _now()
            state.save(tasks)
        return _task_view(record, poll_interval)

    async def task_result(ctx: Any, params: types.GetTaskPayloadRequestParams) -> dict[str, Any]:
        _, record = record_for(params.task_id)
        if record["status"] != "completed":
            raise MCPError(code=types.INVALID_PARAMS, message=f"task {record['id']} is {record['status']}")
        return _payload(record)

    async def cancel_task(ctx: Any, params: types.CancelTaskRequestParams) -> dict[str, Any]:
        tasks, record = record_for(params.task_id)
        if record["status"] == "working":
            record["status"] = "cancelled"
            record["updated"] = _now()
            state.save(tasks)
        return _task_view(record, poll_interval)

    server: Server[Any] = Server("tasks", on_list_tools=list_tools, on_call_tool=call_tool)
    server.middleware.append(Tasks())
    server.add_request_handler("tasks/get", types.GetTaskRequestParams, get_task)
    server.add_request_handler("tasks/result", types.GetTaskPayloadRequestParams, task_result)
    server.add_request_handler("tasks/cancel", types.CancelTaskRequestParams, cancel_task)
    return server


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("transport", choices=["stdio", "http"])
    parser.add_argument("port", nargs="?", type=int, default=0)
    parser.add_argument("--state", type=Path, required=True)
    parser.add_argument("--ignore-tasks", action="store_true")
    parser.add_argument("--reject-tasks", action="store_true")
    parser.add_argument("--poll-interval", type=int, default=50)
    args = parser.parse_args()
    mode = "ignore" if args.ignore_tasks else "reject" if args.reject_tasks else "tasks"
    server = build(State(args.state), mode=mode, poll_interval=args.poll_interval)
    if args.transport == "stdio":
        import anyio
        from mcp.server.runner import serve_loop
        from mcp.server.stdio import stdio_server

        async def serve() -> None:
            # The handshake-only loop: this server speaks the 2025-11-25 revision, as task servers do.
            async with stdio_server() as (read_stream, write_stream), server.lifespan(server) as lifespan_state:
                await serve_loop(
                    server,
                    read_stream,
                    write_stream,
                    lifespan_state=lifespan_state,
                    init_options=server.create_initialization_options(),
                )

        anyio.run(serve)
    else:
        import uvicorn

        uvicorn.run(server.streamable_http_app(), host="127.0.0.1", port=args.port, log_level="warning")
    sys.exit(0)


if __name__ == "__main__":
    main()
