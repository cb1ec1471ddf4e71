"""The agent chat view: streaming answers, tool-call cards, approvals, sessions, token usage, the model.

The conversation is Panel's own ``ChatFeed``: one ``ChatMessage`` per user message, answer, tool call,
approval and error, each holding markup the DevUI built from escaped or sanitized parts (never a raw
string Panel would render as Markdown, which would pass model HTML through). The feed scrolls by itself;
Panel's ``ChatAreaInput`` and any approval card waiting for an answer stay docked below it. A side panel
(collapsible, resizable) shows the agent's tools, a context inspector (tokens per turn, messages by role),
the session's events and a link to the last turn's trace; for a harness agent it also shows the session's
todos, mode, loop, background tasks, files touched and memory files, refreshed as tools change them, and a
resumed stored session shows them as it left them.

Approval is data here as everywhere, and the core's :class:`~agentnb._approval_driver.ApprovalDriver` runs
it: Approve / Deny answer the pending ``function_approval_request`` with a ``function_approval_response``
sent on the same session, and the agent runs again. "Always allow" keeps a standing rule in the session for
that tool from that source (an MCP server's ``delete`` never covers another's), which the session's
:class:`~agentnb.ApprovalPolicy` then applies to later requests; it adds no second mechanism.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import time
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, cast

import panel as pn

from agentnb._agents import Agent
from agentnb._approval_driver import ApprovalDriver
from agentnb._html import badge, escape, json_html, render_markdown, table
from agentnb._sessions import AgentSession
from agentnb._tools import FunctionTool, SupportsToolExpansion
from agentnb._types import AgentResponse, AgentResponseUpdate, Content, Message
from agentnb.skills import SkillsProvider
from agentnb.skills._display import skills_panel_html, turn_activity

from ._discovery import Entity
from ._tokens import TokenLedger
from ._widgets import error_card, highlight_code, html_pane, readable, set_html, watch

if TYPE_CHECKING:
    from agentnb.store import Store

__all__ = ["ChatView", "model_label", "stored_session_label"]

#: The transcript fills the window below the page header, the chat header and above the docked message box.
#: While approval cards wait in the dock, the transcript gives up their height (a CSS variable set on the view,
#: inherited through Panel's shadow roots), so the cards' buttons stay on screen.
_TRANSCRIPT_HEIGHT = "calc(100vh - 330px - var(--anb-dock-h, 0px))"
_DOCK_HEIGHT = 230
_SIDE_HEIGHT = "calc(100vh - 190px)"
_MAX_EVENTS = 200
#: Messages the feed keeps rendered around the visible ones (Panel's default, 50, would drop older turns).
_LOAD_BUFFER = 1000
#: Avatars by kind of message, one character each (text, not emoji, which many fonts lack). Set explicitly,
#: so no author name ever maps to one of Panel's logo images.
_AVATARS = {"user": "Y", "tool": "⚙", "error": "!", "system": "S", "reasoning": "…"}


def model_label(agent: Any) -> str:
    """Name the model answering for ``agent``: provider class and model id, flagged when offline."""
    if not isinstance(agent, Agent):  # any object with run() can be an entity; it need not say its model
        return "unknown model"
    client = agent.client
    provider = type(client).__name__
    model_id = agent.model_id
    offline = type(client).__module__.startswith("agentnb.local")
    label = f"{provider} · {model_id}" if model_id else provider
    return f"{label} (offline)" if offline else label


def stored_session_label(messages: list[Message], updated_at: str, session_id: str, agent: str = "") -> str:
    """A readable name for a stored session: its first user message, the agent, and when it was saved."""
    first = next((m.text for m in messages if m.role == "user" and m.text), "")
    first = " ".join(first.split())
    if len(first) > 48:
        first = first[:47] + "…"
    when = updated_at[:16].replace("T", " ")
    who = f" · {agent}" if agent else ""
    return f"{first or '(no text)'}{who} · {when} · {session_id[:6]}"


@dataclass
class _ToolCard:
    """A tool call shown as a collapsible card; fields fill in as stream updates arrive."""

    call_id: str
    name: str
    arguments: Any
    started: float
    card: pn.Card
    body: pn.pane.HTML
    message: pn.chat.ChatMessage
    result: Any = None
    exception: str | None = None
    duration: float | None = None
    status: str = "running"

    def render(self) -> None:
        args: Any = self.arguments
        if isinstance(args, str):
            with contextlib.suppress(ValueError):
                args = json.loads(args) if args else {}
        rows = [f"<div class='anb-muted'>call id {escape(self.call_id)}</div>", "<b>Arguments</b>", json_html(args)]
        if self.status != "running":
            if self.exception:
                rows += ["<b>Error</b>", f"<pre class='anb-error'>{escape(self.exception)}</pre>"]
            else:
                rows += ["<b>Result</b>", json_html(readable(self.result))]
        if self.duration is not None:
            rows.append(f"<div class='anb-muted anb-duration'>took {self.duration * 1000:.0f} ms</div>")
        set_html(self.body, "".join(rows))
        kind = {"running": "info", "done": "ok", "error": "err", "denied": "warn", "awaiting approval": "warn"}
        state = badge(self.status, kind.get(self.status, ""))
        dur = f" <span class='anb-muted'>{self.duration * 1000:.0f} ms</span>" if self.duration is not None else ""
        self.card.title = f"⚙ {escape(self.name)} {state}{dur}"


@dataclass
class _SessionView:
    """The transcript, the docked approval cards and the counters the UI keeps for one agent session."""

    session: AgentSession
    label: str
    transcript: pn.chat.ChatFeed
    dock: pn.Column
    driver: ApprovalDriver  # runs the turns; holds the pending requests and the answers collected so far
    usage: dict[str, int] = field(default_factory=lambda: {"input": 0, "output": 0, "total": 0})
    turn_usage: list[tuple[int, int, int]] = field(default_factory=list)  # (input, output, total) per turn
    cards: dict[str, _ToolCard] = field(default_factory=dict)
    events: list[tuple[str, str, str]] = field(default_factory=list)  # (clock, kind, detail)
    last_run_id: str | None = None
    turns: int = 0
    last_answer: pn.chat.ChatMessage | None = None  # the turn's last assistant message (its footer: tokens)
    ledger: TokenLedger = field(default_factory=TokenLedger)  # every model call's usage, in order
    call_messages: list[pn.chat.ChatMessage] = field(default_factory=list)  # written by the running model call
    user_message: pn.chat.ChatMessage | None = None  # the message that opened the running turn
    # (turn, advertised skill names, what the turn did with skills), for agents with a SkillsProvider.
    skill_turns: list[tuple[int, list[str], dict[str, list[str]]]] = field(default_factory=list)
    # The conversation as a history provider outside the session's state keeps it (a file, a service),
    # read after each turn for the context panel; ``None`` when the session's state holds the history.
    stored_history: list[Message] | None = None

    def log(self, kind: str, detail: str) -> None:
        self.events.append((time.strftime("%H:%M:%S"), kind, detail))
        del self.events[:-_MAX_EVENTS]


class ChatView:
    """Chat with one agent: streaming text, tool cards, approvals, sessions, usage and a side panel.

    Args:
        entity: The agent to chat with.
        store: The run store turns and sessions are saved to (optional).
        on_open: Called as ``on_open("traces", run_id)`` to show a turn's trace in the traces view.

    Example:
        >>> from agentnb.devui.demos import demo_catalog
        >>> from agentnb.devui._chat import ChatView
        >>> view = ChatView(demo_catalog().agents[0])
        >>> view.panel()  # doctest: +SKIP
    """

    def __init__(
        self, entity: Entity, *, store: Store | None = None, on_open: Callable[[str, str], None] | None = None
    ) -> None:
        self.entity = entity
        self.agent = entity.obj
        self.store = store
        self.on_open = on_open
        self._sessions: dict[str, _SessionView] = {}
        self._current: _SessionView | None = None
        self._busy = False
        self._layout: pn.viewable.Viewable | None = None
        self._main: pn.Column | None = None

        self.model_info = html_pane("", css_classes=["anb-model"])
        self.usage_info = html_pane("", css_classes=["anb-usage"])
        self.session_select = pn.widgets.Select(label="Session", options=[], width=220, css_classes=["anb-session"])
        self.new_session_button = pn.widgets.Button(label="New session", color="default", width=110)
        self.resume_select = pn.widgets.Select(
            label="Stored sessions", options={}, width=300, css_classes=["anb-stored-sessions"]
        )
        self.resume_button = pn.widgets.Button(label="Resume", width=80)
        self.input = pn.chat.ChatAreaInput(
            placeholder=f"Message {entity.name}…",
            sizing_mode="stretch_width",
            rows=1,
            auto_grow=True,
            max_rows=8,
            css_classes=["anb-chat-input"],
        )
        self.send_button = pn.widgets.Button(label="Send", color="primary", width=90, css_classes=["anb-chat-send"])
        self.status = html_pane("", css_classes=["anb-chat-status"])
        self.transcript_holder = pn.Column(sizing_mode="stretch_width")
        self.dock_holder = pn.Column(sizing_mode="stretch_width", css_classes=["anb-dock"])

        self.tools_info = html_pane(self._tools_html(), css_classes=["anb-tools"])
        providers: list[object] = list(getattr(self.agent, "context_providers", None) or [])
        self.skill_providers = [p for p in providers if isinstance(p, SkillsProvider)]
        self.skills_info = html_pane(skills_panel_html(self.skill_providers, []), css_classes=["anb-skills"])
        self.context_info = html_pane("", css_classes=["anb-context"])
        self.events_info = html_pane("", css_classes=["anb-session-events"])
        self.harness_info = html_pane("", css_classes=["anb-harness-info"])
        self.is_harness = _has_harness(self.agent)
        self._harness_refresh: asyncio.Task[None] | None = None
        self.trace_button = pn.widgets.Button(
            label="Open the last turn's trace",
            disabled=True,
            sizing_mode="stretch_width",
            css_classes=["anb-open-trace"],
        )
        self.panel_toggle = pn.widgets.Toggle(
            label="Side panel", value=True, width=110, css_classes=["anb-panel-toggle"]
        )

        self.new_session_button.on_click(lambda _e: self.new_session())
        watch(self.session_select, self._on_switch, "value")
        self.send_button.on_click(self._on_send)
        watch(self.input, self._on_enter, "value")
        self.resume_button.on_click(self._on_resume)
        self.trace_button.on_click(self._on_open_trace)
        self._refresh_model()
        self.new_session()
        self.refresh_stored_sessions()

    # ----------------------------------------------------------------------------------------------- layout
    def panel(self) -> pn.viewable.Viewable:
        """Return the view's layout (built once: a widget must not sit in two layouts)."""
        if self._layout is None:
            self._layout = self._build()
        return self._layout

    def _build(self) -> pn.viewable.Viewable:
        description = escape(self.entity.description) if self.entity.description else ""
        header = html_pane(
            f"<div class='anb-head'><span class='anb-title'>▸ {escape(self.entity.name)}</span>"
            f"<span class='anb-muted'>{description}</span></div>"
        )
        controls = pn.Row(
            self.session_select,
            pn.Column(pn.Spacer(height=18), self.new_session_button),
            self.resume_select,
            pn.Column(pn.Spacer(height=18), self.resume_button),
            sizing_mode="stretch_width",
        )
        main = self._main = pn.Column(
            header,
            pn.Row(self.model_info, self.usage_info, self.panel_toggle, sizing_mode="stretch_width"),
            controls,
            self.transcript_holder,
            self.dock_holder,
            self.status,
            pn.Row(self.input, self.send_button, sizing_mode="stretch_width", css_classes=["anb-composer"]),
            sizing_mode="stretch_width",
            css_classes=["anb-chat-main"],
        )
        harness = (
            [pn.Card(self.harness_info, title="Harness", sizing_mode="stretch_width", css_classes=["anb-side-harness"])]
            if self.is_harness
            else []
        )
        skills_card = (
            [pn.Card(self.skills_info, title="Skills", sizing_mode="stretch_width", css_classes=["anb-side-skills"])]
            if self.skill_providers
            else []
        )
        side = pn.Column(
            *harness,
            pn.Card(self.tools_info, title="Tools", sizing_mode="stretch_width", css_classes=["anb-side-tools"]),
            *skills_card,
            pn.Card(self.context_info, title="Context", sizing_mode="stretch_width", css_classes=["anb-side-context"]),
            pn.Card(self.events_info, title="Events", sizing_mode="stretch_width", css_classes=["anb-side-events"]),
            pn.Card(self.trace_button, title="Traces", sizing_mode="stretch_width", css_classes=["anb-side-traces"]),
            *self._definition_cards(),
            width=340,
            scroll=True,
            # The panel's width follows the user's drag on its corner (a CSS resize handle).
            styles={"resize": "horizontal", "overflow": "auto", "height": _SIDE_HEIGHT, "min-width": "220px"},
            css_classes=["anb-side-panel"],
        )
        # param types link's callbacks with bare Callables; only a plain value link is made here.
        self.panel_toggle.link(side, value="visible")  # pyright: ignore[reportUnknownMemberType]
        return pn.Row(main, side, sizing_mode="stretch_width", css_classes=["anb-chat-view"])

    def _definition_cards(self) -> list[pn.Card]:
        """The agent's YAML, when it was built from a declarative file."""
        if self.entity.definition is None:
            return []
        body = html_pane(f"<pre class='anb-yaml'>{escape(self.entity.definition)}</pre>")
        return [pn.Card(body, title="Definition (YAML)", sizing_mode="stretch_width", css_classes=["anb-definition"])]

    def _tools_html(self) -> str:
        agent = self.agent
        tools = agent.tools if isinstance(agent, Agent) else []
        if not tools:
            return "<span class='anb-muted'>This agent has no tools.</span>"
        return "".join(_tool_html(item) for item in tools)

    # --------------------------------------------------------------------------------------------- sessions
    def new_session(self) -> None:
        """Start a fresh session and show it."""
        session = self.agent.create_session()
        label = f"session {len(self._sessions) + 1} · {session.session_id[:8]}"
        self._add_session(session, label)

    def _add_session(self, session: AgentSession, label: str) -> _SessionView:
        transcript = pn.chat.ChatFeed(
            sizing_mode="stretch_width",
            height=None,
            auto_scroll_limit=400,
            load_buffer=_LOAD_BUFFER,
            show_activity_dot=False,
            card_params={"styles": {"height": _TRANSCRIPT_HEIGHT, "min-height": "240px", "padding": "0px"}},
            css_classes=["anb-transcript"],
        )
        dock = pn.Column(sizing_mode="stretch_width")
        watch(dock, lambda _e: self._fit_dock(), "objects")
        # The chat resumes turn by turn (max_auto_rounds=0), so each answered round shows as its own turn.
        driver = ApprovalDriver(self.agent, session=session, max_auto_rounds=0)
        view = _SessionView(session=session, label=label, transcript=transcript, dock=dock, driver=driver)
        self._sessions[label] = view
        self.session_select.options = list(self._sessions)
        self.session_select.value = label
        self._show(view)
        return view

    def _fit_dock(self) -> None:
        waiting = self._current is not None and len(self._current.dock) > 0
        if self._main is not None:
            self._main.styles = {**self._main.styles, "--anb-dock-h": f"{_DOCK_HEIGHT if waiting else 0}px"}

    def _on_switch(self, event: Any) -> None:
        view = self._sessions.get(event.new)
        if view is not None and view is not self._current:
            self._show(view)

    def _show(self, view: _SessionView) -> None:
        self._current = view
        self.transcript_holder.objects = [view.transcript]
        self.dock_holder.objects = [view.dock]
        self._fit_dock()
        self._refresh_usage()
        self._schedule_harness(view)

    def refresh_stored_sessions(self, limit: int = 50) -> None:
        """List the sessions saved in the run store (for Resume), newest first, by a readable label."""
        if self.store is None:
            return
        try:
            rows = self.store.list_sessions()[:limit]
        except Exception:  # the store is optional for chatting; a failure only hides Resume
            return
        # The agent of each session, from the runs the DevUI recorded for it (best effort: newest 1,000).
        agents: dict[str, str] = {}
        with contextlib.suppress(Exception):
            for run in self.store.list_runs(kind="agent", limit=1000):
                metadata: dict[str, Any] = run.get("metadata") or {}
                session_ref = metadata.get("session_id")
                if session_ref:
                    agents[str(session_ref)] = str(run.get("name") or "")
        options: dict[str, str] = {}
        for row in rows:
            session_id = str(row["session_id"])
            try:
                session = AgentSession.from_dict(json.loads(self.store.load_session(session_id) or "{}"))
                messages = session.messages
            except Exception:  # an unreadable stored session is still listed, by its id
                messages = []
            label = stored_session_label(
                messages, str(row.get("updated_at") or ""), session_id, agents.get(session_id, "")
            )
            options[label] = session_id
        self.resume_select.options = options

    async def _on_resume(self, _event: Any = None) -> None:
        session_id = self.resume_select.value
        if not session_id or self.store is None:
            return
        await self.resume(session_id)

    async def resume(self, session_id: str) -> None:
        """Load a stored session, show its history, and offer its pending approvals again."""
        from agentnb import pending_approval_requests

        try:
            data = self.store.load_session(session_id) if self.store is not None else None
            if data is None:
                raise KeyError(f"No stored session {session_id!r}.")
            session = AgentSession.from_dict(json.loads(data))
            pending = await pending_approval_requests(session, agent=self.agent)
        except Exception as exc:  # the view's boundary: a bad stored session shows its error
            _post(self._require_view(), error_card(exc, title="Cannot resume session"), "error", "error")
            return
        view = self._add_session(session, f"resumed · {session_id[:8]}")
        await self._load_stored_history(view)
        for message in session.messages or view.stored_history or []:
            self._append_message(view, message)
        self._refresh_side(view)
        if pending:
            view.driver.waiting_on(pending)
            for request in pending:
                view.dock.append(self._approval_card(view, request))
        await self.refresh_harness(view)

    def _save_session(self, view: _SessionView) -> None:
        if self.store is None:
            return
        try:
            self.store.save_session(view.session.session_id, json.dumps(view.session.to_dict()))
        except Exception:  # persisting is best effort; the live session keeps working
            return
        self.refresh_stored_sessions()

    # ------------------------------------------------------------------------------------------------ turns
    def _on_enter(self, event: Any) -> None:
        # ChatAreaInput sets ``value`` when Enter sends (and clears its box); Shift+Enter adds a line.
        if event.new:
            pn.state.execute(functools.partial(self._on_send, text=event.new))

    async def _on_send(self, _event: Any = None, *, text: str | None = None) -> None:
        text = (text if text is not None else self.input.value_input or self.input.value or "").strip()
        if not text or self._busy:
            return
        self.input.param.update(value="", value_input="")
        await self.send(text)

    async def send(self, text: str) -> None:
        """Send a user message on the current session and stream the answer."""
        view = self._require_view()
        view.user_message = _post(view, _bubble("user", render_markdown(text)), "You", "user")
        await self._run_turn(view, Message("user", text))

    def _require_view(self) -> _SessionView:
        if self._current is None:
            self.new_session()
        assert self._current is not None
        return self._current

    async def _run_turn(self, view: _SessionView, message: Message) -> None:
        from agentnb import _telemetry

        self._busy = True
        self.send_button.disabled = True
        set_html(self.status, "<span class='anb-muted'>running…</span>")
        record = _TurnRecord.start(self.store, self.entity.name, view, message, model_label(self.agent))
        view.last_run_id = record.run_id
        view.log("turn", message.text[:80] or f"{len(message.contents)} answer(s)")
        # One span around the turn gives its model and tool spans a shared trace and this run's id.
        span = _telemetry.start_span(f"devui.chat {self.entity.name}", {_telemetry.WORKFLOW_RUN_ID: record.run_id})
        bubble: pn.pane.HTML | None = None
        text = ""
        view.last_answer = None
        view.call_messages = []
        opened_by: Literal["user", "tool"] = "tool" if any(c.type != "text" for c in message.contents) else "user"
        history_start = len(view.session.messages)
        started = time.perf_counter()
        try:
            final: AgentResponse[Any] | None = None
            with _telemetry.use_span(span):
                async for update in view.driver.run(message, stream=True):
                    if isinstance(update, AgentResponse):
                        final = update
                        continue
                    if not isinstance(update, AgentResponseUpdate):
                        continue  # the turn's start and the policy's answers: shown with the approvals
                    author = update.author_name or self.entity.name
                    for content in update.contents:
                        if content.type == "text" and content.text:
                            if bubble is None:
                                bubble = _bubble("assistant", "")
                                view.last_answer = _post(view, bubble, author, "assistant")
                                view.call_messages.append(view.last_answer)
                            text += content.text
                            set_html(bubble, _bubble_html("assistant", _answer_html(text)))
                        elif content.type == "text_reasoning" and content.text:
                            reasoning = html_pane(
                                f"<div class='anb-reasoning'>{escape(content.text)}</div>", css_classes=["anb-note"]
                            )
                            _post(view, reasoning, author, "reasoning")
                        elif content.type == "function_call":
                            self._on_call(view, content)
                            bubble, text = None, ""  # text after tool calls starts a new bubble
                        elif content.type == "function_result":
                            self._on_result(view, content)
                        elif content.type == "error":
                            view.log("error", content.message or "")
                            failure = html_pane(
                                f"<div class='anb-error'>⚠ {escape(content.message or '')}</div>",
                                css_classes=["anb-note"],
                            )
                            _post(view, failure, author, "error")
                        elif content.type == "usage" and content.usage_details:
                            self._on_model_call(view, content.usage_details, opened_by)
            assert final is not None  # the driver reports every turn's response
        except Exception as exc:  # the view's boundary: the failure is shown, the session is kept
            _telemetry.end_span(span, error=exc)
            record.finish("failed", error=f"{type(exc).__name__}: {exc}")
            view.log("failed", f"{type(exc).__name__}: {exc}")
            _post(view, error_card(exc, title=f"{self.entity.name} failed"), self.entity.name, "error")
            set_html(self.status, "<span class='anb-error'>the run failed; the session is kept</span>")
            await self._load_stored_history(view)
            self._refresh_side(view)
            await self.refresh_harness(view)
            return
        finally:
            self._busy = False
            self.send_button.disabled = False
        _telemetry.end_span(span)
        if not view.ledger.turn_calls(view.turns + 1) and final.usage_details:
            self._on_model_call(view, final.usage_details, opened_by)  # a client that reports usage per run only
        view.turns += 1
        self._note_skills(view, history_start)
        self._reconcile(view, final)
        # The final response carries the turn's summed usage, so stream-level usage updates are not added.
        self._add_usage(view, final)
        self._refresh_model(final.model_id)
        elapsed = time.perf_counter() - started
        set_html(self.status, f"<span class='anb-muted'>answered in {elapsed:.2f} s</span>")
        self._save_session(view)
        waiting = bool(final.user_input_requests)
        record.finish("awaiting_approval" if waiting else "completed", response=final)
        view.log("answered", f"{elapsed:.2f} s" + (" · waiting for approval" if waiting else ""))
        self.trace_button.disabled = self.on_open is None
        await self._show_approvals(view, final)
        await self._load_stored_history(view)
        self._refresh_side(view)
        await self.refresh_harness(view)

    async def _load_stored_history(self, view: _SessionView) -> None:
        """Read the history a provider keeps outside the session's state, for the context panel.

        Annotated as the requests annotated it (the same ids and groups, assigned the same way), so the
        compaction view can grey and place its messages; the copy read here is never saved.
        """
        if view.session.messages:
            view.stored_history = None
            return
        from agentnb._sessions import HistoryProvider, InMemoryHistoryProvider
        from agentnb.compaction import annotate_message_groups

        found: list[object] = list(getattr(self.agent, "context_providers", None) or [])
        providers = [p for p in found if isinstance(p, HistoryProvider) and not isinstance(p, InMemoryHistoryProvider)]
        for provider in providers:
            try:
                state: Any = view.session.state.get(provider.source_id)
                own = cast("dict[str, Any]", state) if isinstance(state, dict) else None
                messages = await provider.get_messages(view.session.session_id, state=own)
            except Exception as exc:  # the panel is best effort: a provider that cannot read shows nothing
                view.log("history", f"{type(exc).__name__}: {exc}")
                continue
            if messages:
                annotate_message_groups(messages)
                view.stored_history = messages
                return

    # ------------------------------------------------------------------------------------------ tool cards
    def _on_call(self, view: _SessionView, content: Content) -> None:
        call_id = str(content.call_id or "")
        card = view.cards.get(call_id)
        if card is None:
            body = html_pane("", css_classes=["anb-tool-body"])
            panel_card = pn.Card(
                body, collapsed=True, sizing_mode="stretch_width", css_classes=["anb-tool-card"], title=""
            )
            name = content.name or "tool"
            card = _ToolCard(
                call_id=call_id,
                name=name,
                arguments=content.arguments,
                started=time.perf_counter(),
                card=panel_card,
                body=body,
                message=_post(view, panel_card, f"{self.entity.name} · tool call", "tool"),
            )
            view.call_messages.append(card.message)
            view.cards[call_id] = card
            view.log("tool call", card.name)
        else:
            card.arguments = _merge_arguments(card.arguments, content.arguments)
            if content.name:
                card.name = content.name
        card.render()

    def _on_result(self, view: _SessionView, content: Content) -> None:
        card = view.cards.get(str(content.call_id or ""))
        if card is None:
            return
        if card.status == "awaiting approval":
            card.started = time.perf_counter()  # time the tool, not the human deciding
        card.result = content.result
        card.exception = content.exception
        card.duration = time.perf_counter() - card.started
        denied = content.additional_properties.get("approval") == "rejected"
        card.status = "error" if card.exception else ("denied" if denied else "done")
        view.log(f"tool {card.status}", card.name)
        card.render()
        self._schedule_harness(view)  # a todo ticked off, a memory written: show it while the turn goes on

    def _reconcile(self, view: _SessionView, final: AgentResponse[Any]) -> None:
        """Fill cards from the assembled response (arguments streamed in pieces arrive whole here)."""
        for message in final.messages:
            for content in message.contents:
                card = view.cards.get(str(content.call_id or ""))
                if content.type == "function_call":
                    if card is None:
                        self._on_call(view, content)
                    else:
                        card.arguments = content.arguments if content.arguments is not None else card.arguments
                        card.render()
                elif content.type == "function_result" and card is not None and card.status == "running":
                    self._on_result(view, content)

    # ---------------------------------------------------------------------------------------------- approvals
    async def _show_approvals(self, view: _SessionView, final: AgentResponse[Any]) -> None:
        del final  # the driver holds what the turn ended with
        requests = [r for r in view.driver.pending if r.function_call is not None]
        if not requests:
            return
        for request in requests:
            call = request.function_call
            assert call is not None
            name = call.name or ""
            view.log("approval", f"{name} waits for you")
            card = view.cards.get(str(call.call_id or ""))
            if card is not None:
                card.status = "awaiting approval"
                card.render()
            if view.driver.is_answered(request):  # a standing rule of the session ("always allow") covered it
                note = html_pane(
                    f"<div class='anb-muted'>✔ {escape(_scoped(request))} approved automatically (always allow)</div>",
                    css_classes=["anb-note"],
                )
                _post(view, note, "You", "user")
            else:
                view.dock.append(self._approval_card(view, request))
        await self._maybe_resume(view)

    def _approval_card(self, view: _SessionView, request: Content) -> pn.viewable.Viewable:
        call = request.function_call
        assert call is not None
        name = call.name or ""
        info = html_pane(
            f"<div class='anb-card anb-approval-card'><div class='anb-head'><span class='anb-title'>Approval needed"
            f"</span>{badge(name, 'warn')}</div>The agent wants to call <b>{escape(name)}</b> with"
            f"{json_html(call.arguments)}</div>",
            css_classes=["anb-approval-info"],
        )
        approve = pn.widgets.Button(label="Approve", color="success", width=100, css_classes=["anb-approve"])
        deny = pn.widgets.Button(label="Deny", color="danger", width=100, css_classes=["anb-deny"])
        always = pn.widgets.Checkbox(label=f"Always allow {_scoped(request)}", css_classes=["anb-always"])
        reason = pn.widgets.TextInput(placeholder="reason (optional, sent with a denial)", width=260)
        box = pn.Column(info, pn.Row(approve, deny, always, reason), css_classes=["anb-approval"])

        async def answer(approved: bool) -> None:
            if request not in view.driver.pending or view.driver.is_answered(request):
                return
            approve.disabled = deny.disabled = always.disabled = reason.disabled = True
            text = "approved" if approved else "denied"
            view.log(text, name)
            box.append(
                html_pane(
                    f"<div class='anb-muted anb-answer'>You {text} {escape(name)}.</div>", css_classes=["anb-note"]
                )
            )
            # Answered: the card leaves the dock and joins the conversation where it was asked.
            if box in view.dock:
                view.dock.remove(box)
            _post(view, box, "You", "user")
            view.driver.answer(
                request,
                approved,
                reason=None if approved else (reason.value or None),
                always=approved and bool(always.value),
            )
            await self._maybe_resume(view)

        async def on_approve(_e: Any) -> None:
            await answer(True)

        async def on_deny(_e: Any) -> None:
            await answer(False)

        approve.on_click(on_approve)
        deny.on_click(on_deny)
        return box

    async def _maybe_resume(self, view: _SessionView) -> None:
        """Run again once every pending request has an answer, sending all answers in one user message."""
        if not view.driver.pending or not view.driver.complete:
            return
        await self._run_turn(view, view.driver.take_answers())

    # ----------------------------------------------------------------------------------------- model & usage
    def _on_model_call(self, view: _SessionView, usage: Mapping[str, Any], opened_by: Literal["user", "tool"]) -> None:
        """Book one model call and label the messages it concerns with exact counts from its usage."""
        call = view.ledger.record(usage, turn=view.turns + 1, opened_by=opened_by)
        if view.call_messages:
            _footer(
                view.call_messages[-1],
                f"{call.output} tokens written (model call {call.index})",
                "anb-msg-tokens",
            )
        if call.index == 1 and view.user_message is not None and opened_by == "user":
            grew = "with the instructions" if call.added_by.startswith("instructions") else "added to the context"
            _footer(view.user_message, f"{call.added} tokens {grew}", "anb-msg-tokens")
        view.call_messages = []

    def _add_usage(self, view: _SessionView, final: AgentResponse[Any]) -> None:
        usage = final.usage_details
        if not usage:
            return
        inp = int(usage.get("input_token_count") or 0)
        out = int(usage.get("output_token_count") or 0)
        total = int(usage.get("total_token_count") or 0) or inp + out
        view.usage["input"] += inp
        view.usage["output"] += out
        view.usage["total"] += total
        view.turn_usage.append((inp, out, total))
        line = html_pane(
            f"<div class='anb-muted anb-msg-usage'>turn {view.turns} · {inp} in · {out} out · {total} tokens</div>",
            css_classes=["anb-note"],
        )
        if view.last_answer is not None:
            _add_footer(view.last_answer, line)
        else:
            _post(view, line, self.entity.name, "assistant")
        view.user_message = None
        self._refresh_usage()

    def _refresh_usage(self) -> None:
        view = self._current
        if view is None:
            return
        inp, out, total = view.usage["input"], view.usage["output"], view.usage["total"]
        set_html(
            self.usage_info,
            f"<span class='anb-muted'>session tokens</span> {badge(f'in {inp}', 'info')} "
            f"{badge(f'out {out}', 'info')} {badge(f'total {total}')} "
            f"<span class='anb-muted'>{view.turns} turn(s)</span>",
        )
        self._refresh_side(view)

    def _refresh_side(self, view: _SessionView) -> None:
        """The context inspector (tokens per turn, messages by role) and the session's events."""
        if view is not self._current:
            return
        ledger = view.ledger
        turns = table(
            ["turn", "calls", "in", "out", "total"],
            [(i + 1, len(ledger.turn_calls(i + 1)), *t) for i, t in enumerate(view.turn_usage)],
        )
        calls = table(
            ["turn", "call", "context in", "written", "added", "added by"],
            [(c.turn, c.index, c.input, c.output, c.added, c.added_by) for c in ledger.calls],
        )
        roles = ledger.by_role()
        by_source = table(
            ["from", "tokens", "measured as"],
            [
                (source, n, "output tokens" if source == "assistant" else "prompt growth")
                for source, n in sorted(roles.items(), key=lambda kv: (kv[0] != "assistant", kv[0]))
            ],
        )
        history: dict[str, list[int]] = {}
        kept = view.session.messages or view.stored_history or []
        for message in kept:
            counts = history.setdefault(message.role, [0, 0])
            counts[0] += 1
            counts[1] += len(message.text)
        messages = table(["role", "messages", "characters"], [(r, n, c) for r, (n, c) in sorted(history.items())])
        context = ledger.context
        set_html(
            self.context_info,
            f"<div class='anb-context-size'>context now: <b>{context if context is not None else 0}</b> tokens</div>"
            f"<div class='anb-role'>Tokens per turn</div>{turns if view.turn_usage else '<i>no turns yet</i>'}"
            f"<div class='anb-role'>Tokens by role</div>"
            f"{by_source if roles else '<i>no model calls yet</i>'}"
            "<div class='anb-muted anb-token-note'>Exact, from each model call's usage report. Input tokens are "
            "reported per call, not per message: what the prompt gained between two calls is counted for what "
            "was added (the user's message, or tool results), framing tokens included; the first call's input "
            "holds the instructions too. No tokenizer is used.</div>"
            # The widest table scrolls sideways inside the panel instead of running past its edge.
            f"<div class='anb-role'>Model calls</div><div class='anb-scroll-x'>"
            f"{calls if ledger.calls else '<i>none yet</i>'}</div>"
            f"<div class='anb-role'>History by role</div>{messages if history else '<i>empty</i>'}"
            + _compaction_html(view.session, kept),
        )
        if self.skill_providers:
            set_html(self.skills_info, skills_panel_html(self.skill_providers, view.skill_turns))
        recent = view.events[-30:][::-1]
        set_html(
            self.events_info,
            table(["time", "event", "detail"], recent) if recent else "<span class='anb-muted'>no events yet</span>",
        )

    async def refresh_harness(self, view: _SessionView | None = None) -> None:
        """Show what the harness providers hold in ``view``'s session (the current one by default)."""
        view = view or self._current
        if not self.is_harness or view is None or view is not self._current:
            return
        from agentnb.harness import harness_snapshot

        try:
            snapshot = await harness_snapshot(self.agent, view.session)
        except Exception as exc:  # a broken store shows its error in the panel, the chat keeps working
            set_html(self.harness_info, f"<div class='anb-error'>harness state: {escape(exc)}</div>")
            return
        set_html(self.harness_info, snapshot.to_html())

    def _schedule_harness(self, view: _SessionView) -> None:
        if not self.is_harness:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # built outside a running loop: the first turn or resume refreshes the panel
        if self._harness_refresh is None or self._harness_refresh.done():
            self._harness_refresh = loop.create_task(self.refresh_harness(view))

    def _note_skills(self, view: _SessionView, history_start: int) -> None:
        """Record which skills the turn advertised (the providers' session state) and loaded or used (its calls)."""
        if not self.skill_providers:
            return
        advertised: list[str] = []
        for provider in self.skill_providers:
            state: object = view.session.state.get(provider.source_id)
            names: object = cast("dict[str, object]", state).get("advertised") if isinstance(state, dict) else None
            if isinstance(names, list):
                advertised.extend(str(n) for n in cast("list[object]", names))
        activity = turn_activity(view.session.messages, history_start)
        view.skill_turns.append((view.turns, advertised, activity))
        for label in activity["loaded"]:
            view.log("skill", f"loaded {label}")
        for label in activity["used"]:
            view.log("skill", f"used {label}")

    def _on_open_trace(self, _event: Any) -> None:
        view = self._current
        if view is not None and view.last_run_id and self.on_open is not None:
            self.on_open("traces", view.last_run_id)

    def _refresh_model(self, model_id: str | None = None) -> None:
        label = model_label(self.agent)
        if model_id and model_id not in label:
            label = f"{label} · answered by {model_id}"
        set_html(self.model_info, f"<span class='anb-muted'>model</span> {badge(label, 'info')}")

    def _append_message(self, view: _SessionView, message: Message) -> None:
        for content in message.contents:
            if content.type == "text" and content.text:
                body = _answer_html(content.text) if message.role == "assistant" else render_markdown(content.text)
                user = "You" if message.role == "user" else (message.author_name or self.entity.name)
                _post(view, _bubble(message.role, body), user, message.role)
            elif content.type == "function_call":
                self._on_call(view, content)
            elif content.type == "function_result":
                self._on_result(view, content)


