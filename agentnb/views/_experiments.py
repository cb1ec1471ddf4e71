"""An experiment as HTML: the summary table, a score chart, and the cases with failing ones first.

Everything a model or dataset produced is escaped through :mod:`agentnb._html`; the chart is SVG drawn
here, so the view needs no JavaScript and looks the same in a saved notebook.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, cast

from .. import _html as h
from .._plain import value_text

if TYPE_CHECKING:
    from ..evals import Experiment

__all__ = ["compare_case_html", "diff_html", "experiment_html", "score_chart_svg", "summary_html", "worse_html"]

#: Cases shown in the notebook; the rest are in ``experiment.results``.
MAX_CASES = 50

_STATUS_KIND = {"ok": "ok", "error": "err", "timeout": "err", "approval_pending": "warn"}


def _fmt(value: Any, digits: int = 3) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return f"{value:.{digits}g}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value)


def summary_html(summary: Any) -> str:
    """The summary DataFrame as an escaped table (empty cells for what does not apply)."""
    columns = ["metric", *summary.columns]
    timed = {i for i, c in enumerate(summary.columns) if c in ("mean", "p50", "p95")}
    rows: list[list[Any]] = []
    for index, row in zip(summary.index, summary.itertuples(index=False), strict=True):
        cells = [_fmt(v) for v in row]
        if index == "latency_ms":  # with its unit, so a reader (and a notebook's output check) sees a duration
            cells = [f"{cell} ms" if i in timed and cell else cell for i, cell in enumerate(cells)]
        rows.append([index, *cells])
    return h.table(columns, rows)


def score_chart_svg(means: dict[str, float], *, width: int = 420) -> str:
    """Horizontal bars of each score's mean (0 to 1; bars scale to the largest mean when it exceeds 1)."""
    items = [(k, v) for k, v in means.items() if not math.isnan(v)]
    if not items:
        return ""
    top = max(1.0, *(v for _, v in items))
    label_w, bar_w, row_h = 150, width - 210, 20
    height = row_h * len(items) + 4
    parts = [
        f'<svg class="anb-score-chart" role="img" aria-label="mean score per scorer" width="{width}" '
        f'height="{height}" viewBox="0 0 {width} {height}" xmlns="http://www.w3.org/2000/svg">'
    ]
    for i, (name, value) in enumerate(items):
        y = i * row_h + 2
        length = max(0.0, value / top) * bar_w
        colour = "#2da44e" if value / top >= 0.8 else ("#d4a72c" if value / top >= 0.5 else "#cf222e")
        parts.append(
            f'<text x="{label_w - 6}" y="{y + 14}" text-anchor="end" font-size="12" fill="currentColor">'
            f"{h.escape(h.shorten(name, 24))}</text>"
            f'<rect x="{label_w}" y="{y + 3}" width="{bar_w}" height="{row_h - 6}" fill="#eaeef2" rx="3"/>'
            f'<rect x="{label_w}" y="{y + 3}" width="{length:.1f}" height="{row_h - 6}" fill="{colour}" rx="3"/>'
            f'<text x="{label_w + bar_w + 6}" y="{y + 14}" font-size="12" fill="currentColor">{value:.2f}</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _case_html(row: Any, score_columns: list[str], stored: dict[str, Any]) -> str:
    status = str(row["status"])
    scores = " ".join(f"{h.escape(c)}={_fmt(row[c], 2)}" for c in score_columns if c in row and not _nan(row[c]))
    line = (
        f"{h.badge(status, _STATUS_KIND.get(status, ''))} <b>{h.escape(row['case_id'])}</b> "
        f"<span class='anb-muted'>{h.escape(h.shorten(_plain_text(row['input']), 80))}</span> → "
        f"{h.escape(h.shorten(_plain_text(row['output']), 80))} <span class='anb-muted'>{scores}</span>"
    )
    data = stored.get("data", {})
    result = data.get("result", {})
    body: list[tuple[str, str]] = [
        ("input", h.json_html(row["input"])),
        ("expected", h.json_html(row["expected"])),
        ("output", h.json_html(row["output"])),
    ]
    if row["error"]:
        body.append(("error", f"<span class='anb-error'>{h.escape(row['error'])}</span>"))
    if result.get("tool_calls"):
        body.append(("tool calls", h.json_html(result["tool_calls"])))
    notes: dict[str, str] = data.get("notes") or {}
    for scorer, note in notes.items():
        body.append((f"{scorer} says", h.escape(note)))
    scorer_errors: dict[str, str] = data.get("scorer_errors") or {}
    for scorer, error in scorer_errors.items():
        body.append((f"{scorer} failed", f"<span class='anb-error'>{h.escape(error)}</span>"))
    body.append(("latency", h.escape(f"{_fmt(row['latency_ms'], 4)} ms")))
    body.append(("run", h.escape(row["run_id"] or "")))
    if row["trace_id"]:
        body.append(("trace", h.escape(row["trace_id"])))
    return h.details(line, h.kv_table(body))


def _nan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def _plain_text(value: Any) -> str:
    return "" if value is None or _nan(value) else value_text(value)


def experiment_html(experiment: Experiment) -> str:
    """The rich display of an experiment: header, summary, score chart, cases (failing first, expandable)."""
    counts: dict[str, int] = {}
    for row in experiment.rows:
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    badges = " ".join(h.badge(f"{n} {status}", _STATUS_KIND.get(status, "")) for status, n in sorted(counts.items()))
    head = (
        "<div class='anb-head'>"
        f"<span class='anb-title'>Experiment {h.escape(experiment.name)}</span>"
        f"{h.badge(experiment.status, 'ok' if experiment.status == 'completed' else 'warn')}"
        f"<span class='anb-muted'>{h.escape(experiment.target or '')} · {len(experiment.rows)} cases</span>"
        f"{badges}</div>"
    )
    if not experiment.rows:
        return h.wrap(f"<div class='anb-card anb-experiment'>{head}<i>No cases yet.</i></div>")
    summary = summary_html(experiment.summary())
    chart = score_chart_svg(experiment.means())
    ranked = experiment._ranked()  # pyright: ignore[reportPrivateUsage]
    stored = {(r["case_id"], r["repetition"]): r for r in experiment.rows}
    columns = experiment.score_columns
    cases: list[str] = []
    failing = int((ranked["_rank"] < 1).sum())
    for _, row in ranked.head(MAX_CASES).iterrows():
        key = (row["case_id"], int(row["repetition"]) if "repetition" in row else 0)
        cases.append(_case_html(row, columns, stored.get(key, {})))
    more = len(ranked) - MAX_CASES
    tail = f"<div class='anb-muted'>… {more} more cases in <code>.results</code></div>" if more > 0 else ""
    title = f"Cases ({failing} failing first)" if failing else "Cases"
    body = (
        f"{head}<div style='display:flex;gap:16px;flex-wrap:wrap;align-items:flex-start'>"
        f"<div>{summary}</div><div>{chart}</div></div>"
        f"<div class='anb-title' style='margin-top:6px'>{h.escape(title)}</div>{''.join(cases)}{tail}"
    )
    return h.wrap(f"<div class='anb-card anb-experiment'>{body}</div>")


_DIFF_STYLE = {"+": "background:#dafbe1;color:#116329", "-": "background:#ffebe9;color:#a40e26"}


def _side_html(title: str, status: Any, tools: Any, output: Any) -> str:
    names: list[Any] = cast("list[Any]", tools) if isinstance(tools, list) else []
    path = " → ".join(h.escape(t) for t in names) or "(no tools)"
    kind = _STATUS_KIND.get(str(status), "")
    return (
        f"<div class='anb-compare-side' style='flex:1;min-width:0'><b>{h.escape(title)}</b> "
        f"{h.badge(_plain_text(status) or 'missing', kind)}"
        f"<div class='anb-compare-tools'>tools: {path}</div>"
        f"<pre class='anb-compare-answer' style='white-space:pre-wrap'>{h.escape(_plain_text(output))}</pre></div>"
    )


def diff_html(diff: str) -> str:
    """A unified diff as escaped lines, added ones green and removed ones red."""
    lines: list[str] = []
    for line in diff.splitlines():
        style = "" if line.startswith(("+++", "---")) else _DIFF_STYLE.get(line[:1], "")
        lines.append(f"<div style='{style}'>{h.escape(line) or '&nbsp;'}</div>")
    return f"<pre class='anb-compare-diff' style='white-space:pre-wrap'>{''.join(lines)}</pre>"


def compare_case_html(row: Any, a: str, b: str) -> str:
    """One row of :func:`~agentnb.evals.compare` side by side: each side's status, tool path and answer, the
    scores that dropped, and the diff of the two answers."""
    worse = [str(c) for c in cast("list[Any]", row.get("worse") or [])]
    head = f"<b>{h.escape(row.get('case_id'))}</b> {h.badge(row.get('change'), 'err' if worse else '')}"
    if worse:
        head += f" <span class='anb-compare-worse'>worse on {h.escape(', '.join(worse))}</span>"
    sides = (
        "<div style='display:flex;gap:12px'>"
        + _side_html(f"{a} (baseline)", row.get("status_a"), row.get("tools_a"), row.get("output_a"))
        + _side_html(f"{b} (candidate)", row.get("status_b"), row.get("tools_b"), row.get("output_b"))
        + "</div>"
    )
    diff = str(row.get("answer_diff") or "")
    return h.wrap(
        f"<div>{head}</div><div class='anb-muted'>{h.escape(_plain_text(row.get('input')))}</div>{sides}"
        + (diff_html(diff) if diff else "<div class='anb-muted'>Same answer.</div>")
    )


def worse_html(worse: dict[str, list[str]]) -> str:
    """Each score's cases that got worse, as escaped lines (nothing when none did)."""
    lines = [
        f"<div class='anb-compare-worse-score'><b>{h.escape(score)}</b>: {h.escape(', '.join(cases))}</div>"
        for score, cases in worse.items()
    ]
    return "".join(lines)
