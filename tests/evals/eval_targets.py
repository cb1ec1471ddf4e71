"""Targets the evals tests name by import string ("eval_targets:factory"): offline models, no network.

Ray workers and subprocesses import this module by name, so it must stay importable on its own.
"""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

from agentnb import Agent, Message, tool
from agentnb.local import FunctionChatClient, ScriptedChatClient
from agentnb.workflows import WorkflowBuilder, WorkflowContext, executor

CAPITALS = {"France": "Paris", "Italy": "Rome", "Spain": "Madrid", "Japan": "Tokyo", "Peru": "Lima"}


def capital_model(messages: list[Message], options: dict[str, Any]) -> str:
    """Answer 'Capital of X?' from a table; fail loudly on 'explode'; think long on 'slow'."""
    text = messages[-1].text
    if "explode" in text:
        raise RuntimeError("the model exploded")
    for country, city in CAPITALS.items():
        if country in text:
            return city
    return "I don't know."


async def slow_capital_model(messages: list[Message], options: dict[str, Any]) -> str:
    text = messages[-1].text
    if "slow" in text:
        await asyncio.sleep(5)
    await asyncio.sleep(float(os.environ.get("EVAL_TARGET_DELAY", "0")))
    log = os.environ.get("EVAL_TARGET_LOG")
    hold_after = int(os.environ.get("EVAL_TARGET_HOLD_AFTER", "0"))
    if log and hold_after and _count_lines(log) >= hold_after:
        # The call never finishes: a test that kills the run then knows exactly which calls had finished,
        # however slowly the machine gets there.
        await asyncio.Event().wait()
    if log:  # one line per finished model call, so a test can count calls across processes
        with open(log, "a", encoding="utf-8") as f:
            f.write(text + "\n")
    return capital_model(messages, options)


def _count_lines(path: str) -> int:
    try:
        with open(path, encoding="utf-8") as f:
            return sum(1 for _ in f)
    except FileNotFoundError:
        return 0


def capital_agent() -> Agent:
    """A factory: a geography agent on an offline model."""
    return Agent(FunctionChatClient(slow_capital_model), "Answer with the capital only.", name="geo")


@tool(approval_mode="always_require")
def delete_file(path: str) -> str:
    """Delete a file (needs approval)."""
    return f"deleted {path}"


def approval_model(messages: list[Message], options: dict[str, Any]) -> Any:
    last = messages[-1]
    for content in last.contents:
        if content.type == "function_result":
            return f"tool said: {content.result if content.exception is None else content.exception}"
    return ScriptedChatClient.call("delete_file", path=messages[-1].text)


def approval_agent() -> Agent:
    return Agent(FunctionChatClient(approval_model), name="janitor", tools=[delete_file])


def upper_workflow() -> Any:
    """A factory: a two-step workflow that shouts its input."""

    @executor(id="upper")
    async def upper(text: str, ctx: WorkflowContext[str]) -> None:
        await asyncio.sleep(0.01)
        if text == "explode":
            raise ValueError("bad input")
        await ctx.send_message(text.upper())

    @executor(id="exclaim")
    async def exclaim(text: str, ctx: WorkflowContext[str, str]) -> None:
        await ctx.yield_output(text + "!")

    return WorkflowBuilder(start_executor=upper).add_edge(upper, exclaim).build()


async def echo_json(value: Any) -> str:
    """A plain async function target."""
    return json.dumps(value, sort_keys=True)