@dataclass
class _TurnRecord:
    """Mirrors one chat turn into the run store, so it is listed with every other run (best effort)."""

    store: Store | None
    run_id: str

    @classmethod
    def start(cls, store: Store | None, name: str, view: _SessionView, message: Message, model: str) -> _TurnRecord:
        run_id = uuid.uuid4().hex
        if store is None:
            return cls(None, run_id)
        try:
            store.start_run(
                run_id,
                kind="agent",
                name=name,
                started_at=None,
                metadata={"session_id": view.session.session_id, "model": model, "via": "devui"},
            )
            store.add_events(run_id, [{"type": "input", "data": message.to_dict()}])
        except Exception:  # a busy or read-only store must not stop the chat
            return cls(None, run_id)
        return cls(store, run_id)

    def finish(self, status: str, *, error: str | None = None, response: AgentResponse[Any] | None = None) -> None:
        if self.store is None:
            return
        try:
            if response is not None:
                events = [{"type": "message", "data": m.to_dict()} for m in response.messages]
                if response.usage_details:
                    events.append({"type": "usage", "data": dict(response.usage_details)})
                self.store.add_events(self.run_id, events)
            self.store.finish_run(self.run_id, status=status, ended_at=None, error=error)
        except Exception:  # a busy or read-only store must not stop the chat
            return


