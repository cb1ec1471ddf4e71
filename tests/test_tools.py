from __future__ import annotations

import dataclasses
import enum
import json
from typing import Annotated, Literal

import pytest
from pydantic import BaseModel, Field

from agentnb import FunctionInvocationContext, FunctionTool, tool
from agentnb._tools import resolve_tools, result_to_text
from agentnb.exceptions import ToolError, ToolSchemaError


class Unit(enum.Enum):
    C = "celsius"
    F = "fahrenheit"


class Address(BaseModel):
    street: str
    zip_code: str = Field(description="Postal code")


@dataclasses.dataclass
class Window:
    start: int
    end: int


def test_schema_from_type_hints() -> None:
    @tool
    def forecast(
        city: Annotated[str, "The city"],
        days: Annotated[int, Field(ge=1, le=7, description="How many days")] = 3,
        unit: Unit = Unit.C,
        mode: Literal["brief", "full"] = "brief",
        tags: list[str] | None = None,
        extra: dict[str, int] | None = None,
        address: Address | None = None,
        window: Window | None = None,
        ctx: FunctionInvocationContext | None = None,
    ) -> str:
        """Forecast the weather."""
        return city

    schema = forecast.parameters()
    props = schema["properties"]
    assert forecast.description == "Forecast the weather."
    assert schema["required"] == ["city"]
    assert props["city"] == {"description": "The city", "title": "City", "type": "string"}
    assert props["days"]["minimum"] == 1 and props["days"]["maximum"] == 7
    assert props["mode"]["enum"] == ["brief", "full"]
    assert "ctx" not in props  # the invocation context is hidden from the model
    assert set(schema["$defs"]) >= {"Unit", "Address", "Window"}
    spec = forecast.to_json_schema_spec()
    assert spec["function"]["name"] == "forecast"


async def test_arguments_are_validated_and_coerced_before_the_call() -> None:
    seen: list[object] = []

    @tool
    def book(address: Address, nights: int) -> str:
        seen.append(address)
        return f"{address.street} x{nights}"

    assert (
        await book.invoke(arguments={"address": {"street": "Main", "zip_code": "1"}, "nights": "2"}, skip_parsing=True)
        == "Main x2"
    )
    assert isinstance(seen[0], Address)
    with pytest.raises(ValueError, match=r"Invalid arguments for tool 'book': nights: Input should be a valid integer"):
        await book.invoke(arguments={"address": {"street": "x", "zip_code": "1"}, "nights": "many"}, skip_parsing=True)
    with pytest.raises(ValueError, match="address: Field required"):
        await book.invoke(arguments={"nights": 1}, skip_parsing=True)
    assert len(seen) == 1


async def test_async_tools_and_context_injection() -> None:
    @tool(name="lookup", description="Look it up", approval_mode="always_require")
    async def fetch(key: str, context: FunctionInvocationContext) -> str:
        return f"{key}:{context.call_id}"

    assert fetch.name == "lookup" and fetch.approval_mode == "always_require"
    ctx = FunctionInvocationContext(function=fetch, arguments={"key": "k"}, call_id="c9")
    assert await fetch.invoke(arguments={"key": "k"}, context=ctx, skip_parsing=True) == "k:c9"


async def test_max_invocations_is_enforced() -> None:
    @tool(max_invocations=2)
    def ping() -> str:
        return "pong"

    await ping.invoke(skip_parsing=True)
    await ping.invoke(skip_parsing=True)
    with pytest.raises(ToolError, match="limit of 2 invocation"):
        await ping.invoke(skip_parsing=True)
    assert ping.invocation_count == 2


def test_bad_configuration_fails_fast() -> None:
    with pytest.raises(ValueError, match="approval_mode must be one of"):
        FunctionTool(lambda: None, approval_mode="sometimes")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="max_invocations must be >= 1"):
        FunctionTool(lambda: None, max_invocations=0)

    class Opaque:
        pass

    def takes_opaque(x: Opaque) -> None: ...

    with pytest.raises(ToolSchemaError, match="takes_opaque"):
        FunctionTool(takes_opaque).parameters()


