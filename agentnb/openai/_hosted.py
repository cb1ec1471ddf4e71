"""Hosted tools of the Responses API: their declarations, and their output items as typed contents.

The provider runs these tools (code interpreter, web and file search, image generation, remote MCP, shell);
agentnb only declares them and reads back what they did, so the notebook and the DevUI can show it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal, cast

from .._annotations import Annotation, TextSpanRegion
from .._json import is_json_object
from .._media import detect_media_type_from_base64
from .._tools import FunctionTool
from .._types import Content

__all__ = ["HostedToolFactories", "hosted_item_contents", "openai_annotation"]


def _get(obj: Any, name: str) -> Any:
    """A field of an SDK object or of its dict form (stream events carry some parts as plain dicts)."""
    if is_json_object(obj):
        return obj.get(name)
    return getattr(obj, name, None)


def _dump(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    return dump(mode="json", exclude_none=True) if callable(dump) else value


class HostedToolFactories:
    """The Responses API's hosted-tool declarations, as static methods of the client (the reference's names)."""

    @staticmethod
    def get_code_interpreter_tool(
        *, file_ids: list[str] | None = None, container: Literal["auto"] | dict[str, Any] = "auto"
    ) -> dict[str, Any]:
        """Code interpreter: the model runs Python in an OpenAI container (``file_ids`` are mounted in it)."""
        config: dict[str, Any] = dict(container) if isinstance(container, dict) else {"type": "auto"}
        if file_ids:
            config["file_ids"] = list(file_ids)
        return {"type": "code_interpreter", "container": config}

    @staticmethod
    def get_web_search_tool(
        *,
        user_location: dict[str, str] | None = None,
        search_context_size: Literal["low", "medium", "high"] | None = None,
        filters: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Web search: answers come back with ``url_citation`` annotations on their text."""
        tool: dict[str, Any] = {"type": "web_search"}
        if user_location:
            tool["user_location"] = {
                "type": "approximate",
                **{k: user_location.get(k) for k in ("city", "country", "region", "timezone")},
            }
        if search_context_size:
            tool["search_context_size"] = search_context_size
        if filters:
            tool["filters"] = dict(filters)
        return tool

    @staticmethod
    def get_image_generation_tool(
        *,
        size: Literal["1024x1024", "1024x1536", "1536x1024", "auto"] | None = None,
        output_format: Literal["png", "jpeg", "webp"] | None = None,
        model: str | None = None,
        quality: Literal["low", "medium", "high", "auto"] | None = None,
        partial_images: int | None = None,
        background: Literal["transparent", "opaque", "auto"] | None = None,
        moderation: Literal["auto", "low"] | None = None,
        output_compression: int | None = None,
    ) -> dict[str, Any]:
        """Image generation: the image comes back as an ``image_generation_tool_result`` content."""
        settings = {
            "size": size,
            "output_format": output_format,
            "model": model,
            "quality": quality,
            "partial_images": partial_images,
            "background": background,
            "moderation": moderation,
            "output_compression": output_compression,
        }
        return {"type": "image_generation", **{k: v for k, v in settings.items() if v is not None}}

    @staticmethod
    def get_shell_tool(
        *,
        func: Callable[..., Any] | FunctionTool | None = None,
        environment: Literal["auto"] | dict[str, Any] | None = "auto",
        name: str | None = None,
        description: str | None = None,
        approval_mode: Literal["always_require", "never_require"] | None = None,
    ) -> Any:
        """A shell: hosted in an OpenAI container by default; with ``func``, a local tool agentnb runs.

        The local form is an ordinary function tool (declared to the model as a function), so approval,
        middleware and tracing apply to it as to any other tool.
        """
        if func is None:
            env: dict[str, Any] = dict(environment) if isinstance(environment, dict) else {"type": "container_auto"}
            if env.get("type") == "local":
                raise ValueError("A local shell needs func=...: agentnb runs local commands only through a function.")
            return {"type": "shell", "environment": env}
        if isinstance(environment, dict):
            raise ValueError("environment= configures the hosted shell; leave it out when passing func=.")
        if isinstance(func, FunctionTool):
            shell = func
            if name is not None:
                shell.name = name
            if description is not None:
                shell.description = description
            if approval_mode is not None:
                shell.approval_mode = approval_mode
        else:
            shell = FunctionTool(
                func, name=name, description=description, approval_mode=approval_mode or "never_require"
            )
        if shell.func is None:
            raise ValueError(f"Shell tool {shell.name!r} has no function to run.")
        return shell

    @staticmethod
    def get_mcp_tool(
        *,
        name: str,
        url: str,
        description: str | None = None,
        approval_mode: Literal["always_require", "never_require"] | dict[str, list[str]] | None = None,
        allowed_tools: list[str] | None = None,
        headers: dict[str, str] | None = None,
    ) -> dict[str, Any]:
        """A remote MCP server that OpenAI calls itself (for a server agentnb calls, use ``agentnb.mcp``)."""
        tool: dict[str, Any] = {"type": "mcp", "server_label": name.replace(" ", "_"), "server_url": url}
        if description:
            tool["server_description"] = description
        if headers:
            tool["headers"] = dict(headers)
        if allowed_tools:
            tool["allowed_tools"] = list(allowed_tools)
        if isinstance(approval_mode, str):
            tool["require_approval"] = "always" if approval_mode == "always_require" else "never"
        elif approval_mode:
            if always := approval_mode.get("always_require_approval"):
                tool["require_approval"] = {"always": {"tool_names": list(always)}}
            if never := approval_mode.get("never_require_approval"):
                tool["require_approval"] = {"never": {"tool_names": list(never)}}
        return tool

    @staticmethod
    def get_file_search_tool(*, vector_store_ids: list[str], max_num_results: int | None = None) -> dict[str, Any]:
        """File search over the given vector stores; answers cite files with ``file_citation`` annotations."""
        tool: dict[str, Any] = {"type": "file_search", "vector_store_ids": list(vector_store_ids)}
        if max_num_results is not None:
            tool["max_num_results"] = max_num_results
        return tool


