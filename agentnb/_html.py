"""Safe HTML building blocks shared by the notebook layer and the DevUI.

Everything a model, a tool or a user produced is untrusted. This module is the one place that turns such
text into HTML, so the rules live in one spot:

* :func:`escape` for plain text (text nodes and attribute values);
* :func:`render_markdown` for Markdown: rendered by markdown-it-py with raw HTML *disabled* (so inline
  ``<script>`` in a reply shows up as text), then cleaned by nh3 against a small allowlist;
* :func:`sanitize_html` for HTML that comes from elsewhere (nh3 allowlist: no ``<script>``/``<style>``,
  no ``on*`` event handlers, no ``style`` attributes, links only to ``http``, ``https`` and ``mailto``).

The module imports only the standard library; markdown-it-py and nh3 load on first use. When they are not
installed, rendering falls back to escaped text, which is always safe.

Example:
    >>> from agentnb._html import escape, render_markdown
    >>> escape('<img src=x onerror="alert(1)">')
    '&lt;img src=x onerror=&quot;alert(1)&quot;&gt;'
    >>> "<script>" in render_markdown("hi <script>alert(1)</script>")
    False
"""

from __future__ import annotations

import functools
import html
import json
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = [
    "ALLOWED_ATTRIBUTES",
    "ALLOWED_TAGS",
    "ALLOWED_URL_SCHEMES",
    "STYLE",
    "badge",
    "dark_css",
    "details",
    "escape",
    "json_html",
    "kv_table",
    "render_markdown",
    "sanitize_html",
    "shorten",
    "table",
    "wrap",
]

#: Tags that survive :func:`sanitize_html` (what Markdown produces, plus a few harmless layout tags). ``img`` is
#: left out on purpose: a remote image in model output is fetched by the browser on display, which lets a
#: prompt injection leak data in its URL without a click. Markdown images render as their alt text.
ALLOWED_TAGS: frozenset[str] = frozenset(
    {
        "a", "abbr", "b", "blockquote", "br", "code", "del", "details", "div", "em", "h1", "h2", "h3", "h4",
        "h5", "h6", "hr", "i", "kbd", "li", "ol", "p", "pre", "s", "span", "strong", "sub", "summary", "sup",
        "table", "tbody", "td", "th", "thead", "tr", "ul",
    }
)  # fmt: skip

#: Attributes allowed per tag; ``"*"`` applies to every tag. No ``style``, no ``on*`` handlers, ever.
ALLOWED_ATTRIBUTES: Mapping[str, frozenset[str]] = {
    "*": frozenset({"class", "title"}),
    "a": frozenset({"href"}),
    "td": frozenset({"align", "colspan", "rowspan"}),
    "th": frozenset({"align", "colspan", "rowspan"}),
    "ol": frozenset({"start"}),
    "code": frozenset({"class"}),
}

#: URL schemes allowed in ``href``/``src``. ``javascript:``, ``data:`` and ``vbscript:`` are dropped.
ALLOWED_URL_SCHEMES: frozenset[str] = frozenset({"http", "https", "mailto"})

_LIGHT = """
.agentnb{font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:13px;line-height:1.45;
 color:var(--jp-ui-font-color1,#1f2328);max-width:960px}
.agentnb .anb-card{border:1px solid var(--jp-border-color2,#d0d7de);border-radius:8px;padding:8px 12px;margin:4px 0;
 background:var(--jp-layout-color1,#fff)}
.agentnb .anb-head{display:flex;gap:8px;align-items:baseline;flex-wrap:wrap;margin-bottom:4px}
.agentnb .anb-title{font-weight:600;font-size:14px}
.agentnb .anb-muted{color:var(--jp-ui-font-color2,#656d76);font-size:12px}
.agentnb .anb-badge{display:inline-block;border-radius:10px;padding:0 8px;font-size:11px;
 background:var(--jp-layout-color3,#eaeef2);color:var(--jp-ui-font-color1,#1f2328)}
.agentnb .anb-badge.anb-ok{background:#dafbe1;color:#116329}
.agentnb .anb-badge.anb-warn{background:#fff8c5;color:#7d4e00}
.agentnb .anb-badge.anb-err{background:#ffebe9;color:#a40e26}
.agentnb .anb-badge.anb-info{background:#ddf4ff;color:#0a3069}
.agentnb .anb-msg{border-radius:10px;padding:6px 10px;margin:4px 0;max-width:85%;overflow-wrap:anywhere}
.agentnb .anb-msg.anb-user{background:#ddf4ff;margin-left:auto}
.agentnb .anb-msg.anb-assistant{background:var(--jp-layout-color2,#f6f8fa)}
.agentnb .anb-msg.anb-system{background:#fff8c5;font-size:12px}
.agentnb .anb-msg.anb-tool{background:#f0f0ff;font-size:12px}
.agentnb .anb-role{font-size:11px;font-weight:600;text-transform:uppercase;letter-spacing:.04em;
 color:var(--jp-ui-font-color2,#656d76)}
.agentnb .anb-reasoning{font-style:italic;color:var(--jp-ui-font-color2,#656d76);border-left:3px solid #d0d7de;
 padding-left:8px;margin:4px 0}
.agentnb details{margin:3px 0}
.agentnb summary{cursor:pointer}
.agentnb pre{background:var(--jp-layout-color2,#f6f8fa);padding:6px 8px;border-radius:6px;overflow:auto;
 max-height:320px;margin:4px 0;font-size:12px;white-space:pre-wrap}
.agentnb table.anb-table{border-collapse:collapse;font-size:12px;margin:4px 0}
.agentnb table.anb-table th,.agentnb table.anb-table td{border:1px solid var(--jp-border-color2,#d0d7de);
 padding:2px 6px;text-align:left;vertical-align:top}
.agentnb table.anb-table th{background:var(--jp-layout-color2,#f6f8fa)}
.agentnb .anb-error{color:#a40e26}
.agentnb .anb-md p{margin:2px 0}
.agentnb tr.anb-rerun-changed{background:#fff8c5}
.agentnb tr.anb-rerun-added{background:#dafbe1}
.agentnb tr.anb-rerun-removed{background:#ffebe9}
.agentnb tr.anb-rerun-unknown{background:var(--jp-layout-color2,#f6f8fa)}
.agentnb .anb-cmp-line{padding:1px 6px;border-left:3px solid #2da44e;margin:1px 0;overflow-wrap:anywhere}
.agentnb .anb-cmp-excluded{opacity:.45;border-left-color:#d0d7de;text-decoration:line-through}
.agentnb .anb-cmp-summary{border-left-color:#0969da;background:#ddf4ff}
.agentnb progress.anb-budget-bar{width:160px;vertical-align:middle}
"""


