"""The agent chat view: streaming answers, tool-call cards, approvals, sessions, token usage, the model.

Approval is data here as everywhere: Approve / Deny turn the pending ``function_approval_request`` into a
``function_approval_response`` sent on the same session, and the agent runs again. "Always allow" only
answers later requests for that tool the same way, on the user's behalf; it adds no second mechanism.
"""

from __future__ import annotations

import contextlib
import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import panel as pn

from agentnb._html import badge, escape, json_html, render_markdown

from ._discovery import Entity
from ._widgets import error_card, html_pane, set_html

__all__ = ["ChatView", "model_label"]


def model_label(agent: Any) -> str:
    """Name the model answering for ``agent``: provider class and model id, flagged when offline."""
    client = getattr(agent, "client", None) or getattr(agent, "chat_client", None)
    if client is None:
        return "unknown model"
    provider = type(client).__name__
    model_id = getattr(client, "model_id", None) or getattr(client, "model", None)
    offline = getattr(client, "OTEL_PROVIDER_NAME", "") == "agentnb.local" or type(client).__module__.startswith(
        "agentnb.local"
    )
    label = f"{provider} · {model_id}" if model_id else provider
    return f"{label} (offline)" if offline else label


@dataclass
class _ToolCard:
    """A tool call shown as a collapsible card; fields fill in as stream updates arrive."""

    call_id: str
    name: str
    arguments: Any
    started: float
    card: pn.Card
    body: pn.pane.HTML
    result: Any = None
    exception: str | None = None
    duration: float | None = None
    status: str = "running"

    def render(self) -> None:
        args = self.arguments
        if isinstance(args, str):
            with contextlib.suppress(ValueError):
                args = json.loads(args) if args else {}
        rows = [f"<div class='anb-muted'>call id {escape(self.call_id)}</div>", "<b>Arguments</b>", json_html(args)]
        if self.status != "running":
            if self.exception:
                rows += ["<b>Error</b>", f"<pre class='anb-error'>{escape(self.exception)}</pre>"]
            else:
                rows += ["<b>Result</b>", json_html(_display_value(self.result))]
        if self.duration is not None:
            rows.append(f"<div class='anb-muted anb-duration'>took {self.duration * 1000:.0f} ms</div>")
        set_html(self.body, "".join(rows))
        kind = {"running": "info", "done": "ok", "error": "err", "denied": "warn", "awaiting approval": "warn"}
        state = badge(self.status, kind.get(self.status, ""))
        dur = f" <span class='anb-muted'>{self.duration * 1000:.0f} ms</span>" if self.duration is not None else ""
        self.card.title = f"⚙ {escape(self.name)} {state}{dur}"


def _display_value(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool, type(None), list, dict)):
        return value
    from ._widgets import jsonable

    return jsonable(value)


@dataclass
class _SessionView:
    """The transcript and counters the UI keeps for one agent session."""

    session: Any
    label: str
    transcript: pn.Column
    usage: dict[str, int] = field(default_factory=lambda: {"input": 0, "output": 0, "total": 0})
    pending: dict[str, Any] = field(default_factory=dict)  # request id -> approval request content
    answers: dict[str, Any] = field(default_factory=dict)  # request id -> approval response content
    always_allow: set[str] = field(default_factory=set)
    cards: dict[str, _ToolCard] = field(default_factory=dict)
    turns: int = 0