def _span(raw: Any) -> list[TextSpanRegion]:
    start, end = _get(raw, "start_index"), _get(raw, "end_index")
    if start is None or end is None:
        return []
    return [TextSpanRegion(type="text_span", start_index=int(start), end_index=int(end))]


def openai_annotation(raw: Any) -> Annotation | None:
    """One ``output_text`` annotation as an :class:`Annotation` citation (``None`` for kinds agentnb does not know)."""
    kind = _get(raw, "type")
    if kind == "url_citation":
        return Annotation(
            type="citation", title=_get(raw, "title") or "", url=_get(raw, "url") or "", annotated_regions=_span(raw)
        )
    if kind in ("file_citation", "file_path"):
        annotation = Annotation(type="citation", file_id=_get(raw, "file_id") or "")
        if filename := _get(raw, "filename"):
            annotation["title"] = filename
        if (index := _get(raw, "index")) is not None:
            annotation["additional_properties"] = {"index": index}
        return annotation
    if kind == "container_file_citation":
        return Annotation(
            type="citation",
            file_id=_get(raw, "file_id") or "",
            title=_get(raw, "filename") or "",
            annotated_regions=_span(raw),
            additional_properties={"container_id": _get(raw, "container_id")},
        )
    return None


def _code_outputs(item: Any) -> list[Content]:
    outputs: list[Content] = []
    for output in _get(item, "outputs") or ():
        kind = _get(output, "type")
        if kind == "logs":
            outputs.append(Content.from_text(_get(output, "logs") or ""))
        elif kind == "image" and (url := _get(output, "url")):
            outputs.append(Content.from_uri(url, "image/png" if url.startswith("data:") else None))
    return outputs


