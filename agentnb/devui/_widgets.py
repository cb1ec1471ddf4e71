"""Small Panel building blocks shared by the DevUI views: safe HTML panes, error cards, JSON text."""

from __future__ import annotations

import dataclasses
import enum
import json
import traceback
from typing import Any

import panel as pn

from agentnb._html import STYLE, escape, json_html, render_markdown

__all__ = [
    "DEVUI_CSS",
    "error_card",
    "html_pane",
    "json_html",
    "jsonable",
    "markdown_pane",
    "pretty_json",
    "readable",
    "set_html",
]

# Panel renders each pane in its own shadow root, so the shared stylesheet is attached per pane.
DEVUI_CSS = (
    STYLE
    + """
.agentnb{max-width:none}
.anb-card-tool .card-title{font-size:13px}
"""
)


def html_pane(safe_html: str, **params: Any) -> pn.pane.HTML:
    """Return an HTML pane for markup that is already safe (built from escaped or sanitized parts)."""
    if "width" not in params:
        params.setdefault("sizing_mode", "stretch_width")
    return pn.pane.HTML(f'<div class="agentnb">{safe_html}</div>', stylesheets=[DEVUI_CSS], **params)


def markdown_pane(text: str, **params: Any) -> pn.pane.HTML:
    """Return a pane showing untrusted Markdown, rendered and sanitized."""
    return html_pane(render_markdown(text), **params)


def set_html(pane: pn.pane.HTML, safe_html: str) -> None:
    """Replace the markup of a pane made by :func:`html_pane`."""
    pane.object = f'<div class="agentnb">{safe_html}</div>'


def jsonable(value: Any) -> Any:
    """Turn any value into plain JSON data for display (tagged JSON for custom types, ``repr`` as a last resort)."""
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        pass
    if hasattr(value, "model_dump"):
        try:
            return value.model_dump(mode="json")
        except Exception:  # a broken model still gets shown
            return repr(value)
    if hasattr(value, "to_dict"):
        try:
            return jsonable(value.to_dict())
        except Exception:
            return repr(value)
    try:
        from agentnb._serialization import encode

        return encode(value)
    except Exception:
        return repr(value)


def readable(value: Any, _depth: int = 0) -> Any:
    """Turn a value into plain JSON for people: fields of models and dataclasses, never internal type tags.

    :func:`jsonable` keeps enough to rebuild a value (tags naming its class); this drops them, for summaries
    in logs, request cards and the API. Past 12 levels a value shows as its text.
    """
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if _depth > 12:
        return str(value)
    if isinstance(value, enum.Enum):
        return readable(value.value, _depth + 1)
    if isinstance(value, dict):
        return {str(k): readable(v, _depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [readable(v, _depth + 1) for v in value]
    if hasattr(value, "model_dump"):
        try:
            return readable(value.model_dump(mode="json"), _depth + 1)
        except Exception:  # a broken model still gets shown
            return str(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: readable(getattr(value, f.name), _depth + 1) for f in dataclasses.fields(value)}
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    return str(value)


def pretty_json(value: Any) -> str:
    """Return ``value`` as indented JSON text (for text areas and diffs)."""
    return json.dumps(jsonable(value), indent=2, ensure_ascii=False, default=repr, sort_keys=False)


def error_card(exc: BaseException, *, title: str = "Error") -> pn.Card:
    """Show an exception: its message in the header, the traceback folded inside."""
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    header = f"{escape(title)}: {escape(type(exc).__name__)}: {escape(str(exc))[:300]}"
    return pn.Card(
        html_pane(f'<pre class="anb-traceback">{escape(tb)}</pre>'),
        title=f'<span class="anb-error">{header}</span>',
        collapsed=True,
        css_classes=["anb-error-card"],
        sizing_mode="stretch_width",
        styles={"border": "1px solid #ff8182"},
    )
