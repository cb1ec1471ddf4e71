"""Small Panel building blocks shared by the DevUI views: safe HTML panes, error cards, JSON text."""

from __future__ import annotations

import html
import json
import re
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol, cast

import panel as pn

from agentnb._html import STYLE, dark_css, escape, json_html, render_markdown
from agentnb._plain import jsonable, readable

if TYPE_CHECKING:
    import param

__all__ = [
    "DEVUI_CSS",
    "error_card",
    "highlight_code",
    "html_pane",
    "json_html",
    "jsonable",
    "markdown_pane",
    "pretty_json",
    "readable",
    "set_html",
    "table_theme",
    "watch",
]


# A code block of rendered (already sanitized) Markdown: ``<pre><code class="language-x">…escaped…</code></pre>``.
_CODE_BLOCK = re.compile(r'<pre><code(?: class="language-([\w+#.-]+)")?>(.*?)</code></pre>', re.S)

_COPY_BUTTON = (
    "<button class='anb-copy' title='Copy to the clipboard' "
    "onclick=\"navigator.clipboard.writeText(this.parentElement.querySelector('code').innerText);"
    "this.textContent='Copied'\">Copy</button>"
)


def highlight_code(safe_html: str) -> str:
    """Highlight the code blocks of sanitized HTML with Pygments and give each a copy button.

    The code is unescaped only to be tokenized; Pygments escapes every token again, so the result is as safe
    as its input. The button is markup the DevUI adds after sanitizing, never text from the model.
    """
    if "<pre><code" not in safe_html:
        return safe_html
    try:
        from pygments import highlight
        from pygments.formatters import HtmlFormatter
        from pygments.lexers import (  # typeshed leaves their **options unannotated; none are passed here
            get_lexer_by_name,  # pyright: ignore[reportUnknownVariableType]
            guess_lexer,  # pyright: ignore[reportUnknownVariableType]
        )
        from pygments.util import ClassNotFound
    except ImportError:  # pragma: no cover - pygments comes with the devui extra
        return safe_html

    def one(match: re.Match[str]) -> str:
        language, code = match.group(1), html.unescape(match.group(2))
        try:
            lexer = get_lexer_by_name(language) if language else guess_lexer(code)
        except ClassNotFound:
            lexer = get_lexer_by_name("text")
        body = highlight(code, lexer, HtmlFormatter[str](nowrap=True, classprefix="anb-tok-"))
        label = f"<span class='anb-code-lang'>{escape(language)}</span>" if language else ""
        return f"<div class='anb-code'>{label}{_COPY_BUTTON}<pre><code>{body}</code></pre></div>"

    return _CODE_BLOCK.sub(one, safe_html)


def _code_css() -> str:
    try:
        from pygments.formatters import HtmlFormatter
    except ImportError:  # pragma: no cover
        return ""

    def style_defs(style: str, scope: str) -> str:
        # typeshed's stub leaves get_style_defs unannotated; it returns the CSS text.
        formatter = cast(_StyleDefs, HtmlFormatter[str](style=style, classprefix="anb-tok-"))
        return formatter.get_style_defs(scope)

    return style_defs("default", ".anb-code") + "\n" + style_defs("github-dark", ".anb-dark .anb-code")


class _StyleDefs(Protocol):
    def get_style_defs(self, arg: str, /) -> str: ...


