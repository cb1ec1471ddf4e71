"""Executors and handlers: dispatch by type hint, function executors, explicit types, state hooks."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest
from typing_extensions import Never

from agentnb.workflows import (
    Executor,
    FunctionExecutor,
    WorkflowBuilder,
    WorkflowContext,
    executor,
    handler,
    response_handler,
)


@dataclass
class Ping:
    n: int


@dataclass
class LoudPing(Ping):
    pass


class Multi(Executor):
    @handler
    async def on_ping(self, ping: Ping, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"ping {ping.n}")

    @handler
    async def on_loud(self, ping: LoudPing, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"LOUD {ping.n}")

    @handler
    async def on_number(self, value: int | float, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"number {value}")

    @handler
    async def on_texts(self, values: list[str], ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output("texts " + "+".join(values))

    @handler
    async def on_ints(self, values: list[int], ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"ints {sum(values)}")


async def test_handlers_dispatch_by_type_hint() -> None:
    workflow = WorkflowBuilder(start_executor=Multi("multi")).build()
    assert (await workflow.run(Ping(1))).get_outputs() == ["ping 1"]
    assert (await workflow.run(LoudPing(2))).get_outputs() == ["LOUD 2"]  # exact type beats the base class
    assert (await workflow.run(3)).get_outputs() == ["number 3"]
    assert (await workflow.run(2.5)).get_outputs() == ["number 2.5"]
    assert (await workflow.run(["a", "b"])).get_outputs() == ["texts a+b"]
    assert (await workflow.run([1, 2])).get_outputs() == ["ints 3"]  # generic lists are told apart by content
    executor_ = workflow.get_start_executor()
    assert executor_.can_handle(Ping(0)) and not executor_.can_handle("text")
    assert executor_.id == "multi" and Multi().id == "Multi"


async def test_function_executor_without_context_sends_its_return_value() -> None:
    @executor
    def double(n: int) -> int:
        return n * 2

    @executor(id="show")
    async def show(n: int, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.yield_output(f"= {n}")

    assert isinstance(double, FunctionExecutor) and double.id == "double"
    workflow = WorkflowBuilder(start_executor=double).add_edge(double, show).build()
    assert (await workflow.run(21)).get_outputs() == ["= 42"]


async def test_explicit_types_when_hints_cannot_be_resolved() -> None:
    class Local:  # defined in a function: unresolvable as a string annotation
        def __init__(self, v: int) -> None:
            self.v = v

    with pytest.raises(TypeError, match="Cannot resolve the type hints"):

        @executor(id="bad")
        async def bad(value: Local, ctx: WorkflowContext) -> None:
            return None

    @executor(id="good", input=Local, output=Never, workflow_output=int)
    async def good(value: Any, ctx: Any) -> None:
        await ctx.yield_output(value.v)

    assert (await WorkflowBuilder(start_executor=good).build().run(Local(7))).get_outputs() == [7]


def test_handler_definition_errors() -> None:
    with pytest.raises(TypeError, match="needs an async function"):

        class NotAsync(Executor):
            @handler
            def go(self, text: str, ctx: WorkflowContext) -> None:  # type: ignore[misc]
                return None

    # Signature mistakes surface where the class is written, as in the reference.
    with pytest.raises(TypeError, match="type annotation for the message parameter 'text'"):

        class NoHint(Executor):
            @handler
            async def go(self, text, ctx: WorkflowContext) -> None:  # type: ignore[no-untyped-def]
                return None

    with pytest.raises(TypeError, match="must take a WorkflowContext"):

        class NoCtx(Executor):
            @handler
            async def go(self, text: str) -> None:
                return None

    with pytest.raises(TypeError, match="must be async"):

        @executor
        def sync_with_ctx(text: str, ctx: WorkflowContext) -> None:
            return None

    with pytest.raises(ValueError, match="non-empty str"):
        Executor("")


def test_declared_types_are_exposed() -> None:
    class Typed(Executor):
        @handler
        async def a(self, text: str, ctx: WorkflowContext[int | str, bool]) -> None:
            return None

        @handler
        async def b(self, n: int, ctx: WorkflowContext[Any]) -> None:
            return None

    typed = Typed()
    assert typed.input_types == [str, int]
    assert typed.output_types == [Any]
    assert typed.workflow_output_types == [bool]
    assert typed.accepts(str) and not typed.accepts(bytes)


class Counter(Executor):
    def __init__(self) -> None:
        super().__init__("counter")
        self.count = 0

    @handler
    async def add(self, n: int, ctx: WorkflowContext[int, int]) -> None:
        self.count += n
        if self.count < 10:
            await ctx.send_message(n)
        else:
            await ctx.yield_output(self.count)

    async def on_checkpoint_save(self) -> dict[str, Any]:  # async hooks work too
        return {"count": self.count}

    async def on_checkpoint_restore(self, state: dict[str, Any]) -> None:
        self.count = state["count"]

    def reset(self) -> None:
        self.count = 0


async def test_executor_state_hooks_and_reset() -> None:
    from agentnb.workflows import InMemoryCheckpointStorage

    storage = InMemoryCheckpointStorage()
    counter = Counter()
    workflow = WorkflowBuilder(start_executor=counter, checkpoint_storage=storage).add_edge(counter, counter).build()
    assert (await workflow.run(3)).get_outputs() == [12]
    assert (await workflow.run(5)).get_outputs() == [10]  # reset() ran before the fresh run
    infos = await storage.list_checkpoints()
    states = [(await storage.load(i.checkpoint_id)).executor_states for i in infos]
    assert {"counter": {"count": 6}} in states
    # Restore the mid-run state into a brand-new executor and finish from there.
    mid = next(i for i, s in zip(infos, states, strict=True) if s == {"counter": {"count": 6}})
    fresh = Counter()
    rebuilt = WorkflowBuilder(start_executor=fresh, checkpoint_storage=storage).add_edge(fresh, fresh).build()
    assert (await rebuilt.run(checkpoint_id=mid.checkpoint_id)).get_outputs() == [12]


def test_response_handler_needs_matching_hints() -> None:
    class Asker(Executor):
        @handler
        async def ask(self, text: str, ctx: WorkflowContext) -> None:
            await ctx.request_info(request_data=text, response_type=int)

        @response_handler
        async def answered(self, question: str, answer: int, ctx: WorkflowContext[Never, int]) -> None:
            await ctx.yield_output(answer)

    asker = Asker()
    assert [s.response_type for s in asker.response_handler_specs] == [int]
    assert asker.response_handler_for_types("q", int) is not None
    assert asker.response_handler_for_types("q", str) is None
