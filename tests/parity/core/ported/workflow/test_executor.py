# Copyright (c) Microsoft. All rights reserved.

from dataclasses import dataclass
from typing import Generic, TypeVar

import pytest
from typing_extensions import Never

from agentnb import Executor, Message, WorkflowBuilder, WorkflowContext, WorkflowEvent, WorkflowMessage, executor, handler, response_handler


# Module-level types for string forward reference tests
@dataclass
class ForwardRefMessage:
    content: str


@dataclass
class ForwardRefTypeA:
    value: str


@dataclass
class ForwardRefTypeB:
    value: int


@dataclass
class ForwardRefResponse:
    result: str


def test_executor_without_id():
    """Test that an executor without an ID raises an error when trying to run."""

    class MockExecutorWithoutID(Executor):
        """A mock executor that does not implement any handlers."""

        pass

    with pytest.raises(ValueError):
        MockExecutorWithoutID(id="")


def test_executor_handler_without_annotations():
    """Test that an executor with one handler without annotations raises an error when trying to run."""

    with pytest.raises(ValueError):

        class MockExecutorWithOneHandlerWithoutAnnotations(Executor):  # type: ignore
            """A mock executor with one handler that does not implement any annotations."""

            @handler  # pyright: ignore[reportUnknownArgumentType]
            async def handle(self, message, ctx) -> None:  # type: ignore
                """A mock handler that does not implement any annotations."""
                pass


def test_executor_invalid_handler_signature():
    """Test that an executor with an invalid handler signature raises an error when trying to run."""

    with pytest.raises(ValueError):

        class MockExecutorWithInvalidHandlerSignature(Executor):  # type: ignore
            """A mock executor with an invalid handler signature."""

            @handler  # type: ignore
            async def handle(self, message, other, ctx) -> None:  # type: ignore
                """A mock handler with an invalid signature."""
                pass






async def test_executor_invoked_event_contains_input_data():
    """Test that executor_invoked event (type='executor_invoked') contains the input message data."""

    class UpperCaseExecutor(Executor):
        @handler
        async def handle(self, text: str, ctx: WorkflowContext[str]) -> None:
            await ctx.send_message(text.upper())

    class CollectorExecutor(Executor):
        @handler
        async def handle(self, text: str, ctx: WorkflowContext) -> None:
            pass

    upper = UpperCaseExecutor(id="upper")
    collector = CollectorExecutor(id="collector")

    workflow = WorkflowBuilder(start_executor=upper).add_edge(upper, collector).build()

    events = await workflow.run("hello world")
    invoked_events = [e for e in events if isinstance(e, WorkflowEvent) and e.type == "executor_invoked"]

    assert len(invoked_events) == 2

    # First invoked event should be for 'upper' executor with input "hello world"
    upper_invoked = next(e for e in invoked_events if e.executor_id == "upper")
    assert upper_invoked.data == "hello world"

    # Second invoked event should be for 'collector' executor with input "HELLO WORLD"
    collector_invoked = next(e for e in invoked_events if e.executor_id == "collector")
    assert collector_invoked.data == "HELLO WORLD"


async def test_executor_completed_event_contains_sent_messages():
    """Test that event (type='executor_completed') contains the messages sent via ctx.send_message()."""

    class MultiSenderExecutor(Executor):
        @handler
        async def handle(self, text: str, ctx: WorkflowContext[str]) -> None:
            await ctx.send_message(f"{text}-first")
            await ctx.send_message(f"{text}-second")

    class CollectorExecutor(Executor):
        def __init__(self, id: str) -> None:
            super().__init__(id=id)
            self.received: list[str] = []

        @handler
        async def handle(self, text: str, ctx: WorkflowContext) -> None:
            self.received.append(text)

    sender = MultiSenderExecutor(id="sender")
    collector = CollectorExecutor(id="collector")

    workflow = WorkflowBuilder(start_executor=sender).add_edge(sender, collector).build()

    events = await workflow.run("hello")
    completed_events = [e for e in events if isinstance(e, WorkflowEvent) and e.type == "executor_completed"]

    # Sender should have completed with the sent messages
    sender_completed = next(e for e in completed_events if e.executor_id == "sender")
    assert sender_completed.data is not None
    assert sender_completed.data == ["hello-first", "hello-second"]

    # Collector should have completed with no sent messages (None)
    collector_completed_events = [e for e in completed_events if e.executor_id == "collector"]
    # Collector is called twice (once per message from sender)
    assert len(collector_completed_events) == 2
    for collector_completed in collector_completed_events:
        assert collector_completed.data is None