# Panel renders each pane in its own shadow root, so the shared stylesheet is attached per pane.
DEVUI_CSS = (
    STYLE
    + """
.agentnb{max-width:none}
.anb-card-tool .card-title{font-size:13px}
.agentnb .anb-code{position:relative;margin:4px 0}
.agentnb .anb-code pre{max-height:420px;padding-top:18px}
.agentnb .anb-code-lang{position:absolute;left:8px;top:2px;font-size:10px;color:var(--jp-ui-font-color2,#656d76)}
.agentnb .anb-copy{position:absolute;right:6px;top:4px;font-size:11px;padding:1px 8px;cursor:pointer;
 border:1px solid var(--jp-border-color2,#d0d7de);border-radius:6px;background:var(--jp-layout-color1,#fff);
 color:var(--jp-ui-font-color1,#1f2328)}
.agentnb .anb-msg-usage{text-align:left;font-size:11px;margin:0 0 0 4px}
.agentnb .anb-msg-tokens{text-align:left;font-size:11px;margin:0 0 0 4px}
.agentnb .anb-token-note{font-size:11px;margin:2px 0 6px}
.agentnb .anb-msg.anb-feed-msg{max-width:none;margin:0;padding:0;background:none}
.agentnb .anb-waiting{border-color:#0969da;background:#ddf4ff}
.agentnb .anb-scroll-x{overflow-x:auto;max-width:100%}
.agentnb.anb-dark{--jp-layout-color1:#161b22;--jp-layout-color2:#1f242c;--jp-layout-color3:#30363d;
 --jp-border-color2:#30363d;--jp-ui-font-color1:#e6edf3;--jp-ui-font-color2:#9198a1;color-scheme:dark}
.agentnb.anb-dark .anb-msg.anb-user:not(.anb-feed-msg){background:#0c2d6b}
.agentnb.anb-dark .anb-waiting{border-color:#1f6feb;background:#0c2d6b}
.agentnb.anb-dark .anb-offline{background:#3b2300 !important}
"""
    + dark_css(".agentnb.anb-dark")
    + _code_css()
)


def _wrap(safe_html: str) -> str:
    # The page's theme (light, or dark when the browser prefers it) is fixed per browser session.
    dark = " anb-dark" if pn.config.theme == "dark" else ""
    return f'<div class="agentnb{dark}">{safe_html}</div>'


# Bokeh's tabs draw the selected tab's label in a dark grey, unreadable on the dark theme's tab colour.
_DARK_TABS_CSS = """
:host .bk-header .bk-tab.bk-active{color:#e6edf3;background-color:#30363d;border-color:#484f58}
"""


def tabs_stylesheets() -> list[str]:
    """Stylesheets for a ``pn.Tabs`` that match the page: a readable selected tab on the dark theme."""
    return [_DARK_TABS_CSS] if pn.config.theme == "dark" else []


def table_theme() -> str:
    """The Tabulator theme that matches the page: ``"midnight"`` on the dark theme, else ``"simple"``."""
    return "midnight" if pn.config.theme == "dark" else "simple"


def html_pane(safe_html: str, **params: Any) -> pn.pane.HTML:
    """Return an HTML pane for markup that is already safe (built from escaped or sanitized parts)."""
    if "width" not in params:
        params.setdefault("sizing_mode", "stretch_width")
    return pn.pane.HTML(_wrap(safe_html), stylesheets=[DEVUI_CSS], **params)


def markdown_pane(text: str, **params: Any) -> pn.pane.HTML:
    """Return a pane showing untrusted Markdown, rendered and sanitized."""
    return html_pane(render_markdown(text), **params)


def set_html(pane: pn.pane.HTML, safe_html: str) -> None:
    """Replace the markup of a pane made by :func:`html_pane`."""
    pane.object = _wrap(safe_html)


def watch(obj: param.Parameterized, callback: Callable[[Any], object], *names: str) -> None:
    """Call ``callback`` with param's change event whenever one of the parameters ``names`` of ``obj`` changes.

    The event is param's ``Event`` named tuple (``.new``, ``.old``, ...), whose fields param leaves untyped.
    """
    # param types the callback as a bare Callable; this is the one place the DevUI registers watchers.
    obj.param.watch(callback, list(names))  # pyright: ignore[reportUnknownMemberType]


def pretty_json(value: Any) -> str:
    """Return ``value`` as indented JSON text (for text areas and diffs)."""
    return json.dumps(jsonable(value), indent=2, ensure_ascii=False, default=repr, sort_keys=False)


def error_card(exc: BaseException, *, title: str = "Error") -> pn.Card:
    """Show an exception: its message in the header, the traceback folded inside."""
    tb = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    header = f"{escape(title)}: {escape(type(exc).__name__)}: {escape(str(exc))[:300]}"
    return pn.Card(
        html_pane(f'<pre class="anb-traceback">{escape(tb)}</pre>', css_classes=["anb-traceback-pane"]),
        title=f'<span class="anb-error">{header}</span>',
        collapsed=True,
        css_classes=["anb-error-card"],
        sizing_mode="stretch_width",
        styles={"border": "1px solid #ff8182"},
    )
