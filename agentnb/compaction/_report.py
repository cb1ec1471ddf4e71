"""What compaction did to one model request, as JSON-safe data: the budget, the tokens sent, what was left out.

Reports travel in ``response.additional_properties["compaction"]`` (one per model call of the turn) and in
the session's state (one per turn, see :data:`COMPACTION_LOG_KEY`), so the notebook, a reloaded session and
the DevUI all read the same record. Rendering escapes every piece of message text.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any, TypedDict, cast

from .._html import badge, details, escape, shorten, table, wrap
from .._types import Message
from ._groups import (
    EXCLUDE_REASON_KEY,
    EXCLUDED_KEY,
    GROUP_ANNOTATION_KEY,
    GROUP_KIND_KEY,
    SUMMARIZED_BY_SUMMARY_ID_KEY,
    SUMMARY_OF_GROUP_IDS_KEY,
    token_count_of,
)

if TYPE_CHECKING:
    from ._index import GroupView

__all__ = [
    "COMPACTION_LOG_KEY",
    "COMPACTION_REPORT_KEY",
    "CompactionReport",
    "ExcludedGroup",
    "SummaryRecord",
    "compaction_replay_html",
    "compaction_reports",
    "compaction_view_html",
    "log_turn",
    "session_compaction_log",
]

# ``type(x) is _DICT`` tests for a dict without narrowing ``x`` from Any (hot loops skip typing.cast's call).
_DICT: Any = dict
#: Where a response carries the reports of its model calls (``response.additional_properties[...]``).
COMPACTION_REPORT_KEY = "compaction"
#: The session-state key of the per-turn log (a list of report dicts, newest last, at most ``_LOG_LIMIT``).
COMPACTION_LOG_KEY = "_compaction_log"
_LOG_LIMIT = 500
_PREVIEW = 160
#: Excluded groups a report lists one by one (the newest); the rest are counted.
MAX_LISTED_GROUPS = 50


class ExcludedGroup(TypedDict):
    """One group left out of the request."""

    group_id: str
    kind: str
    reason: str
    messages: int
    tokens: int
    summary_id: str | None
    preview: str


class SummaryRecord(TypedDict):
    """One summary sent in place of the groups it stands for."""

    summary_id: str
    text: str
    group_ids: list[str]
    tokens: int


def preview_text(messages: Sequence[Message]) -> str:
    """The group's text (or its content kinds), joined and shortened for a report."""
    parts = [m.text or ", ".join(c.type for c in m.contents) for m in messages]
    return shorten(" / ".join(p for p in parts if p), _PREVIEW)


