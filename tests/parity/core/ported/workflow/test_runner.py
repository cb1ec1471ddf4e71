# Copyright (c) Microsoft. All rights reserved.

import asyncio
from dataclasses import dataclass
from typing import Any
from unittest.mock import AsyncMock, MagicMock

import pytest

from agentnb import AgentExecutorResponse, AgentResponse, Executor, InMemoryCheckpointStorage, WorkflowCheckpoint, WorkflowContext, WorkflowEvent, WorkflowRunState, handler
from agentnb.exceptions import WorkflowCheckpointException, WorkflowRunError as WorkflowConvergenceException
from agentnb.workflows import FanOutEdgeGroup, SingleEdgeGroup
from agentnb import Runner
from agentnb import InProcRunnerContext, RunnerContext, WorkflowMessage


@dataclass
class MockMessage:
    """A mock message for testing purposes."""

    data: int


class MockExecutor(Executor):
    """A mock executor for testing purposes."""

    @handler
    async def mock_handler(self, message: MockMessage, ctx: WorkflowContext[MockMessage, int]) -> None:
        if message.data < 10:
            await ctx.send_message(MockMessage(data=message.data + 1))
        else:
            await ctx.yield_output(message.data)
            pass






















class SlowExecutor(Executor):
    """An executor that takes time to process, used for cancellation testing."""

    def __init__(self, id: str, work_duration: float = 0.5):
        super().__init__(id=id)
        self.started_count = 0
        self.completed_count = 0
        self.work_duration = work_duration

    @handler
    async def handle(self, message: MockMessage, ctx: WorkflowContext[MockMessage, int]) -> None:
        self.started_count += 1
        await asyncio.sleep(self.work_duration)
        self.completed_count += 1
        if message.data < 2:
            await ctx.send_message(MockMessage(data=message.data + 1))
        else:
            await ctx.yield_output(message.data)




class FailingExecutor(Executor):
    """An executor that fails during execution."""

    def __init__(self, id: str, fail_on_data: int = 5):
        super().__init__(id=id)
        self.fail_on_data = fail_on_data

    @handler
    async def handle(self, message: MockMessage, ctx: WorkflowContext[MockMessage, int]) -> None:
        if message.data == self.fail_on_data:
            raise RuntimeError("Simulated executor failure")
        await ctx.send_message(MockMessage(data=message.data + 1))












































class EventEmittingExecutor(Executor):
    """An executor that emits events during execution."""

    @handler
    async def handle(self, message: MockMessage, ctx: WorkflowContext[MockMessage, str]) -> None:
        # Emit event during processing
        await ctx.yield_output(f"processed-{message.data}")
        if message.data < 3:
            await ctx.send_message(MockMessage(data=message.data + 1))










class ExecutorThatFailsWithEvents(Executor):
    """An executor that emits events and then raises an exception after receiving messages."""

    def __init__(self, id: str, runner_ctx: RunnerContext, fail_on_iteration: int = 1):
        super().__init__(id=id)
        self._runner_ctx = runner_ctx
        self._fail_on_iteration = fail_on_iteration
        self._iteration_count = 0

    @handler
    async def handle(self, message: MockMessage, ctx: WorkflowContext[MockMessage, str]) -> None:
        self._iteration_count += 1
        # First emit an output event to the workflow context
        await ctx.yield_output(f"output-before-failure-{message.data}")
        # Add some events directly to the runner context
        await self._runner_ctx.add_event(WorkflowEvent("output", executor_id=self.id, data="pending-event"))
        # Fail on the specified iteration
        if self._iteration_count >= self._fail_on_iteration:
            raise RuntimeError("Executor failed with pending events")
        # Otherwise, send to next
        await ctx.send_message(MockMessage(data=message.data + 1))


class PassthroughExecutor(Executor):
    """An executor that passes messages through to the failing executor."""

    @handler
    async def handle(self, message: MockMessage, ctx: WorkflowContext[MockMessage, int]) -> None:
        await ctx.send_message(MockMessage(data=message.data))






class SlowEventEmittingExecutor(Executor):
    """An executor that emits events with delays to test straggler event draining."""

    def __init__(self, id: str, iterations_to_emit: int = 2):
        super().__init__(id=id)
        self.iterations_to_emit = iterations_to_emit
        self.current_iteration = 0

    @handler
    async def handle(self, message: MockMessage, ctx: WorkflowContext[MockMessage, str]) -> None:
        self.current_iteration += 1
        # Emit output event
        await ctx.yield_output(f"iteration-{self.current_iteration}")
        # Continue sending messages until we reach the target iterations
        if self.current_iteration < self.iterations_to_emit:
            await ctx.send_message(MockMessage(data=message.data + 1))