def _answer_html(text: str) -> str:
    """Model text as sanitized Markdown, its code blocks highlighted with a copy button."""
    return highlight_code(render_markdown(text))


def _bubble_html(role: str, body_html: str) -> str:
    # The chat message around it names the author; the role stays as a class for styles and tests.
    return f"<div class='anb-msg anb-{escape(role)} anb-feed-msg'>{body_html}</div>"


def _bubble(role: str, body_html: str) -> pn.pane.HTML:
    # "message" asks ChatMessage for its speech-bubble style; panes without a class get it automatically,
    # so every other pane the view puts in the feed carries a class of its own.
    return html_pane(_bubble_html(role, body_html), css_classes=[f"anb-bubble-{role}", "message"])


def _footer(message: pn.chat.ChatMessage, text: str, css: str) -> None:
    """Add a line under a chat message (token counts)."""
    _add_footer(message, html_pane(f"<div class='anb-muted {css}'>{escape(text)}</div>", css_classes=["anb-note", css]))


def _add_footer(message: pn.chat.ChatMessage, pane: pn.pane.HTML) -> None:
    # Panel declares footer_objects as a param Children without a type the checker can read.
    footer = cast("list[Any]", message.footer_objects)  # pyright: ignore[reportUnknownMemberType]
    message.footer_objects = [*footer, pane]


