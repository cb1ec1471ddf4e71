"""Helpers over chat options, for providers and for code written against the reference's utilities.

The function loop and the clients read options as a plain dict (:class:`~agentnb.ChatOptions`); these
helpers validate, merge and normalize such dicts the way the reference's providers do before sending them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal, TypeAlias, TypedDict, cast

from ._json import is_list_or_tuple
from ._tools import FunctionTool, SupportsToolExpansion, resolve_tools, to_tool
from ._types import Message

__all__ = [
    "ToolMode",
    "ToolTypes",
    "merge_chat_options",
    "normalize_tools",
    "prepend_instructions_to_messages",
    "validate_chat_options",
    "validate_tool_mode",
    "validate_tools",
]

_MODES = ("auto", "required", "none")

ToolTypes: TypeAlias = FunctionTool | SupportsToolExpansion | Callable[..., Any] | Mapping[str, Any]
"""What ``tools=`` takes: function tools, plain functions, tool providers (MCP servers) and provider tool specs."""


class ToolMode(TypedDict, total=False):
    """``tool_choice`` as a dict: the mode, and for ``"required"`` optionally the one function to call.

    Example:
        >>> validate_tool_mode("required")
        {'mode': 'required'}
    """

    mode: Literal["auto", "required", "none"]
    required_function_name: str
    allowed_tools: list[str]


def validate_tool_mode(tool_choice: ToolMode | Literal["auto", "required", "none"] | None) -> ToolMode | None:
    """``tool_choice`` as a :class:`ToolMode` dict; raises ``ValueError`` for a mode or field that cannot be."""
    if tool_choice is None:
        return None
    if isinstance(tool_choice, str):
        if tool_choice not in _MODES:
            raise ValueError(f"Invalid tool choice {tool_choice!r}; use one of {_MODES}.")
        return ToolMode(mode=tool_choice)
    mode = tool_choice.get("mode")
    if mode not in _MODES:
        raise ValueError(f"tool_choice needs a 'mode' of {_MODES}, got {mode!r}.")
    if mode != "required" and "required_function_name" in tool_choice:
        raise ValueError("tool_choice with mode other than 'required' cannot have 'required_function_name'.")
    if "allowed_tools" in tool_choice:
        allowed: object = cast("object", tool_choice["allowed_tools"])
        if mode == "none":
            raise ValueError("tool_choice 'allowed_tools' is only valid when mode is 'auto' or 'required'.")
        if isinstance(allowed, str) or not isinstance(allowed, Sequence):
            raise ValueError("tool_choice 'allowed_tools' must be a list of tool names.")
        names = list(cast("Sequence[object]", allowed))
        if not all(isinstance(name, str) for name in names):
            raise ValueError("tool_choice 'allowed_tools' must contain only strings.")
        return cast(ToolMode, {**tool_choice, "allowed_tools": names})
    return tool_choice


def normalize_tools(tools: Any) -> list[Any]:
    """A tool, function or sequence of them as a list: functions become ``FunctionTool``; tool providers
    (MCP servers) and tools of other kinds are kept as they are (``validate_tools`` expands providers).

    A tool collection is spread into the list: an iterable that is not a tool, or a mapping that exposes its
    tools as ``.tools`` (a provider's toolbox object).
    """
    if tools is None:
        return []
    items: Sequence[Any] = tools if is_list_or_tuple(tools) else [tools]
    out: list[Any] = []
    for item in items:
        if isinstance(item, (FunctionTool, SupportsToolExpansion)):
            out.append(item)
        elif callable(item) or hasattr(item, "as_tool"):
            out.append(to_tool(item))  # functions, and agents used as tools
        elif isinstance(item, Mapping):
            bundled: object = getattr(cast(object, item), "tools", None)
            if isinstance(bundled, Iterable) and not isinstance(bundled, (str, bytes, Mapping)):
                out.extend(normalize_tools(list(cast("Iterable[Any]", bundled))))
            else:
                out.append(item)  # a hosted tool's definition
        elif isinstance(item, Iterable) and not isinstance(item, (str, bytes, bytearray)):
            out.extend(normalize_tools(list(cast("Iterable[Any]", item))))
        else:
            out.append(item)
    return out


async def validate_tools(tools: Any) -> list[FunctionTool]:
    """Tools as the model will see them: functions wrapped, MCP servers connected and expanded, names unique."""
    return await resolve_tools(tools)


async def validate_chat_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``options`` with the numeric ranges checked and the tools validated.

    Raises:
        ValueError: A value out of its range (``temperature`` 0-2, ``top_p`` 0-1, penalties -2-2,
            ``max_tokens`` > 0).
    """
    result = dict(options)
    ranges = {"frequency_penalty": (-2.0, 2.0), "presence_penalty": (-2.0, 2.0), "temperature": (0.0, 2.0)}
    ranges["top_p"] = (0.0, 1.0)
    for key, (low, high) in ranges.items():
        value = result.get(key)
        if value is None:
            continue
        if not low <= value <= high:
            raise ValueError(f"{key} must be between {low} and {high}, got {value!r}")
        result[key] = float(value)
    max_tokens = result.get("max_tokens")
    if max_tokens is not None and max_tokens <= 0:
        raise ValueError(f"max_tokens must be greater than 0, got {max_tokens!r}")
    if "tools" in result:
        result["tools"] = await validate_tools(result["tools"])
    return result


def merge_chat_options(base: Mapping[str, Any] | None, override: Mapping[str, Any] | None) -> dict[str, Any]:
    """``override`` laid over ``base``: instructions joined by a newline, tools and dicts combined, ``None`` skipped.

    Example:
        >>> merge_chat_options({"temperature": 0.5, "instructions": "Be brief."}, {"instructions": "Use French."})
        {'temperature': 0.5, 'instructions': 'Be brief.\\nUse French.'}
    """
    result: dict[str, Any] = {
        k: dict(cast("Mapping[Any, Any]", v))
        if isinstance(v, dict)
        else list(cast("list[Any]", v))
        if isinstance(v, list)
        else v
        for k, v in (base or {}).items()
    }
    for key, value in (override or {}).items():
        if value is None:
            continue
        current = result.get(key)
        if key == "instructions" and current:
            result[key] = f"{current}\n{value}"
        elif key == "tools" and current:
            merged = list(current) if is_list_or_tuple(current) else [current]
            merged += [t for t in (value if is_list_or_tuple(value) else [value]) if t not in merged]
            result[key] = merged
        elif key in ("logit_bias", "metadata", "additional_properties") and isinstance(current, dict):
            result[key] = {**cast("dict[Any, Any]", current), **cast("Mapping[Any, Any]", value)}
        elif key == "tools":
            result[key] = list(value) if is_list_or_tuple(value) else [value]
        else:
            result[key] = value
    return result


def prepend_instructions_to_messages(
    messages: list[Message], instructions: str | Sequence[str] | None, role: str = "system"
) -> list[Message]:
    """``messages`` with the instructions in front as messages of ``role``, skipping those already there."""
    if instructions is None:
        return messages
    texts = [instructions] if isinstance(instructions, str) else list(instructions)
    missing = [
        text
        for i, text in enumerate(texts)
        if not (i < len(messages) and messages[i].role == role and messages[i].text == text)
    ]
    if not missing:
        return messages
    return [*(Message(role, [text]) for text in missing), *messages]  # pyright: ignore[reportArgumentType]