def _shell_outputs(item: Any) -> list[Content]:
    contents: list[Content] = []
    for output in _get(item, "output") or ():
        outcome = _get(output, "outcome")
        timed_out = _get(outcome, "type") == "timeout"
        contents.append(
            Content.from_shell_command_output(
                stdout=_get(output, "stdout"),
                stderr=_get(output, "stderr"),
                exit_code=None if timed_out else _get(outcome, "exit_code"),
                timed_out=timed_out,
            )
        )
    return contents


def hosted_item_contents(item: Any) -> list[Content] | None:
    """A hosted tool's output item as contents (the call, then its result); ``None`` if it is not one."""
    kind = _get(item, "type")
    item_id = _get(item, "id") or ""
    if kind == "code_interpreter_call":
        code = _get(item, "code")
        call_id = _get(item, "call_id") or item_id
        call = Content.from_code_interpreter_tool_call(
            call_id=call_id,
            inputs=[Content.from_text(code)] if code else [],
            additional_properties={"container_id": _get(item, "container_id")},
            raw_representation=item,
        )
        result = Content.from_code_interpreter_tool_result(
            call_id=call_id, outputs=_code_outputs(item), status=_get(item, "status"), raw_representation=item
        )
        return [call, result]
    if kind in ("web_search_call", "file_search_call"):
        tool_name = "web_search" if kind == "web_search_call" else "file_search"
        if kind == "web_search_call":
            arguments = _dump(_get(item, "action"))
            found: Any = {"action": arguments}
        else:
            arguments = {"queries": list(_get(item, "queries") or ())}
            found = {"results": [_dump(r) for r in _get(item, "results") or ()]}
        status = _get(item, "status")
        return [
            Content.from_search_tool_call(
                item_id,
                tool_name=tool_name,
                arguments=dict(arguments) if is_json_object(arguments) else None,
                status=status,
                raw_representation=item,
            ),
            Content.from_search_tool_result(
                item_id, tool_name=tool_name, result=found, status=status, raw_representation=item
            ),
        ]
    if kind == "image_generation_call":
        image = _get(item, "result")
        output = None
        if image:
            media_type = detect_media_type_from_base64(data_str=image) or "image/png"
            output = Content.from_uri(f"data:{media_type};base64,{image}")
        return [
            Content.from_image_generation_tool_call(image_id=item_id, raw_representation=item),
            Content.from_image_generation_tool_result(
                image_id=item_id,
                outputs=output,
                status=_get(item, "status"),
                additional_properties={"revised_prompt": p} if (p := _get(item, "revised_prompt")) else None,
                raw_representation=item,
            ),
        ]
    if kind == "mcp_call":
        contents = [
            Content.from_mcp_server_tool_call(
                item_id,
                _get(item, "name") or "",
                server_name=_get(item, "server_label"),
                arguments=_get(item, "arguments"),
                raw_representation=item,
            )
        ]
        output, error = _get(item, "output"), _get(item, "error")
        if output is not None or error is not None:
            text = output if output is not None else (_get(error, "message") or json.dumps(_dump(error)))
            contents.append(
                Content.from_mcp_server_tool_result(
                    item_id,
                    output=[Content.from_text(text)],
                    status="failed" if error is not None else _get(item, "status"),
                    raw_representation=item,
                )
            )
        return contents
    if kind == "shell_call":
        action = _get(item, "action")
        return [
            Content.from_shell_tool_call(
                call_id=_get(item, "call_id") or item_id,
                commands=list(cast("list[str]", _get(action, "commands") or [])),
                status=_get(item, "status"),
                raw_representation=item,
            )
        ]
    if kind == "shell_call_output":
        return [
            Content.from_shell_tool_result(
                call_id=_get(item, "call_id") or item_id, outputs=_shell_outputs(item), raw_representation=item
            )
        ]
    return None
