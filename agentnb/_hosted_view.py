"""How provider-hosted tool runs and citations look, in HTML and in plain text, for every view.

The notebook and the DevUI both show what a provider ran for the model (code and its output, searches,
generated images, remote MCP calls, shell commands) and the sources its answer cites. Everything here comes
from the model's provider, so every value is escaped; images are shown only from raster bytes we encode
ourselves, and links only for http(s) URLs.
"""

from __future__ import annotations

import base64
from collections.abc import Sequence
from typing import Any

from . import _html as h
from ._types import Content

__all__ = ["HOSTED_TYPES", "citations_html", "citations_text", "hosted_content_html", "hosted_content_text"]

HOSTED_TYPES = frozenset(
    {
        "hosted_file",
        "hosted_vector_store",
        "code_interpreter_tool_call",
        "code_interpreter_tool_result",
        "image_generation_tool_call",
        "image_generation_tool_result",
        "mcp_server_tool_call",
        "mcp_server_tool_result",
        "search_tool_call",
        "search_tool_result",
        "shell_tool_call",
        "shell_tool_result",
        "shell_command_output",
    }
)
_RASTER_IMAGES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})


def _link(url: str, label: str | None = None) -> str:
    """A link for http(s) URLs; any other scheme (``javascript:``, ``data:``) is shown as text."""
    text = h.escape(label or url)
    if url.lower().startswith(("http://", "https://")):
        return f'<a href="{h.escape(url)}" rel="noopener noreferrer nofollow" target="_blank">{text}</a>'
    return f"<span>{text}</span>"


def _output_html(content: Content) -> str:
    if content.type == "text":
        return f"<pre>{h.escape(h.shorten(content.text or '', 20_000))}</pre>"
    if content.type == "data" and content.data:
        media = content.media_type or ""
        if media in _RASTER_IMAGES:
            b64 = base64.b64encode(content.data).decode("ascii")
            return f'<img alt="generated image" style="max-width:320px" src="data:{media};base64,{b64}">'
        return f"<span class='anb-muted'>[{h.escape(media or 'data')}, {len(content.data)} bytes]</span>"
    if content.type == "uri" and content.uri:
        return f"<div>{_link(content.uri, h.shorten(content.uri, 80))}</div>"
    if content.type == "shell_command_output":
        return _command_output_html(content)
    return f"<span class='anb-muted'>{h.escape(content.type)}</span>"


def _outputs_html(outputs: Any) -> str:
    if isinstance(outputs, Content):
        return _output_html(outputs)
    if isinstance(outputs, Sequence) and not isinstance(outputs, str):
        items: Sequence[Any] = outputs  # pyright: ignore[reportUnknownVariableType]
        return "".join(_output_html(o) for o in items if isinstance(o, Content))
    return h.json_html(outputs) if outputs is not None else ""


def _command_output_html(content: Content) -> str:
    if content.timed_out:
        status = h.badge("timed out", "err")
    else:
        status = h.badge(f"exit {content.exit_code}", "ok" if content.exit_code == 0 else "err")
    body = f"<div>{status}</div>"
    if content.stdout:
        body += f"<pre>{h.escape(h.shorten(content.stdout, 20_000))}</pre>"
    if content.stderr:
        body += f"<pre class='anb-error'>{h.escape(h.shorten(content.stderr, 20_000))}</pre>"
    return body


def _status(content: Content) -> str:
    status = content.status
    if not status or status == "completed":
        return ""
    return " " + h.badge(status, "err" if status in ("failed", "incomplete") else "info")