async def test_executor_completed_event_includes_yielded_outputs():
    """Test that WorkflowEvent(type='executor_completed').data includes yielded outputs."""

    class YieldOnlyExecutor(Executor):
        @handler
        async def handle(self, text: str, ctx: WorkflowContext[Never, str]) -> None:  # type: ignore[valid-type]
            await ctx.yield_output(text.upper())

    executor = YieldOnlyExecutor(id="yielder")
    workflow = WorkflowBuilder(start_executor=executor).build()

    events = await workflow.run("test")
    completed_events = [e for e in events if isinstance(e, WorkflowEvent) and e.type == "executor_completed"]

    assert len(completed_events) == 1
    assert completed_events[0].executor_id == "yielder"
    # Yielded outputs are now included in executor_completed event (type='executor_completed').data
    assert completed_events[0].data == ["TEST"]

    # Verify the output was also yielded as an output event (type='output')
    output_events = [e for e in events if e.type == "output"]
    assert len(output_events) == 1
    assert output_events[0].data == "TEST"


async def test_executor_events_with_complex_message_types():
    """Test that executor events correctly capture complex message types."""
    from dataclasses import dataclass

    @dataclass
    class Request:
        query: str
        limit: int

    @dataclass
    class Response:
        results: list[str]

    class ProcessorExecutor(Executor):
        @handler
        async def handle(self, request: Request, ctx: WorkflowContext[Response]) -> None:
            response = Response(results=[request.query.upper()] * request.limit)
            await ctx.send_message(response)

    class CollectorExecutor(Executor):
        @handler
        async def handle(self, response: Response, ctx: WorkflowContext) -> None:
            pass

    processor = ProcessorExecutor(id="processor")
    collector = CollectorExecutor(id="collector")

    workflow = WorkflowBuilder(start_executor=processor).add_edge(processor, collector).build()

    input_request = Request(query="hello", limit=3)
    events = await workflow.run(input_request)

    invoked_events = [e for e in events if isinstance(e, WorkflowEvent) and e.type == "executor_invoked"]
    completed_events = [e for e in events if isinstance(e, WorkflowEvent) and e.type == "executor_completed"]

    # Check processor invoked event has the Request object
    processor_invoked = next(e for e in invoked_events if e.executor_id == "processor")
    assert isinstance(processor_invoked.data, Request)
    assert processor_invoked.data.query == "hello"
    assert processor_invoked.data.limit == 3

    # Check processor completed event has the Response object
    processor_completed = next(e for e in completed_events if e.executor_id == "processor")
    assert processor_completed.data is not None
    assert len(processor_completed.data) == 1
    assert isinstance(processor_completed.data[0], Response)
    assert processor_completed.data[0].results == ["HELLO", "HELLO", "HELLO"]

    # Check collector invoked event has the Response object
    collector_invoked = next(e for e in invoked_events if e.executor_id == "collector")
    assert isinstance(collector_invoked.data, Response)
    assert collector_invoked.data.results == ["HELLO", "HELLO", "HELLO"]