def dark_css(scope: str) -> str:
    """Dark shades for the light tints in :data:`STYLE`, for the elements under ``scope``.

    The tints are fixed colours, so on a dark theme they would sit under light text. JupyterLab's dark themes
    are ``body[data-jp-theme-light="false"]``; the DevUI's is ``.anb-dark``.
    """
    return f"""{scope} .anb-msg.anb-system,{scope} tr.anb-rerun-changed{{background:#3b2300}}
{scope} .anb-msg.anb-tool{{background:#272046}}
{scope} tr.anb-rerun-added{{background:#033a16}}
{scope} tr.anb-rerun-removed{{background:#490202}}
{scope} .anb-badge.anb-ok{{background:#033a16;color:#7ee787}}
{scope} .anb-badge.anb-warn{{background:#3b2300;color:#e3b341}}
{scope} .anb-badge.anb-err{{background:#490202;color:#ffa198}}
{scope} .anb-badge.anb-info{{background:#0c2d6b;color:#a5d6ff}}
{scope} .anb-error{{color:#ff7b72}}
"""


#: The stylesheet for every ``.agentnb`` block. Scoped by class so it never restyles the host page; colours
#: follow JupyterLab's theme variables with light fallbacks so it also reads well in classic Notebook,
#: VS Code and static HTML exports.
STYLE = (
    _LIGHT
    + dark_css('body[data-jp-theme-light="false"] .agentnb')
    + 'body[data-jp-theme-light="false"] .agentnb .anb-msg.anb-user{background:#0c2d6b}\n'
)


def escape(value: object) -> str:
    """Escape any value for use in HTML text or a quoted attribute.

    Args:
        value: Anything; non-strings are converted with ``str()`` first. ``None`` becomes an empty string.

    Returns:
        Text with ``& < > " '`` replaced by entities.
    """
    if value is None:
        return ""
    return html.escape(value if isinstance(value, str) else str(value), quote=True)


def shorten(text: str, limit: int = 200) -> str:
    """Cut ``text`` to at most ``limit`` characters, marking the cut with an ellipsis.

    Args:
        text: The text to shorten.
        limit: The maximum length of the result (at least 1).

    Returns:
        ``text`` itself when short enough, else its first ``limit - 1`` characters followed by ``…``.
    """
    if limit < 1:
        raise ValueError(f"limit must be >= 1, got {limit}")
    return text if len(text) <= limit else text[: limit - 1] + "…"


@functools.lru_cache(maxsize=1)
def _cleaner() -> Callable[[str], str] | None:
    try:
        import nh3
    except ImportError:  # pragma: no cover - nh3 is part of the notebook/devui extras
        return None
    attributes = {tag: set(names) for tag, names in ALLOWED_ATTRIBUTES.items()}
    tags = set(ALLOWED_TAGS)
    schemes = set(ALLOWED_URL_SCHEMES)

    def clean(text: str) -> str:
        return nh3.clean(
            text,
            tags=tags,
            attributes=attributes,
            url_schemes=schemes,
            link_rel="noopener noreferrer nofollow",
            strip_comments=True,
        )

    return clean