def hosted_content_html(content: Content) -> str | None:
    """Safe HTML for a hosted tool's call or result; ``None`` when ``content`` is not one."""
    kind = content.type
    if kind not in HOSTED_TYPES:
        return None
    if kind == "code_interpreter_tool_call":
        code = "\n".join(c.text or "" for c in content.inputs or () if c.type == "text")
        return h.details("🐍 code interpreter ran", f"<pre>{h.escape(h.shorten(code, 20_000))}</pre>", open=True)
    if kind == "code_interpreter_tool_result":
        body = _outputs_html(content.outputs) or "<span class='anb-muted'>no output</span>"
        return h.details(f"↩ code interpreter output{_status(content)}", body, open=True)
    if kind == "search_tool_call":
        name = content.tool_name or "search"
        return h.details(f"🔎 {h.escape(name)}{_status(content)}", h.json_html(content.arguments))
    if kind == "search_tool_result":
        return h.details(f"↩ {h.escape(content.tool_name or 'search')} results", h.json_html(content.result))
    if kind == "image_generation_tool_call":
        return f"<div class='anb-muted'>🖼 generating an image{_status(content)}</div>"
    if kind == "image_generation_tool_result":
        prompt = content.additional_properties.get("revised_prompt")
        caption = f"<div class='anb-muted'>{h.escape(prompt)}</div>" if prompt else ""
        return f"<div>{_outputs_html(content.outputs)}{caption}</div>"
    if kind == "mcp_server_tool_call":
        server = f" on {h.escape(content.server_name)}" if content.server_name else ""
        summary = f"🔌 <code>{h.escape(content.tool_name or '?')}</code>{server} (hosted MCP)"
        return h.details(summary, h.json_html(content.arguments))
    if kind == "mcp_server_tool_result":
        return h.details(f"↩ hosted MCP result{_status(content)}", _outputs_html(content.output))
    if kind == "shell_tool_call":
        commands = "\n".join(f"$ {c}" for c in content.commands or ())
        return h.details(f"🖥 shell{_status(content)}", f"<pre>{h.escape(commands)}</pre>", open=True)
    if kind == "shell_tool_result":
        return h.details("↩ shell output", _outputs_html(content.outputs), open=True)
    if kind == "shell_command_output":
        return _command_output_html(content)
    if kind == "hosted_file":
        return f"<span class='anb-muted'>📎 file {h.escape(content.name or content.file_id)}</span>"
    return f"<span class='anb-muted'>🗂 vector store {h.escape(content.vector_store_id)}</span>"


def hosted_content_text(content: Content) -> str | None:
    """One line of plain text for a hosted tool's call or result; ``None`` when ``content`` is not one."""
    kind = content.type
    if kind not in HOSTED_TYPES:
        return None
    if kind == "code_interpreter_tool_call":
        code = "\n".join(c.text or "" for c in content.inputs or () if c.type == "text")
        return f"(code interpreter) {h.shorten(code, 120)}"
    if kind in ("code_interpreter_tool_result", "shell_tool_result"):
        outputs: Any = content.outputs
        items: list[Any] = [outputs] if isinstance(outputs, Content) else list(outputs or ())
        # A data output's URI would be its base64 bytes: only a real link is worth showing.
        texts = [o.text or o.stdout or (o.uri if o.type == "uri" else "") for o in items if isinstance(o, Content)]
        return f"-> {h.shorten(' | '.join(t.strip() for t in texts if t), 200)}"
    if kind == "search_tool_call":
        return f"({content.tool_name or 'search'}) {content.arguments}"
    if kind == "mcp_server_tool_call":
        return f"(hosted MCP {content.server_name or ''}) {content.tool_name}({content.arguments or ''})"
    if kind == "mcp_server_tool_result":
        output: Any = content.output
        parts: list[Any] = list(output) if isinstance(output, list) else [output]  # pyright: ignore[reportUnknownArgumentType]
        return "-> " + h.shorten(" ".join(str(getattr(o, "text", o)) for o in parts), 200)
    if kind == "image_generation_tool_result":
        return "[generated image]"
    if kind == "shell_tool_call":
        return "$ " + " && ".join(content.commands or ())
    if kind == "hosted_file":
        return f"[file {content.name or content.file_id}]"
    return ""


def citations_html(contents: Sequence[Content]) -> str:
    """A numbered list of the sources the given text contents cite (empty when none do)."""
    rows: list[str] = []
    seen: set[tuple[str, str]] = set()
    for content in contents:
        for annotation in content.annotations or ():
            url, file_id = annotation.get("url") or "", annotation.get("file_id") or ""
            if (url, file_id) in seen:
                continue
            seen.add((url, file_id))
            title = annotation.get("title") or url or file_id
            source = _link(url, title) if url else f"<span>📎 {h.escape(title)}</span>"
            rows.append(f"<li>{source}</li>")
    if not rows:
        return ""
    return f"<div class='anb-muted'>sources</div><ol class='anb-citations'>{''.join(rows)}</ol>"


def citations_text(contents: Sequence[Content]) -> str:
    """The cited sources as plain text lines (``[1] title <url>``)."""
    lines: list[str] = []
    for content in contents:
        for annotation in content.annotations or ():
            where = annotation.get("url") or annotation.get("file_id") or ""
            lines.append(f"[{len(lines) + 1}] {annotation.get('title') or where} <{where}>")
    return "\n".join(lines)