class ChatView:
    """Chat with one agent: streaming text, tool cards, approvals, sessions and usage.

    Example:
        >>> from agentnb.devui.demos import demo_catalog
        >>> from agentnb.devui._chat import ChatView
        >>> view = ChatView(demo_catalog().agents[0])
        >>> view.panel()  # doctest: +SKIP
    """

    def __init__(self, entity: Entity, *, store: Any = None) -> None:
        self.entity = entity
        self.agent = entity.obj
        self.store = store
        self._sessions: dict[str, _SessionView] = {}
        self._current: _SessionView | None = None
        self._busy = False
        self._layout: pn.viewable.Viewable | None = None

        self.model_info = html_pane("", css_classes=["anb-model"])
        self.usage_info = html_pane("", css_classes=["anb-usage"])
        self.session_select = pn.widgets.Select(label="Session", options=[], width=220, css_classes=["anb-session"])
        self.new_session_button = pn.widgets.Button(label="New session", color="default", width=110)
        self.resume_select = pn.widgets.Select(label="Resume stored session", options=[], width=240)
        self.resume_button = pn.widgets.Button(label="Resume", width=80)
        self.input = pn.widgets.TextInput(
            placeholder=f"Message {entity.name}…", sizing_mode="stretch_width", css_classes=["anb-chat-input"]
        )
        self.send_button = pn.widgets.Button(label="Send", color="primary", width=90, css_classes=["anb-chat-send"])
        self.status = html_pane("", css_classes=["anb-chat-status"])
        self.transcript_holder = pn.Column(sizing_mode="stretch_width")

        self.new_session_button.on_click(lambda _e: self.new_session())
        self.session_select.param.watch(self._on_switch, "value")
        self.send_button.on_click(self._on_send)
        self.input.param.watch(self._on_enter, "enter_pressed")
        self.resume_button.on_click(self._on_resume)
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
        return pn.Column(
            header,
            pn.Row(self.model_info, self.usage_info, sizing_mode="stretch_width"),
            controls,
            self.transcript_holder,
            self.status,
            pn.Row(self.input, self.send_button, sizing_mode="stretch_width"),
            sizing_mode="stretch_width",
            css_classes=["anb-chat-view"],
        )

    # --------------------------------------------------------------------------------------------- sessions
    def new_session(self) -> None:
        """Start a fresh session and show it."""
        session = self.agent.create_session()
        label = f"session {len(self._sessions) + 1} · {str(getattr(session, 'session_id', ''))[:8]}"
        self._add_session(session, label)

    def _add_session(self, session: Any, label: str) -> _SessionView:
        transcript = pn.Column(
            sizing_mode="stretch_width", min_height=300, max_height=620, scroll=True, css_classes=["anb-transcript"]
        )
        view = _SessionView(session=session, label=label, transcript=transcript)
        self._sessions[label] = view
        self.session_select.options = list(self._sessions)
        self.session_select.value = label
        self._show(view)
        return view

    def _on_switch(self, event: Any) -> None:
        view = self._sessions.get(event.new)
        if view is not None and view is not self._current:
            self._show(view)

    def _show(self, view: _SessionView) -> None:
        self._current = view
        self.transcript_holder.objects = [view.transcript]
        self._refresh_usage()

    def refresh_stored_sessions(self) -> None:
        """List the sessions saved in the run store (for Resume)."""
        if self.store is None:
            return
        try:
            rows = self.store.list_sessions()
        except Exception:  # the store is optional for chatting; a failure only hides Resume
            return
        ids = [r["session_id"] if isinstance(r, dict) else str(r) for r in rows]
        self.resume_select.options = ids

    async def _on_resume(self, _event: Any = None) -> None:
        session_id = self.resume_select.value
        if not session_id or self.store is None:
            return
        await self.resume(session_id)

    async def resume(self, session_id: str) -> None:
        """Load a stored session, show its history, and offer its pending approvals again."""
        from agentnb import AgentSession, pending_approval_requests

        try:
            data = self.store.load_session(session_id) if self.store is not None else None
            if data is None:
                raise KeyError(f"No stored session {session_id!r}.")
            session = AgentSession.from_dict(json.loads(data))
            pending = await pending_approval_requests(session, agent=self.agent)
        except Exception as exc:
            self._require_view().transcript.append(error_card(exc, title="Cannot resume session"))
            return
        view = self._add_session(session, f"resumed · {session_id[:8]}")
        for message in _session_messages(session):
            self._append_message(view, message)
        if pending:
            view.pending = {str(r.id): r for r in pending}
            view.answers = {}
            for request in pending:
                view.transcript.append(self._approval_card(view, request))

    def _save_session(self, view: _SessionView) -> None:
        if self.store is None or not hasattr(view.session, "to_dict"):
            return
        try:
            self.store.save_session(view.session.session_id, json.dumps(view.session.to_dict()))
        except Exception:  # persisting is best effort; the live session keeps working
            return
        self.refresh_stored_sessions()

    # ------------------------------------------------------------------------------------------------ turns
    def _on_enter(self, _event: Any) -> None:
        pn.state.execute(self._on_send)

    async def _on_send(self, _event: Any = None) -> None:
        text = (self.input.value_input or self.input.value or "").strip()
        if not text or self._busy:
            return
        self.input.value = ""
        self.input.value_input = ""
        await self.send(text)

    async def send(self, text: str) -> None:
        """Send a user message on the current session and stream the answer."""
        from agentnb import Message

        view = self._require_view()
        view.transcript.append(_bubble("user", render_markdown(text)))
        await self._run_turn(view, Message("user", text))

    def _require_view(self) -> _SessionView:
        if self._current is None:
            self.new_session()
        assert self._current is not None
        return self._current

    async def _run_turn(self, view: _SessionView, message: Any) -> None:
        from agentnb import _telemetry

        self._busy = True
        self.send_button.disabled = True
        set_html(self.status, "<span class='anb-muted'>running…</span>")
        record = _TurnRecord.start(self.store, self.entity.name, view, message, model_label(self.agent))
        # One span around the turn gives its model and tool spans a shared trace and this run's id.
        span = _telemetry.start_span(f"devui.chat {self.entity.name}", {_telemetry.WORKFLOW_RUN_ID: record.run_id})
        bubble: pn.pane.HTML | None = None
        text = ""
        started = time.perf_counter()
        try:
            with _telemetry.use_span(span):
                stream = self.agent.run(message, session=view.session, stream=True)
                async for update in stream:
                    for content in getattr(update, "contents", None) or []:
                        kind = getattr(content, "type", None)
                        if kind == "text" and content.text:
                            if bubble is None:
                                bubble = _bubble("assistant", "", author=_author(update, self.entity.name))
                                view.transcript.append(bubble)
                            text += content.text
                            set_html(bubble, _bubble_html("assistant", render_markdown(text), _author(update, "")))
                        elif kind == "text_reasoning" and content.text:
                            view.transcript.append(
                                html_pane(f"<div class='anb-reasoning'>{escape(content.text)}</div>")
                            )
                        elif kind == "function_call":
                            self._on_call(view, content)
                            bubble, text = None, ""  # text after tool calls starts a new bubble
                        elif kind == "function_result":
                            self._on_result(view, content)
                        elif kind == "error":
                            view.transcript.append(
                                html_pane(f"<div class='anb-error'>⚠ {escape(getattr(content, 'message', ''))}</div>")
                            )
                final = await stream.get_final_response()
        except Exception as exc:
            _telemetry.end_span(span, error=exc)
            record.finish("failed", error=f"{type(exc).__name__}: {exc}")
            view.transcript.append(error_card(exc, title=f"{self.entity.name} failed"))
            set_html(self.status, "<span class='anb-error'>the run failed; the session is kept</span>")
            return
        finally:
            self._busy = False
            self.send_button.disabled = False
        _telemetry.end_span(span)
        view.turns += 1
        self._reconcile(view, final)
        # The final response carries the turn's summed usage, so stream-level usage updates are not added.
        self._add_usage(view, getattr(final, "usage_details", None))
        self._refresh_model(getattr(final, "model_id", None))
        elapsed = time.perf_counter() - started
        set_html(self.status, f"<span class='anb-muted'>answered in {elapsed:.2f} s</span>")
        self._save_session(view)
        waiting = bool(getattr(final, "user_input_requests", None))
        record.finish("awaiting_approval" if waiting else "completed", response=final)
        await self._show_approvals(view, final)

    # ------------------------------------------------------------------------------------------ tool cards
    def _on_call(self, view: _SessionView, content: Any) -> None:
        call_id = str(getattr(content, "call_id", "") or "")
        card = view.cards.get(call_id)
        if card is None:
            body = html_pane("")
            panel_card = pn.Card(
                body, collapsed=True, sizing_mode="stretch_width", css_classes=["anb-tool-card"], title=""
            )
            card = _ToolCard(
                call_id=call_id,
                name=str(getattr(content, "name", "") or "tool"),
                arguments=getattr(content, "arguments", None),
                started=time.perf_counter(),
                card=panel_card,
                body=body,
            )
            view.cards[call_id] = card
            view.transcript.append(panel_card)
        else:
            card.arguments = _merge_arguments(card.arguments, getattr(content, "arguments", None))
            if getattr(content, "name", None):
                card.name = content.name
        card.render()

    def _on_result(self, view: _SessionView, content: Any) -> None:
        call_id = str(getattr(content, "call_id", "") or "")
        card = view.cards.get(call_id)
        if card is None:
            return
        if card.status == "awaiting approval":
            card.started = time.perf_counter()  # time the tool, not the human deciding
        card.result = getattr(content, "result", None)
        card.exception = getattr(content, "exception", None)
        card.duration = time.perf_counter() - card.started
        props = getattr(content, "additional_properties", None) or {}
        card.status = "error" if card.exception else ("denied" if props.get("approval") == "rejected" else "done")
        card.render()

    def _reconcile(self, view: _SessionView, final: Any) -> None:
        """Fill cards from the assembled response (arguments streamed in pieces arrive whole here)."""
        for message in getattr(final, "messages", None) or []:
            for content in getattr(message, "contents", None) or []:
                kind = getattr(content, "type", None)
                call_id = str(getattr(content, "call_id", "") or "")
                card = view.cards.get(call_id)
                if kind == "function_call":
                    if card is None:
                        self._on_call(view, content)
                    else:
                        card.arguments = getattr(content, "arguments", card.arguments)
                        card.render()
                elif kind == "function_result" and card is not None and card.status == "running":
                    self._on_result(view, content)

    # ---------------------------------------------------------------------------------------------- approvals
    async def _show_approvals(self, view: _SessionView, final: Any) -> None:
        requests = [
            c for c in (getattr(final, "user_input_requests", None) or []) if c.type == "function_approval_request"
        ]
        if not requests:
            return
        view.pending = {str(r.id): r for r in requests}
        view.answers = {}
        for request in requests:
            name = str(getattr(request.function_call, "name", ""))
            card = view.cards.get(str(getattr(request.function_call, "call_id", "")))
            if card is not None:
                card.status = "awaiting approval"
                card.render()
            if name in view.always_allow:
                view.transcript.append(
                    html_pane(f"<div class='anb-muted'>✔ {escape(name)} approved automatically (always allow)</div>")
                )
                view.answers[str(request.id)] = request.to_function_approval_response(True)
            else:
                view.transcript.append(self._approval_card(view, request))
        await self._maybe_resume(view)

    def _approval_card(self, view: _SessionView, request: Any) -> pn.viewable.Viewable:
        call = request.function_call
        name = str(getattr(call, "name", ""))
        args = getattr(call, "arguments", None)
        info = html_pane(
            f"<div class='anb-card'><div class='anb-head'><span class='anb-title'>Approval needed</span>"
            f"{badge(name, 'warn')}</div>The agent wants to call <b>{escape(name)}</b> with{json_html(args)}</div>"
        )
        approve = pn.widgets.Button(label="Approve", color="success", width=100, css_classes=["anb-approve"])
        deny = pn.widgets.Button(label="Deny", color="danger", width=100, css_classes=["anb-deny"])
        always = pn.widgets.Checkbox(label=f"Always allow {name}", css_classes=["anb-always"])
        reason = pn.widgets.TextInput(placeholder="reason (optional, sent with a denial)", width=260)
        box = pn.Column(info, pn.Row(approve, deny, always, reason), css_classes=["anb-approval"])

        async def answer(approved: bool) -> None:
            if str(request.id) not in view.pending or str(request.id) in view.answers:
                return
            approve.disabled = deny.disabled = always.disabled = reason.disabled = True
            if approved and always.value:
                view.always_allow.add(name)
            text = "approved" if approved else "denied"
            box.append(html_pane(f"<div class='anb-muted anb-answer'>You {text} {escape(name)}.</div>"))
            if approved and always.value:
                from agentnb import create_always_approve_tool_response

                # Still an approval response; a ToolApprovalMiddleware on the agent also keeps it as a rule.
                response = create_always_approve_tool_response(request)
            else:
                response = request.to_function_approval_response(
                    approved, reason=None if approved else (reason.value or None)
                )
            view.answers[str(request.id)] = response
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
        if not view.pending or set(view.pending) - set(view.answers):
            return
        from agentnb import Message

        answers = [view.answers[k] for k in view.pending]
        view.pending, view.answers = {}, {}
        await self._run_turn(view, Message("user", answers))

    # ----------------------------------------------------------------------------------------- model & usage
    def _add_usage(self, view: _SessionView, usage: Any) -> None:
        if not usage:
            return
        get = usage.get if isinstance(usage, dict) else lambda k, d=None: getattr(usage, k, d)
        inp = int(get("input_token_count", 0) or 0)
        out = int(get("output_token_count", 0) or 0)
        view.usage["input"] += inp
        view.usage["output"] += out
        view.usage["total"] += int(get("total_token_count", 0) or 0) or inp + out
        self._refresh_usage()

    def _refresh_usage(self) -> None:
        view = self._current
        if view is None:
            return
        inp, out, total = view.usage["input"], view.usage["output"], view.usage["total"]
        set_html(
            self.usage_info,
            f"<span class='anb-muted'>tokens</span> {badge(f'in {inp}', 'info')} "
            f"{badge(f'out {out}', 'info')} {badge(f'total {total}')} "
            f"<span class='anb-muted'>{view.turns} turn(s)</span>",
        )

    def _refresh_model(self, model_id: str | None = None) -> None:
        label = model_label(self.agent)
        if model_id and model_id not in label:
            label = f"{label} · answered by {model_id}"
        set_html(self.model_info, f"<span class='anb-muted'>model</span> {badge(label, 'info')}")

    def _append_message(self, view: _SessionView, message: Any) -> None:
        role = str(getattr(message, "role", "assistant"))
        for content in getattr(message, "contents", None) or []:
            kind = getattr(content, "type", None)
            if kind == "text" and content.text:
                view.transcript.append(_bubble(role, render_markdown(content.text)))
            elif kind == "function_call":
                self._on_call(view, content)
            elif kind == "function_result":
                self._on_result(view, content)


