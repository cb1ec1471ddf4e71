# Copyright (c) Microsoft. All rights reserved.

from dataclasses import dataclass
from typing import Any, TypeVar

import pytest
from typing_extensions import Never

from agentnb import WorkflowBuilder, WorkflowContext, WorkflowMessage, executor
from agentnb.workflows import FunctionExecutor


# Module-level types for string forward reference tests
@dataclass
class FuncExecForwardRefMessage:
    content: str


@dataclass
class FuncExecForwardRefTypeA:
    value: str


@dataclass
class FuncExecForwardRefTypeB:
    value: int


@dataclass
class FuncExecForwardRefResponse:
    result: str


class TestFunctionExecutor:
    """Test suite for FunctionExecutor and @executor decorator."""



    def test_executor_decorator_without_id(self):
        """Test @executor decorator uses function name as default ID."""

        @executor
        async def my_function(data: dict[str, Any], ctx: WorkflowContext[Any]) -> None:
            await ctx.send_message(data)

        assert my_function.id == "my_function"





    def test_validation_errors(self):
        """Test various validation errors in function signatures."""

        # Wrong number of parameters (now accepts 1 or 2, so 0 or 3+ should fail)
        async def no_params() -> None:
            pass

        with pytest.raises(
            ValueError, match="must have \\(message: T\\) or \\(message: T, ctx: WorkflowContext\\[U\\]\\)"
        ):
            FunctionExecutor(no_params)  # type: ignore

        async def too_many_params(data: str, ctx: WorkflowContext[str], extra: int) -> None:
            pass

        with pytest.raises(
            ValueError, match="must have \\(message: T\\) or \\(message: T, ctx: WorkflowContext\\[U\\]\\)"
        ):
            FunctionExecutor(too_many_params)  # type: ignore

        # Missing message type annotation
        async def no_msg_type(data, ctx: WorkflowContext[str]) -> None:  # type: ignore
            pass

        with pytest.raises(ValueError, match="type annotation for the message"):
            FunctionExecutor(no_msg_type)  # type: ignore

        # Missing ctx annotation (only for 2-parameter functions)
        async def no_ctx_type(data: str, ctx) -> None:  # type: ignore
            pass

        with pytest.raises(ValueError, match="must have a WorkflowContext"):
            FunctionExecutor(no_ctx_type)  # type: ignore

        # Wrong ctx type
        async def wrong_ctx_type(data: str, ctx: str) -> None:  # type: ignore
            pass

        with pytest.raises(ValueError, match="must be annotated as WorkflowContext"):
            FunctionExecutor(wrong_ctx_type)  # type: ignore

        # Unparameterized WorkflowContext is now allowed
        async def unparameterized_ctx(data: str, ctx: WorkflowContext) -> None:  # type: ignore
            pass

        # This should now succeed since unparameterized WorkflowContext is allowed
        executor = FunctionExecutor(unparameterized_ctx)
        assert executor.output_types == []  # Unparameterized has no inferred types
        assert executor.workflow_output_types == []  # No workflow output types


    def test_can_handle_method(self):
        """Test that can_handle method works with instance handlers."""

        @executor
        async def string_processor(text: str, ctx: WorkflowContext[str]) -> None:
            await ctx.send_message(text)

        assert string_processor.can_handle(WorkflowMessage(data="hello", source_id="Mock"))
        assert not string_processor.can_handle(WorkflowMessage(data=123, source_id="Mock"))
        assert not string_processor.can_handle(WorkflowMessage(data=[], source_id="Mock"))





    def test_single_parameter_can_handle(self):
        """Test that single-parameter functions work with can_handle method."""

        @executor
        async def int_processor(value: int):
            return value * 2

        assert int_processor.can_handle(WorkflowMessage(data=42, source_id="mock"))
        assert not int_processor.can_handle(WorkflowMessage(data="hello", source_id="mock"))
        assert not int_processor.can_handle(WorkflowMessage(data=[], source_id="mock"))




    def test_sync_function_can_handle(self):
        """Test that sync functions work with can_handle method."""

        @executor
        def string_handler(text: str):
            return text.strip()

        assert string_handler.can_handle(WorkflowMessage(data="hello", source_id="mock"))
        assert not string_handler.can_handle(WorkflowMessage(data=123, source_id="mock"))
        assert not string_handler.can_handle(WorkflowMessage(data=[], source_id="mock"))


    def test_mixed_sync_async_decorator(self):
        """Test that both sync and async functions work with decorator."""

        @executor
        def sync_func(data: str):
            return data.lower()

        @executor
        async def async_func(data: str):
            return data.upper()

        # Both should be FunctionExecutor instances
        assert isinstance(sync_func, FunctionExecutor)
        assert isinstance(async_func, FunctionExecutor)

        # Both should handle strings
        assert sync_func.can_handle(WorkflowMessage(data="test", source_id="mock"))
        assert async_func.can_handle(WorkflowMessage(data="test", source_id="mock"))

        # Both should be different instances
        assert sync_func is not async_func



        # The actual thread execution test would require a full workflow setup,
        # but the important thing is that asyncio.to_thread is used in the wrapper

    def test_executor_rejects_staticmethod(self):
        """Test that @executor decorator properly rejects @staticmethod with clear error."""
        with pytest.raises(ValueError) as exc_info:

            class Example:  # pyright: ignore[reportUnusedClass]
                @executor
                @staticmethod
                async def bad_handler(data: str) -> str:
                    return data.upper()

        assert "cannot be used with @staticmethod" in str(exc_info.value)
        assert "@handler on instance methods" in str(exc_info.value)

    def test_executor_rejects_classmethod(self):
        """Test that @executor decorator properly rejects @classmethod with clear error."""
        with pytest.raises(ValueError) as exc_info:

            class Example:  # pyright: ignore[reportUnusedClass]
                @executor
                @classmethod
                async def bad_handler(cls, data: str) -> str:  # type: ignore[operator]
                    return data.upper()

        assert "cannot be used with @classmethod" in str(exc_info.value)
        assert "@handler on instance methods" in str(exc_info.value)

    async def test_async_staticmethod_detection_behavior(self):
        """Document the behavior of inspect.iscoroutinefunction with staticmethod descriptors.

        This test explains why the unwrapping is necessary when decorators are stacked.
        """
        import asyncio
        import inspect

        # When @staticmethod is applied, it creates a descriptor
        async def my_async_func():
            await asyncio.sleep(0.001)
            return "done"

        # Apply staticmethod (what happens with innermost decorator)
        static_wrapped = staticmethod(my_async_func)

        # Direct check on descriptor object fails (this is the bug)
        assert not inspect.iscoroutinefunction(static_wrapped)
        assert isinstance(static_wrapped, staticmethod)

        # But unwrapping __func__ reveals the async function
        unwrapped = static_wrapped.__func__
        assert inspect.iscoroutinefunction(unwrapped)

        # When accessed via class attribute, Python's descriptor protocol
        # automatically unwraps it, so it works:
        class C:
            async_static = static_wrapped

        assert inspect.iscoroutinefunction(C.async_static)  # Works via descriptor protocol