def test_executor_output_types_property():
    """Test that the output_types property correctly identifies message output types."""

    # Test executor with no output types
    class NoOutputExecutor(Executor):
        @handler
        async def handle(self, text: str, ctx: WorkflowContext) -> None:
            pass

    executor = NoOutputExecutor(id="no_output")
    assert executor.output_types == []

    # Test executor with single output type
    class SingleOutputExecutor(Executor):
        @handler
        async def handle(self, text: str, ctx: WorkflowContext[int]) -> None:
            pass

    executor = SingleOutputExecutor(id="single_output")  # type: ignore[assignment]
    assert int in executor.output_types
    assert len(executor.output_types) == 1

    # Test executor with union output types
    class UnionOutputExecutor(Executor):
        @handler
        async def handle(self, text: str, ctx: WorkflowContext[int | str]) -> None:
            pass

    executor = UnionOutputExecutor(id="union_output")  # type: ignore[assignment]
    assert int in executor.output_types
    assert str in executor.output_types
    assert len(executor.output_types) == 2

    # Test executor with multiple handlers having different output types
    class MultiHandlerExecutor(Executor):
        @handler
        async def handle_string(self, text: str, ctx: WorkflowContext[int]) -> None:
            pass

        @handler
        async def handle_number(self, num: int, ctx: WorkflowContext[bool]) -> None:
            pass

    executor = MultiHandlerExecutor(id="multi_handler")  # type: ignore[assignment]
    assert int in executor.output_types
    assert bool in executor.output_types
    assert len(executor.output_types) == 2


def test_executor_workflow_output_types_property():
    """Test that the workflow_output_types property correctly identifies workflow output types."""

    # Test executor with no workflow output types
    class NoWorkflowOutputExecutor(Executor):
        @handler
        async def handle(self, text: str, ctx: WorkflowContext[int]) -> None:
            pass

    executor = NoWorkflowOutputExecutor(id="no_workflow_output")
    assert executor.workflow_output_types == []

    # Test executor with workflow output type (second type parameter)
    class WorkflowOutputExecutor(Executor):
        @handler
        async def handle(self, text: str, ctx: WorkflowContext[int, str]) -> None:
            pass

    executor = WorkflowOutputExecutor(id="workflow_output")  # type: ignore[assignment]
    assert str in executor.workflow_output_types
    assert len(executor.workflow_output_types) == 1

    # Test executor with union workflow output types
    class UnionWorkflowOutputExecutor(Executor):
        @handler
        async def handle(self, text: str, ctx: WorkflowContext[int, str | bool]) -> None:
            pass

    executor = UnionWorkflowOutputExecutor(id="union_workflow_output")  # type: ignore[assignment]
    assert str in executor.workflow_output_types
    assert bool in executor.workflow_output_types
    assert len(executor.workflow_output_types) == 2

    # Test executor with multiple handlers having different workflow output types
    class MultiHandlerWorkflowExecutor(Executor):
        @handler
        async def handle_string(self, text: str, ctx: WorkflowContext[int, str]) -> None:
            pass

        @handler
        async def handle_number(self, num: int, ctx: WorkflowContext[bool, float]) -> None:
            pass

    executor = MultiHandlerWorkflowExecutor(id="multi_workflow")  # type: ignore[assignment]
    assert str in executor.workflow_output_types
    assert float in executor.workflow_output_types
    assert len(executor.workflow_output_types) == 2

    # Test executor with Never for message output (only workflow output)
    class YieldOnlyExecutor(Executor):
        @handler
        async def handle(self, text: str, ctx: WorkflowContext[Never, str]) -> None:  # type: ignore[valid-type]
            pass

    executor = YieldOnlyExecutor(id="yield_only")  # type: ignore[assignment]
    assert str in executor.workflow_output_types
    assert len(executor.workflow_output_types) == 1
    # Should have no message output types
    assert executor.output_types == []


def test_executor_output_and_workflow_output_types_combined():
    """Test executor with both message and workflow output types."""

    class DualOutputExecutor(Executor):
        @handler
        async def handle(self, text: str, ctx: WorkflowContext[int, str]) -> None:
            pass

    executor = DualOutputExecutor(id="dual")

    # Should have int as message output type
    assert int in executor.output_types
    assert len(executor.output_types) == 1

    # Should have str as workflow output type
    assert str in executor.workflow_output_types
    assert len(executor.workflow_output_types) == 1

    # They should be distinct
    assert int not in executor.workflow_output_types
    assert str not in executor.output_types