@dataclass
class _TurnRecord:
    """Mirrors one chat turn into the run store, so it is listed with every other run (best effort)."""

    store: Any
    run_id: str

    @classmethod
    def start(cls, store: Any, name: str, view: _SessionView, message: Any, model: str) -> _TurnRecord:
        run_id = uuid.uuid4().hex
        if store is None:
            return cls(None, run_id)
        try:
            store.start_run(
                run_id,
                kind="agent",
                name=name,
                started_at=None,
                metadata={"session_id": str(getattr(view.session, "session_id", "")), "model": model, "via": "devui"},
            )
            store.add_events(run_id, [{"type": "input", "data": _message_record(message)}])
        except Exception:  # a busy or read-only store must not stop the chat
            return cls(None, run_id)
        return cls(store, run_id)

    def finish(self, status: str, *, error: str | None = None, response: Any = None) -> None:
        if self.store is None:
            return
        try:
            if response is not None:
                events = [
                    {"type": "message", "data": _message_record(m)} for m in getattr(response, "messages", None) or []
                ]
                usage = getattr(response, "usage_details", None)
                if usage:
                    events.append({"type": "usage", "data": dict(usage)})
                self.store.add_events(self.run_id, events)
            self.store.finish_run(self.run_id, status=status, ended_at=None, error=error)
        except Exception:
            return


def _message_record(message: Any) -> Any:
    if hasattr(message, "to_dict"):
        try:
            return message.to_dict()
        except Exception:
            return {"text": str(getattr(message, "text", ""))}
    return {"text": str(message)}


def _author(update: Any, default: str) -> str:
    return str(getattr(update, "author_name", None) or default)


def _bubble_html(role: str, body_html: str, author: str = "") -> str:
    who = escape(author or role)
    return f"<div class='anb-msg anb-{escape(role)}'><div class='anb-role'>{who}</div>{body_html}</div>"


def _bubble(role: str, body_html: str, *, author: str = "") -> pn.pane.HTML:
    return html_pane(_bubble_html(role, body_html, author), css_classes=[f"anb-bubble-{role}"])


def _merge_arguments(old: Any, new: Any) -> Any:
    """Join argument fragments of a streamed function call."""
    if new is None:
        return old
    if isinstance(old, str) and isinstance(new, str):
        return old + new
    return new


def _session_messages(session: Any) -> list[Any]:
    """The session's stored history (kept by the default in-memory history provider), if any."""
    try:
        return list(getattr(session, "messages", None) or [])
    except Exception:  # a session without readable history still resumes
        return []