async def test_schema_only_tools_check_required_arguments_and_cannot_run() -> None:
    declared = FunctionTool(
        name="remote", input_model={"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    )
    assert declared.parameters()["required"] == ["q"]
    with pytest.raises(ValueError, match="Missing required argument"):
        declared.validate_arguments({})
    with pytest.raises(ToolError, match="declaration only"):
        await declared.invoke(arguments={"q": "x"}, skip_parsing=True)


async def test_resolve_tools_wraps_functions_and_refuses_duplicates() -> None:
    def a() -> None: ...

    tools = await resolve_tools([a, tool(a, name="b")] if False else [a])
    assert [t.name for t in tools] == ["a"]
    with pytest.raises(ValueError, match="registered twice"):
        await resolve_tools([a, FunctionTool(a)])
    with pytest.raises(TypeError, match="Cannot use 42 as a tool"):
        await resolve_tools([42])

    class Provider:
        async def get_tools(self) -> list[FunctionTool]:
            return [FunctionTool(a, name="from_provider")]

    assert [t.name for t in await resolve_tools([Provider()])] == ["from_provider"]


def test_result_to_text() -> None:
    assert result_to_text("x") == "x"
    assert result_to_text(None) == ""
    assert result_to_text({"a": 1}) == '{"a": 1}'
    assert result_to_text(Address(street="s", zip_code="z")) == '{"street":"s","zip_code":"z"}'
    assert result_to_text(Window(1, 2)) == '{"start": 1, "end": 2}'


def test_tool_is_still_callable_directly() -> None:
    @tool
    def double(x: int) -> int:
        return 2 * x

    assert double(4) == 8


async def test_a_tool_definition_round_trips_through_dict_and_json_with_the_function_injected() -> None:
    @tool(max_invocations=3, approval_mode="always_require")
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    data = add.to_dict()
    assert data["type"] == "function_tool" and data["input_model"]["required"] == ["a", "b"]
    assert (data["name"], data["description"], data["max_invocations"]) == ("add", "Add two numbers.", 3)
    assert "func" not in data and json.loads(add.to_json()) == data

    declared = FunctionTool.from_dict(data)  # no function: a declaration for the caller to execute
    assert declared.func is None and declared.to_dict() == data
    for deps in ({"function_tool": {"func": add.func}}, {"function_tool": {"name:add": {"func": add.func}}}):
        rebuilt = FunctionTool.from_json(add.to_json(), dependencies=deps)
        assert rebuilt.approval_mode == "always_require" and rebuilt.max_invocations == 3
        assert await rebuilt.invoke(arguments={"a": 2, "b": 3}, skip_parsing=True) == 5
    other = FunctionTool.from_dict(data, dependencies={"function_tool": {"name:sub": {"func": add.func}}})
    assert other.func is None  # an instance-specific dependency for another tool is not applied


def test_from_dict_refuses_another_type_and_unknown_keys() -> None:
    with pytest.raises(ValueError, match="expected 'function_tool', got 'mcp_tool'"):
        FunctionTool.from_dict({"type": "mcp_tool", "name": "x"})
    with pytest.raises(ValueError, match=r"unknown keys \['colour'\]"):
        FunctionTool.from_dict({"name": "x", "colour": "red"})
    # What the reference writes about a tool's past is accepted and dropped.
    assert FunctionTool.from_dict({"name": "x", "invocation_count": 4, "kind": None}).invocation_count == 0


async def test_invoke_gives_contents_and_the_raw_value_on_request() -> None:
    import threading

    from agentnb import SKIP_PARSING, Content

    threads: list[int] = []

    @tool
    def weather(city: str) -> dict[str, object]:
        threads.append(threading.get_ident())
        return {"city": city, "temp": 21}

    parsed = await weather.invoke(city="Oslo")  # a parameter may be passed as a keyword
    assert [c.text for c in parsed] == ['{"city": "Oslo", "temp": 21}'] and isinstance(parsed[0], Content)
    assert await weather.invoke(arguments={"city": "Oslo"}, skip_parsing=True) == {"city": "Oslo", "temp": 21}
    # invoke() keeps a sync function off the event loop; the function loop's invoke_raw() runs it on the loop.
    assert await weather.invoke_raw(arguments={"city": "Oslo"}) == {"city": "Oslo", "temp": 21}
    assert threads[0] != threading.get_ident() and threads[-1] == threading.get_ident()

    shouting = FunctionTool(lambda city: city.upper(), name="shout", result_parser=lambda value: f"<{value}>")
    assert [c.text for c in await shouting.invoke(arguments={"city": "oslo"})] == ["<OSLO>"]
    raw = FunctionTool(lambda: [1, 2], name="raw", result_parser=SKIP_PARSING)
    assert await raw.invoke() == [1, 2]


async def test_invoke_takes_runtime_values_only_through_the_context() -> None:
    @tool
    def greet(name: str, **kwargs: object) -> str:
        return f"{name} for {kwargs.get('user', 'nobody')}"

    with pytest.raises(TypeError, match="Unexpected keyword argument"):
        await greet.invoke(arguments={"name": "a"}, user="u1")
    context = FunctionInvocationContext(function=greet, arguments={"name": "a"}, kwargs={"user": "u1"})
    assert await greet.invoke_raw(context=context) == "a for u1"  # **kwargs still receives the run's values
    with pytest.raises(TypeError, match="Invalid arguments"):  # a ToolArgumentsError is a TypeError too
        await greet.invoke(arguments={"name": 3.5j})


async def test_a_tool_defined_in_a_class_is_bound_to_its_instance() -> None:
    class Counter:
        def __init__(self) -> None:
            self.total = 0

        @tool
        def add(self, amount: int) -> int:
            """Add to the total."""
            self.total += amount
            return self.total

    counter = Counter()
    assert "self" not in counter.add.parameters()["properties"]
    assert await counter.add.invoke_raw(arguments={"amount": 2}) == 2
    assert counter.add(3) == 5 and counter.total == 5