def test_executor_output_types_includes_response_handlers():
    """Test that output_types includes types from response handlers."""
    from agentnb import response_handler

    class RequestResponseExecutor(Executor):
        @handler
        async def handle(self, text: str, ctx: WorkflowContext[int]) -> None:
            pass

        @response_handler
        async def handle_response(self, original_request: str, response: bool, ctx: WorkflowContext[float]) -> None:
            pass

    executor = RequestResponseExecutor(id="request_response")

    # Should include output types from both handler and response_handler
    assert int in executor.output_types
    assert float in executor.output_types
    assert len(executor.output_types) == 2


def test_executor_workflow_output_types_includes_response_handlers():
    """Test that workflow_output_types includes types from response handlers."""
    from agentnb import response_handler

    class RequestResponseWorkflowExecutor(Executor):
        @handler
        async def handle(self, text: str, ctx: WorkflowContext[int, str]) -> None:
            pass

        @response_handler
        async def handle_response(
            self,
            original_request: str,
            response: bool,
            ctx: WorkflowContext[float, bool],
        ) -> None:
            pass

    executor = RequestResponseWorkflowExecutor(id="request_response_workflow")

    # Should include workflow output types from both handler and response_handler
    assert str in executor.workflow_output_types
    assert bool in executor.workflow_output_types
    assert len(executor.workflow_output_types) == 2

    # Verify message output types are separate
    assert int in executor.output_types
    assert float in executor.output_types
    assert len(executor.output_types) == 2


def test_executor_multiple_response_handlers_output_types():
    """Test that multiple response handlers contribute their output types."""

    class MultiResponseHandlerExecutor(Executor):
        @handler
        async def handle(self, text: str, ctx: WorkflowContext[int]) -> None:
            pass

        @response_handler
        async def handle_string_bool_response(
            self, original_request: str, response: bool, ctx: WorkflowContext[float]
        ) -> None:
            pass

        @response_handler
        async def handle_int_bool_response(
            self, original_request: int, response: bool, ctx: WorkflowContext[bool]
        ) -> None:
            pass

    executor = MultiResponseHandlerExecutor(id="multi_response")

    # Should include output types from all handlers and response handlers
    assert int in executor.output_types
    assert float in executor.output_types
    assert bool in executor.output_types
    assert len(executor.output_types) == 3


def test_executor_response_handler_union_output_types():
    """Test that response handlers with union output types contribute all types."""
    from agentnb import response_handler

    class UnionResponseHandlerExecutor(Executor):
        @handler
        async def handle(self, text: str, ctx: WorkflowContext) -> None:
            pass

        @response_handler
        async def handle_response(
            self,
            original_request: str,
            response: bool,
            ctx: WorkflowContext[int | str | float, bool | int],
        ) -> None:
            pass

    executor = UnionResponseHandlerExecutor(id="union_response")

    # Should include all output types from the union
    assert int in executor.output_types
    assert str in executor.output_types
    assert float in executor.output_types
    assert len(executor.output_types) == 3

    # Should include all workflow output types from the union
    assert bool in executor.workflow_output_types
    assert int in executor.workflow_output_types
    assert len(executor.workflow_output_types) == 2