def _compaction_html(session: AgentSession, messages: list[Message]) -> str:
    """The compaction view of a session whose turns were compacted: the budget bar, left-out groups greyed
    in place, summaries where they stood in; every recorded turn can be replayed (expand it).

    ``messages`` is the session's history, wherever a provider keeps it."""
    from ..compaction import compaction_replay_html, session_compaction_log

    log = session_compaction_log(session)
    if not log:
        return ""
    compacted = sum(1 for r in log if r.compacted)
    return (
        f"<div class='anb-role'>Compaction ({compacted} of {len(log)} turn(s) compacted)</div>"
        f"<div class='anb-devui-compaction'>{compaction_replay_html(messages, log)}</div>"
    )


def _post(view: _SessionView, obj: pn.viewable.Viewable, user: str, kind: str) -> pn.chat.ChatMessage:
    """Add one entry to the session's feed: a Panel object (already safe markup) as a ``ChatMessage``."""
    message = pn.chat.ChatMessage(
        obj,
        user=user,
        avatar=_AVATARS.get(kind) or (user[:1].upper() or "A"),
        show_reaction_icons=False,
        show_copy_icon=False,
        show_edit_icon=False,
        show_activity_dot=False,
        sizing_mode="stretch_width",
        css_classes=[f"anb-chat-{kind}"],
    )
    view.transcript.append(message)
    return message