class TestExecutorExplicitTypes:
    """Test suite for @executor decorator with explicit input_type and output_type parameters."""





    def test_executor_with_explicit_union_output_type(self):
        """Test that explicit union output_type is normalized to a list."""

        @executor(output=str | int | bool)
        async def process(message: Any, ctx: WorkflowContext) -> None:
            pass

        # Output types should be a list with all union members
        assert set(process.output_types) == {str, int, bool}









    def test_executor_explicit_union_types_via_typing_union(self):
        """Test that Union[] syntax also works for explicit types."""
        from typing import Union

        @executor(input=Union[str, int], output=Union[bool, float])  # type: ignore[call-overload]
        async def process(message, ctx: WorkflowContext) -> None:  # type: ignore[no-untyped-def]
            pass

        # Can handle both str and int
        assert process.can_handle(WorkflowMessage(data="hello", source_id="mock"))
        assert process.can_handle(WorkflowMessage(data=42, source_id="mock"))

        # Output types should include both
        assert set(process.output_types) == {bool, float}


    def test_executor_with_string_forward_reference_union(self):
        """Test that string forward references work with union types."""

        @executor(input="FuncExecForwardRefTypeA | FuncExecForwardRefTypeB")
        async def process(message, ctx: WorkflowContext) -> None:  # type: ignore[no-untyped-def]
            pass

        # Should handle both types
        assert process.can_handle(WorkflowMessage(data=FuncExecForwardRefTypeA("hello"), source_id="mock"))
        assert process.can_handle(WorkflowMessage(data=FuncExecForwardRefTypeB(42), source_id="mock"))

    def test_executor_with_string_forward_reference_output_type(self):
        """Test that string forward references work for output_type."""

        @executor(input=str, output="FuncExecForwardRefResponse")
        async def process(message, ctx: WorkflowContext) -> None:  # type: ignore[no-untyped-def]
            pass

        # Should resolve the string output type
        assert FuncExecForwardRefResponse in process.output_types


    def test_executor_with_explicit_workflow_output_type_precedence(self):
        """Test that explicit workflow_output_type overrides introspected WorkflowContext second param."""

        @executor(workflow_output=str)
        async def process(message: int, ctx: WorkflowContext[int, bool]) -> None:
            pass

        # workflow_output_types should be str (explicit), not bool (introspected from ctx)
        assert str in process.workflow_output_types
        assert bool not in process.workflow_output_types


    def test_executor_with_union_workflow_output_type(self):
        """Test that union types work for workflow_output_type."""

        @executor(workflow_output=str | int)
        async def process(message: str, ctx: WorkflowContext) -> None:
            pass

        # Should include both types from union
        assert str in process.workflow_output_types
        assert int in process.workflow_output_types

    def test_executor_with_string_forward_reference_workflow_output_type(self):
        """Test that string forward references work for workflow_output_type."""

        @executor(input=str, workflow_output="FuncExecForwardRefResponse")
        async def process(message, ctx: WorkflowContext) -> None:  # type: ignore[no-untyped-def]
            pass

        # Should resolve the string workflow_output_type
        assert FuncExecForwardRefResponse in process.workflow_output_types

    def test_executor_with_string_forward_reference_union_workflow_output_type(self):
        """Test that string forward reference union types work for workflow_output_type."""

        @executor(input=str, workflow_output="FuncExecForwardRefTypeA | FuncExecForwardRefTypeB")
        async def process(message, ctx: WorkflowContext) -> None:  # type: ignore[no-untyped-def]
            pass

        # Should resolve both types from string union
        assert FuncExecForwardRefTypeA in process.workflow_output_types
        assert FuncExecForwardRefTypeB in process.workflow_output_types

    def test_executor_fallback_to_introspection_for_workflow_output_type(self):
        """Test that workflow_output_type falls back to introspection when not explicitly provided."""

        @executor
        async def process(message: str, ctx: WorkflowContext[int, bool]) -> None:
            pass

        # Should use introspected types from WorkflowContext[int, bool]
        assert int in process.output_types
        assert bool in process.workflow_output_types