async def test_executor_invoked_event_data_not_mutated_by_handler():
    """Test that executor_invoked event (type='executor_invoked').data captures original input, not mutated input."""

    @executor(id="Mutator")
    async def mutator(messages: list[Message], ctx: WorkflowContext[list[Message]]) -> None:
        # The handler mutates the input list by appending new messages
        original_len = len(messages)
        messages.append(Message(role="assistant", contents=["Added by executor"]))
        await ctx.send_message(messages)
        # Verify mutation happened
        assert len(messages) == original_len + 1

    workflow = WorkflowBuilder(start_executor=mutator).build()

    # Run with a single user message
    input_messages = [Message(role="user", contents=["hello"])]
    events = await workflow.run(input_messages)

    # Find the invoked event for the Mutator executor
    invoked_events = [e for e in events if isinstance(e, WorkflowEvent) and e.type == "executor_invoked"]
    assert len(invoked_events) == 1
    mutator_invoked = invoked_events[0]

    # The event data should contain ONLY the original input (1 user message)
    assert mutator_invoked.executor_id == "Mutator"
    assert len(mutator_invoked.data) == 1, (
        f"Expected 1 message (original input), got {len(mutator_invoked.data)}: "
        f"{[m.text for m in mutator_invoked.data]}"
    )
    assert mutator_invoked.data[0].text == "hello"


# region: Tests for @handler decorator with explicit input_type and output_type


class TestHandlerExplicitTypes:
    """Test suite for @handler decorator with explicit input_type and output_type parameters."""





    def test_handler_with_explicit_union_output_type(self):
        """Test that explicit union output is normalized to a list."""
        from typing import Any

        class UnionOutputExecutor(Executor):
            @handler(input=bytes, output=str | int | bool)
            async def handle(self, message: Any, ctx: WorkflowContext) -> None:
                pass

        exec_instance = UnionOutputExecutor(id="union_output")

        # Output types should be a list with all union members
        assert set(exec_instance.output_types) == {str, int, bool}







    def test_handler_with_string_forward_reference_union(self):
        """Test that string forward references work with union types."""

        class StringUnionExecutor(Executor):
            @handler(input="ForwardRefTypeA | ForwardRefTypeB")
            async def handle(self, message, ctx: WorkflowContext) -> None:  # type: ignore[no-untyped-def]
                pass

        exec_instance = StringUnionExecutor(id="string_union")

        # Should handle both types
        assert exec_instance.can_handle(WorkflowMessage(data=ForwardRefTypeA("hello"), source_id="mock"))
        assert exec_instance.can_handle(WorkflowMessage(data=ForwardRefTypeB(42), source_id="mock"))

    def test_handler_with_string_forward_reference_output_type(self):
        """Test that string forward references work for output_type."""

        class StringOutputExecutor(Executor):
            @handler(input=str, output="ForwardRefResponse")
            async def handle(self, message, ctx: WorkflowContext) -> None:  # type: ignore[no-untyped-def]
                pass

        exec_instance = StringOutputExecutor(id="string_output")

        # Should resolve the string output type
        assert ForwardRefResponse in exec_instance.output_types




    def test_handler_with_union_workflow_output_type(self):
        """Test that union types work for workflow_output."""

        class UnionWorkflowOutputExecutor(Executor):
            @handler(input=str, workflow_output=str | int)
            async def handle(self, message: str, ctx: WorkflowContext) -> None:
                pass

        exec_instance = UnionWorkflowOutputExecutor(id="union_workflow_output")

        # Should include both types from union
        assert str in exec_instance.workflow_output_types
        assert int in exec_instance.workflow_output_types

    def test_handler_with_string_forward_reference_workflow_output_type(self):
        """Test that string forward references work for workflow_output_type."""

        class StringWorkflowOutputExecutor(Executor):
            @handler(input=str, workflow_output="ForwardRefResponse")
            async def handle(self, message, ctx: WorkflowContext) -> None:  # type: ignore[no-untyped-def]
                pass

        exec_instance = StringWorkflowOutputExecutor(id="string_workflow_output")

        # Should resolve the string workflow_output_type
        assert ForwardRefResponse in exec_instance.workflow_output_types

    def test_handler_with_string_forward_reference_union_workflow_output_type(self):
        """Test that string forward reference union types work for workflow_output_type."""

        class StringUnionWorkflowOutputExecutor(Executor):
            @handler(input=str, workflow_output="ForwardRefTypeA | ForwardRefTypeB")
            async def handle(self, message, ctx: WorkflowContext) -> None:  # type: ignore[no-untyped-def]
                pass

        exec_instance = StringUnionWorkflowOutputExecutor(id="string_union_workflow_output")

        # Should resolve both types from string union
        assert ForwardRefTypeA in exec_instance.workflow_output_types
        assert ForwardRefTypeB in exec_instance.workflow_output_types

    def test_handler_fallback_to_introspection_for_workflow_output_type(self):
        """Test that workflow_output_type falls back to introspection when not explicitly provided."""

        class IntrospectedWorkflowOutputExecutor(Executor):
            @handler
            async def handle(self, message: str, ctx: WorkflowContext[int, bool]) -> None:
                pass

        exec_instance = IntrospectedWorkflowOutputExecutor(id="introspected_workflow_output")

        # Should use introspected types from WorkflowContext[int, bool]
        assert int in exec_instance.output_types
        assert bool in exec_instance.workflow_output_types