class CompactionReport:
    """What compaction did to one request: tokens sent against the budget, and each group left out and why.

    Build one with :meth:`from_messages` after a strategy ran; ``to_dict`` / ``from_dict`` round-trip it as
    JSON. In a notebook it shows as a budget bar with the excluded groups listed (expandable).

    Example:
        ```python
        from agentnb import Message
        from agentnb.compaction import CompactionReport, SlidingWindowStrategy, apply_compaction

        history = [Message("user", [f"turn {i}"]) for i in range(6)]
        await apply_compaction(history, strategy=SlidingWindowStrategy(keep_last_groups=2))
        CompactionReport.from_messages(history, strategy="sliding window").excluded_groups[0]["reason"]
        # 'sliding_window'
        ```
    """

    def __init__(
        self,
        *,
        strategy: str,
        budget: int | None,
        tokens_total: int,
        tokens_sent: int,
        messages_total: int,
        messages_sent: int,
        excluded_groups: list[ExcludedGroup],
        summaries: list[SummaryRecord],
        source: str = "client",
        groups_excluded: int | None = None,
        tokens_excluded: int | None = None,
    ) -> None:
        self.strategy = strategy
        self.budget = budget
        self.tokens_total = tokens_total
        self.tokens_sent = tokens_sent
        self.messages_total = messages_total
        self.messages_sent = messages_sent
        self.excluded_groups = excluded_groups
        self.summaries = summaries
        self.source = source
        self.groups_excluded = len(excluded_groups) if groups_excluded is None else groups_excluded
        self.tokens_excluded = sum(g["tokens"] for g in excluded_groups) if tokens_excluded is None else tokens_excluded

    @property
    def compacted(self) -> bool:
        """Whether anything was left out or summarized."""
        return bool(self.groups_excluded or self.summaries)

    @classmethod
    def from_messages(
        cls, messages: Sequence[Message], *, strategy: str, budget: int | None = None, source: str = "client"
    ) -> CompactionReport:
        """Read the report off an annotated, compacted message list (token counts where annotated).

        Only the newest :data:`MAX_LISTED_GROUPS` excluded groups are listed one by one (a long session leaves
        out hundreds); ``groups_excluded`` and ``tokens_excluded`` count them all.
        """
        excluded: dict[str, list[Message]] = {}
        summaries: list[SummaryRecord] = []
        tokens_total = tokens_sent = sent = 0
        for message in messages:
            props = message.additional_properties
            raw: Any = props.get(GROUP_ANNOTATION_KEY)
            annotation: Any = raw if type(raw) is _DICT else {}
            count = annotation.get("token_count")
            tokens = count if type(count) is int else 0
            summarized = annotation.get(SUMMARY_OF_GROUP_IDS_KEY)
            if props.get(EXCLUDED_KEY, False):
                group_id = annotation.get("id")
                key = group_id if isinstance(group_id, str) else message.message_id or "?"
                found = excluded.get(key)
                if found is None:
                    excluded[key] = [message]
                else:
                    found.append(message)
                if summarized is None:
                    tokens_total += tokens
                continue
            sent += 1
            tokens_sent += tokens
            if isinstance(summarized, list):
                summaries.append(
                    SummaryRecord(
                        summary_id=message.message_id or "",
                        text=message.text,
                        group_ids=[str(g) for g in cast("list[object]", summarized)],
                        tokens=tokens,
                    )
                )
            else:
                tokens_total += tokens
        groups: list[ExcludedGroup] = []
        listed = list(excluded.items())[-MAX_LISTED_GROUPS:]
        for group_id, members in listed:
            first = members[0].additional_properties
            raw = first.get(GROUP_ANNOTATION_KEY)
            annotation = cast("dict[str, Any]", raw) if isinstance(raw, dict) else {}
            summary_id = annotation.get(SUMMARIZED_BY_SUMMARY_ID_KEY)
            groups.append(
                ExcludedGroup(
                    group_id=group_id,
                    kind=str(annotation.get(GROUP_KIND_KEY, "")),
                    reason=str(first.get(EXCLUDE_REASON_KEY) or "excluded"),
                    messages=len(members),
                    tokens=sum(token_count_of(m) or 0 for m in members),
                    summary_id=summary_id if isinstance(summary_id, str) else None,
                    preview=preview_text(members),
                )
            )
        tokens_excluded = (
            tokens_total
            - sum(token_count_of(m) or 0 for m in messages if not m.additional_properties.get(EXCLUDED_KEY, False))
            + sum(s["tokens"] for s in summaries)
        )
        return cls(
            strategy=strategy,
            budget=budget,
            tokens_total=tokens_total,
            tokens_sent=tokens_sent,
            messages_total=len(messages) - len(summaries),
            messages_sent=sent,
            excluded_groups=groups,
            summaries=summaries,
            source=source,
            groups_excluded=len(excluded),
            tokens_excluded=tokens_excluded,
        )

    @classmethod
    def from_view(
        cls,
        view: GroupView,
        messages: Sequence[Message],
        *,
        strategy: str,
        budget: int | None = None,
        source: str = "client",
    ) -> CompactionReport:
        """The report of a request decided on group summaries (no summaries, whole groups in or out).

        Equal to :meth:`from_messages` on the same conversation with the view's exclusions written on it, at
        the cost of the listed groups rather than of the whole history.
        """
        index, included = view.index, view.included
        tokens_total = index.token_sums[-1]
        tokens_sent = view.included_tokens()
        groups: list[ExcludedGroup] = []
        group = len(included)
        while group > 0 and len(groups) < MAX_LISTED_GROUPS:
            group -= 1
            if included[group]:
                continue
            groups.append(index.excluded_record(group, view.reason(group), messages))
        groups.reverse()
        return cls(
            strategy=strategy,
            budget=budget,
            tokens_total=tokens_total,
            tokens_sent=tokens_sent,
            messages_total=len(messages),
            messages_sent=view.included_messages(),
            excluded_groups=groups,
            summaries=[],
            source=source,
            groups_excluded=len(included) - view.groups_in,
            tokens_excluded=tokens_total - tokens_sent,
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-safe dict (``from_dict`` restores the report)."""
        return {
            "type": "compaction_report",
            "strategy": self.strategy,
            "budget": self.budget,
            "tokens_total": self.tokens_total,
            "tokens_sent": self.tokens_sent,
            "messages_total": self.messages_total,
            "messages_sent": self.messages_sent,
            # Shared, not copied: a long session's reports list the same groups turn after turn.
            "excluded_groups": list(self.excluded_groups),
            "summaries": [dict(s) for s in self.summaries],
            "source": self.source,
            "groups_excluded": self.groups_excluded,
            "tokens_excluded": self.tokens_excluded,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CompactionReport:
        """Rebuild a report from :meth:`to_dict` output."""
        return cls(
            strategy=str(data.get("strategy", "")),
            budget=data.get("budget"),
            tokens_total=int(data.get("tokens_total", 0)),
            tokens_sent=int(data.get("tokens_sent", 0)),
            messages_total=int(data.get("messages_total", 0)),
            messages_sent=int(data.get("messages_sent", 0)),
            excluded_groups=cast("list[ExcludedGroup]", list(data.get("excluded_groups") or [])),
            summaries=cast("list[SummaryRecord]", list(data.get("summaries") or [])),
            source=str(data.get("source", "client")),
            groups_excluded=data.get("groups_excluded"),
            tokens_excluded=data.get("tokens_excluded"),
        )

    def summary_line(self) -> str:
        """One line: tokens sent of the budget and what was left out."""
        budget = f" of {self.budget:,} budget" if self.budget else ""
        left_out = self.groups_excluded
        return (
            f"{self.tokens_sent:,} tokens sent{budget} ({self.tokens_total:,} before compaction); "
            f"{self.messages_sent}/{self.messages_total} messages, {left_out} group(s) left out, "
            f"{len(self.summaries)} summary(ies)"
        )

    def html_body(self) -> str:
        """The report as an HTML fragment (escaped): a budget bar, then excluded groups and summaries."""
        more = self.groups_excluded - len(self.excluded_groups)
        note = f"<p class='anb-muted'>and {more} older group(s) left out</p>" if more > 0 else ""
        return (
            budget_bar(self.tokens_sent, self.budget, self.tokens_total)
            + _groups_html(self.excluded_groups, self.summaries)
            + note
        )

    def _repr_html_(self) -> str:
        title = f"<b>Compaction</b> {badge(self.strategy)} {escape(self.summary_line())}"
        return wrap(details(title, self.html_body(), open=True))

    def __repr__(self) -> str:
        return f"CompactionReport({self.summary_line()})"


def budget_bar(sent: int, budget: int | None, total: int) -> str:
    """A bar of tokens sent against the budget (or against the uncompacted total when there is no budget)."""
    scale = budget or total or 1
    used = min(100.0, 100.0 * sent / scale)
    before = min(100.0, 100.0 * total / scale)
    label = f"{sent:,} / {budget:,} tokens" if budget else f"{sent:,} of {total:,} tokens sent"
    return (
        '<div class="anb-budget" title="tokens sent against the budget">'
        f'<progress class="anb-budget-bar" max="100" value="{used:.1f}">{used:.0f}%</progress> '
        f"<span>{escape(label)}</span>"
        f'<span class="anb-muted"> (before compaction: {before:.0f}%)</span></div>'
    )


def _groups_html(groups: Iterable[ExcludedGroup], summaries: Iterable[SummaryRecord]) -> str:
    rows = [
        (g["group_id"], g["kind"], g["reason"], g["messages"], g["tokens"], g["summary_id"] or "", g["preview"])
        for g in groups
    ]
    out = ""
    if rows:
        out += details(
            f"<b>Excluded groups</b> ({len(rows)})",
            table(["group", "kind", "reason", "messages", "tokens", "summarized by", "preview"], rows),
        )
    for summary in summaries:
        out += details(
            f"<b>Summary</b> {escape(summary['summary_id'])} of {len(summary['group_ids'])} group(s)",
            f"<p>{escape(summary['text'])}</p><p class='anb-muted'>replaces: "
            f"{escape(', '.join(summary['group_ids']))}</p>",
        )
    return out


def compaction_reports(response: object) -> list[CompactionReport]:
    """The compaction reports a response carries (one per model call of the turn; empty without compaction)."""
    props = getattr(response, "additional_properties", None)
    if not isinstance(props, dict):
        return []
    raw = cast("dict[str, Any]", props).get(COMPACTION_REPORT_KEY)
    if not isinstance(raw, list):
        return []
    return [
        CompactionReport.from_dict(cast("dict[str, Any]", r)) for r in cast("list[object]", raw) if isinstance(r, dict)
    ]


def log_turn(state: dict[str, Any], report: CompactionReport) -> None:
    """Append a turn's report to a session state's compaction log (the oldest go past the limit)."""
    log = state.get(COMPACTION_LOG_KEY)
    if not isinstance(log, list):
        log = []
        state[COMPACTION_LOG_KEY] = log
    entries = cast("list[object]", log)
    entries.append(report.to_dict())
    del entries[:-_LOG_LIMIT]


def session_compaction_log(session: object) -> list[CompactionReport]:
    """The per-turn compaction reports a session recorded, oldest first."""
    state = getattr(session, "state", None)
    if not isinstance(state, dict):
        return []
    raw = cast("dict[str, Any]", state).get(COMPACTION_LOG_KEY)
    if not isinstance(raw, list):
        return []
    return [
        CompactionReport.from_dict(cast("dict[str, Any]", r)) for r in cast("list[object]", raw) if isinstance(r, dict)
    ]


def _line_html(message: Message, css: str, note: str = "") -> str:
    text = message.text or ", ".join(c.type for c in message.contents)
    extra = f" <span class='anb-muted'>{escape(note)}</span>" if note else ""
    return (
        f"<div class='anb-cmp-line {css}'><span class='anb-role'>{escape(message.role)}</span> "
        f"{escape(shorten(text, _PREVIEW))}{extra}</div>"
    )


def compaction_view_html(messages: Sequence[Message], report: CompactionReport) -> str:
    """The history as one request saw it: left-out groups greyed in place, each summary where it stood in.

    ``messages`` is the stored history up to that request (annotated: their ``_group`` ids match the
    report's); the budget bar comes first. Everything from the messages is escaped.
    """
    excluded = {g["group_id"]: g for g in report.excluded_groups}
    summary_for: dict[str, SummaryRecord] = {}
    for summary in report.summaries:
        for group_id in summary["group_ids"]:
            summary_for.setdefault(group_id, summary)
    shown: set[str] = set()
    lines: list[str] = []
    for message in messages:
        raw = message.additional_properties.get(GROUP_ANNOTATION_KEY)
        group_id = cast("dict[str, Any]", raw).get("id") if isinstance(raw, dict) else None
        summary = summary_for.get(group_id) if isinstance(group_id, str) else None
        if summary is not None and summary["summary_id"] not in shown:
            shown.add(summary["summary_id"])
            lines.append(
                f"<div class='anb-cmp-line anb-cmp-summary'><span class='anb-role'>summary</span> "
                f"{escape(shorten(summary['text'], _PREVIEW))}</div>"
            )
        group = excluded.get(group_id) if isinstance(group_id, str) else None
        if group is not None:
            lines.append(_line_html(message, "anb-cmp-excluded", f"({group['reason']})"))
        elif summary is not None:
            lines.append(_line_html(message, "anb-cmp-excluded", "(summarized)"))
        else:
            lines.append(_line_html(message, "anb-cmp-kept"))
    more = report.groups_excluded - len(report.excluded_groups)
    note = f"<div class='anb-muted'>{more} older group(s) left out, not listed</div>" if more > 0 else ""
    return (
        "<div class='anb-compaction-view'>"
        + budget_bar(report.tokens_sent, report.budget, report.tokens_total)
        + note
        + "".join(lines)
        + "</div>"
    )


def compaction_replay_html(messages: Sequence[Message], log: Sequence[CompactionReport]) -> str:
    """Every turn of a stored session's compaction log as its own expandable view, newest first open."""
    if not log:
        return "<i>no compaction recorded</i>"
    parts: list[str] = []
    for turn in range(len(log), 0, -1):
        report = log[turn - 1]
        seen = messages[: report.messages_total]
        title = f"turn {turn}: {badge(report.strategy)} {escape(report.summary_line())}"
        parts.append(details(title, compaction_view_html(seen, report), open=turn == len(log)))
    return "".join(parts)