# region Tests for unresolved TypeVar rejection in function executor registration

_FT = TypeVar("_FT")


class TestFunctionExecutorTypeVarRejection:
    """Tests that FunctionExecutor rejects unresolved TypeVar in message annotations."""

    def test_function_executor_rejects_unresolved_typevar(self):
        """Test that FunctionExecutor raises ValueError for unresolved TypeVar message annotation."""

        def echo(message: _FT) -> _FT:
            return message

        with pytest.raises(ValueError, match="unresolved TypeVar"):
            FunctionExecutor(echo, id="echo")

    def test_function_executor_rejects_typevar_with_context(self):
        """Test that FunctionExecutor raises ValueError for TypeVar even with WorkflowContext."""

        async def echo(message: _FT, ctx: WorkflowContext) -> None:
            pass

        with pytest.raises(ValueError, match="unresolved TypeVar"):
            FunctionExecutor(echo, id="echo")

    def test_function_executor_explicit_input_bypasses_typevar_check(self):
        """Test that explicit input= parameter bypasses TypeVar detection."""

        async def echo(message: _FT, ctx: WorkflowContext) -> None:
            pass

        exec_instance = FunctionExecutor(echo, id="echo", input=str, output=str)
        assert str in exec_instance.input_types

    def test_function_executor_allows_concrete_types(self):
        """Test that FunctionExecutor works normally with concrete type annotations."""

        async def handle(message: str, ctx: WorkflowContext[str]) -> None:
            pass

        exec_instance = FunctionExecutor(handle, id="concrete")
        assert str in exec_instance.input_types

    def test_function_executor_error_recommends_explicit_types(self):
        """Test that error message recommends @executor(input=..., output=...)."""

        def echo(message: _FT) -> _FT:
            return message

        with pytest.raises(ValueError, match=r"@executor\(input=<concrete_type>, output=<concrete_type>\)"):
            FunctionExecutor(echo, id="echo")


# endregion: Tests for unresolved TypeVar rejection in function executor registration


_FBT = TypeVar("_FBT", bound=str)


def test_function_executor_rejects_bounded_typevar_in_message_annotation():
    """Test that FunctionExecutor raises ValueError for a bounded TypeVar in message annotation."""

    async def process(message: _FBT, ctx: WorkflowContext) -> None:
        await ctx.send_message(message)  # type: ignore[arg-type]  # pyrefly: ignore[bad-argument-type]  # ty: ignore[invalid-argument-type]

    with pytest.raises(ValueError, match="unresolved TypeVar"):
        FunctionExecutor(process, id="bounded")
