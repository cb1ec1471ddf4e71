"""A re-run of one executor compared with the original run, as HTML: a table of what changed, then the diff."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .. import _html as h

if TYPE_CHECKING:
    from ..workflows import RerunResult

__all__ = ["rerun_html"]


def rerun_html(result: RerunResult) -> str:
    """The comparison as a safe HTML fragment (every value escaped): a table, then the unified diff."""
    if result.error is not None:
        status = h.badge("failed", "err")
    elif result.is_unchanged:
        status = h.badge("same as the original", "ok")
    else:
        status = h.badge("changed", "warn")
    head = (
        f"<span class='anb-title'>re-run of {h.escape(result.executor_id)}</span> {h.badge(f'step {result.step}')} "
        f"{status} <span class='anb-muted'>from checkpoint <code>{h.escape(result.checkpoint_id)}</code>"
        f"{' · edited input' if result.edited else ''} · nothing was written</span>"
    )
    inputs = "".join(f"<pre>{h.escape(text)}</pre>" for text in result.input_texts)
    rows: list[str] = []
    for change in result.shown_changes():
        if change.status == "same" and change.original is None:
            continue
        before = "<i>not recorded</i>" if change.status == "unknown" else h.escape(change.original or "—")
        label = h.escape(f"{change.section} {change.key}".strip())
        rows.append(
            f"<tr class='anb-rerun-{change.status}'><td>{label}</td><td>{h.escape(change.status)}</td>"
            f"<td><pre>{before}</pre></td><td><pre>{h.escape(change.rerun or '—')}</pre></td></tr>"
        )
    table = (
        "<table class='anb-table anb-rerun-table'><thead><tr><th>what</th><th></th><th>original run</th>"
        f"<th>re-run</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
    )
    error = ""
    if result.error is not None:
        error = f"<div class='anb-error'>⚠ {h.escape(result.error.error_type)}: {h.escape(result.error.message)}</div>"
    diff = result.diff_text()
    diff_html = h.details("unified diff", f"<pre>{h.escape(diff)}</pre>") if diff else ""
    return (
        f"<div class='anb-card anb-rerun'><div class='anb-head'>{head}</div>"
        f"<div><b>input</b>{inputs}</div>{error}{table}{diff_html}</div>"
    )