# endregion: Tests for @handler decorator with explicit input_type and output_type


# region Tests for unresolved TypeVar rejection in handler registration

_T = TypeVar("_T")


def test_handler_rejects_unresolved_typevar_in_message_annotation():
    """Test that @handler raises ValueError when the message parameter is an unresolved TypeVar."""

    with pytest.raises(ValueError, match="unresolved TypeVar"):

        class GenericEcho(Executor, Generic[_T]):
            @handler
            async def echo(self, message: _T, ctx: WorkflowContext) -> None:
                pass


_BT = TypeVar("_BT", bound=str)


def test_handler_rejects_bounded_typevar_in_message_annotation():
    """Test that @handler raises ValueError for a bounded TypeVar in message annotation."""

    with pytest.raises(ValueError, match="unresolved TypeVar"):

        class BoundedGenericExecutor(Executor, Generic[_BT]):
            @handler
            async def process(self, message: _BT, ctx: WorkflowContext) -> None:
                await ctx.send_message(message)  # type: ignore[arg-type]  # pyrefly: ignore[bad-argument-type]  # ty: ignore[invalid-argument-type]


def test_handler_allows_concrete_types():
    """Test that @handler works normally with concrete type annotations."""

    class ConcreteExecutor(Executor):
        @handler
        async def handle(self, message: str, ctx: WorkflowContext[str]) -> None:
            pass

    exec_instance = ConcreteExecutor(id="concrete")
    assert str in exec_instance.input_types


def test_handler_explicit_input_bypasses_typevar_check():
    """Test that @handler(input=...) bypasses TypeVar check since explicit types take precedence."""

    class GenericWithExplicit(Executor, Generic[_T]):
        @handler(input=str, output=str)
        async def echo(self, message, ctx: WorkflowContext) -> None:
            pass

    exec_instance = GenericWithExplicit(id="explicit")  # type: ignore[var-annotated]
    assert str in exec_instance.input_types


def test_handler_error_message_recommends_explicit_types():
    """Test that the TypeVar error message recommends @handler(input=..., output=...)."""

    with pytest.raises(ValueError, match=r"@handler\(input=<concrete_type>, output=<concrete_type>\)"):

        class GenericBad(Executor, Generic[_T]):
            @handler
            async def echo(self, message: _T, ctx: WorkflowContext) -> None:
                pass


# endregion: Tests for unresolved TypeVar rejection in handler registration


def test_handler_typevar_error_takes_priority_over_context_error():
    """Test that TypeVar message error is raised before WorkflowContext validation.

    When a handler has both a TypeVar message annotation and an unannotated ctx
    parameter, the TypeVar error should be reported first since it is the more
    actionable issue.
    """

    with pytest.raises(ValueError, match="unresolved TypeVar"):

        class DualBad(Executor, Generic[_T]):
            @handler
            async def process(self, message: _T, ctx) -> None:  # type: ignore[no-untyped-def]
                pass