def sanitize_html(text: str) -> str:
    """Clean untrusted HTML against the allowlist.

    Scripts, styles, iframes, forms, event-handler attributes and ``javascript:``/``data:`` URLs are
    removed; links get ``rel="noopener noreferrer nofollow"``. Without nh3 installed the whole input is
    escaped instead, which is safe but shows the markup as text.

    Args:
        text: Untrusted HTML.

    Returns:
        HTML that is safe to insert into a page.
    """
    clean = _cleaner()
    if clean is None:  # pragma: no cover - exercised only without the extras
        return escape(text)
    return clean(text)


@functools.lru_cache(maxsize=1)
def _markdown() -> Callable[[str], str] | None:
    try:
        from markdown_it import MarkdownIt
    except ImportError:  # pragma: no cover - markdown-it-py is part of the notebook/devui extras
        return None
    # "html": False makes raw HTML in the source come out as escaped text; linkify stays off so that bare
    # text never turns into a link the user did not see written as one.
    md = MarkdownIt("commonmark", {"html": False, "typographer": False}).enable("table").enable("strikethrough")

    def image(self: Any, tokens: Any, idx: int, options: Any, env: Any) -> str:
        # Show an image as its alt text and address instead of loading it (see ALLOWED_TAGS).
        token = tokens[idx]
        alt = self.renderInlineAsText(token.children or [], options, env)
        src = str(token.attrGet("src") or "")
        return f'<span class="anb-muted" title="{escape(src)}">[image: {escape(alt or src)}]</span>'

    md.add_render_rule("image", image)
    return md.render


def render_markdown(text: str) -> str:
    """Render untrusted Markdown to safe HTML.

    Raw HTML in the source is shown as text, then the result is cleaned by :func:`sanitize_html`, so
    ``[x](javascript:alert(1))`` loses its link and ``<img onerror=...>`` stays inert.

    Args:
        text: Markdown written by a model, a tool or a user.

    Returns:
        Safe HTML wrapped in ``<div class="anb-md">``.
    """
    render = _markdown()
    if render is None or _cleaner() is None:  # pragma: no cover - exercised only without the extras
        return f'<div class="anb-md" style="white-space:pre-wrap">{escape(text)}</div>'
    return f'<div class="anb-md">{sanitize_html(render(text))}</div>'


def json_html(value: Any, *, limit: int = 20_000) -> str:
    """Show a JSON-like value as an escaped, pretty-printed ``<pre>`` block.

    Strings that hold JSON (tool arguments often do) are parsed first so they print indented.

    Args:
        value: A dict, list, scalar, or a string (parsed as JSON when possible).
        limit: Longest text shown before shortening.

    Returns:
        An HTML ``<pre>`` element.
    """
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return f"<pre>{escape(shorten(value, limit))}</pre>"
    try:
        text = json.dumps(value, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = repr(value)
    return f"<pre>{escape(shorten(text, limit))}</pre>"


def badge(text: object, kind: str = "") -> str:
    """Return a small pill label.

    Args:
        text: The label (escaped).
        kind: ``""``, ``"ok"``, ``"warn"``, ``"err"`` or ``"info"`` (colour).

    Returns:
        An HTML ``<span>``.
    """
    cls = f"anb-badge anb-{kind}" if kind in {"ok", "warn", "err", "info"} else "anb-badge"
    return f'<span class="{cls}">{escape(text)}</span>'


def details(summary_html: str, body_html: str, *, open: bool = False) -> str:
    """Return a collapsible ``<details>`` block; both parts must already be safe HTML.

    Args:
        summary_html: Safe HTML for the always-visible line.
        body_html: Safe HTML shown when expanded.
        open: Whether the block starts expanded.

    Returns:
        An HTML ``<details>`` element.
    """
    return f"<details{' open' if open else ''}><summary>{summary_html}</summary>{body_html}</details>"


def kv_table(rows: Iterable[tuple[str, str]]) -> str:
    """Return a two-column table from ``(label, safe_html)`` pairs; labels are escaped, values are not.

    Args:
        rows: Pairs of a plain-text label and an already safe HTML value.

    Returns:
        An HTML ``<table>``, or an empty string when there are no rows.
    """
    body = "".join(f"<tr><th>{escape(k)}</th><td>{v}</td></tr>" for k, v in rows)
    return f'<table class="anb-table">{body}</table>' if body else ""


def table(columns: Iterable[str], rows: Iterable[Iterable[object]]) -> str:
    """Return a table of plain values; every header and cell is escaped.

    Args:
        columns: Header labels.
        rows: Rows of values (converted with ``str()`` and escaped).

    Returns:
        An HTML ``<table>``.
    """
    head = "".join(f"<th>{escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table class="anb-table"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def wrap(body_html: str) -> str:
    """Wrap safe HTML in the ``.agentnb`` root with the shared stylesheet.

    Args:
        body_html: Safe HTML.

    Returns:
        A self-contained HTML fragment (style + root div), suitable for ``_repr_html_``.
    """
    return f'<div class="agentnb"><style>{STYLE}</style>{body_html}</div>'