def _tool_html(item: object) -> str:
    """One tool of an agent for the side panel: name, whether it needs approval, what it does."""
    if isinstance(item, SupportsToolExpansion) and not isinstance(item, FunctionTool):
        # A tool provider (an MCP server): its tools are only known once it is connected for a run.
        from agentnb.mcp import MCPTool

        name, text, kind = (
            (item.name, item.description, "MCP server")
            if isinstance(item, MCPTool)
            else (type(item).__name__, "", "tool provider")
        )
        return (
            f"<div class='anb-tool'><b>{escape(name)}</b> {badge(kind, 'info')}"
            f"<div class='anb-muted'>{escape(text)}</div></div>"
        )
    if isinstance(item, FunctionTool):
        function = item
    elif isinstance(item, Agent):
        function = item.as_tool()
    else:
        function = FunctionTool(cast("Callable[..., Any]", item))  # the agent's tools are otherwise functions
    needs = badge("needs approval", "warn") if function.approval_mode == "always_require" else ""
    return (
        f"<div class='anb-tool'><b>{escape(function.name)}</b> {needs}"
        f"<div class='anb-muted'>{escape(function.description)}</div></div>"
    )


def _scoped(request: Content) -> str:
    """The tool a request is about, with its source when it has one (``search from docs``)."""
    name = request.function_call.name if request.function_call is not None else None
    source = request.additional_properties.get("server_label")
    return f"{name or 'tool'} from {source}" if isinstance(source, str) else name or "tool"


def _merge_arguments(old: Any, new: Any) -> Any:
    """Join argument fragments of a streamed function call."""
    if new is None:
        return old
    if isinstance(old, str) and isinstance(new, str):
        return old + new
    return new


def _has_harness(agent: Any) -> bool:
    """Whether ``agent`` carries harness providers (only then the DevUI shows the harness panel)."""
    if not getattr(agent, "context_providers", None):
        return False  # a plain agent: the harness is not even imported
    from agentnb.harness import is_harness_agent

    return is_harness_agent(agent)
