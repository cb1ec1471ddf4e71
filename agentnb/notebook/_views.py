"""Live widgets for agent runs: the streaming view with approval cards, and the chat widget.

The views are thin: an :class:`~agentnb.notebook.AgentRun` does the work; a view renders its transcript
(tokens as they stream, tool calls as they start and finish, a usage line), shows an
:class:`~agentnb.notebook.ApprovalCard` per pending request, and offers Stop. Clicks resume the run as a
background task on the kernel's event loop, streaming into the same view, so a cell never has to block.
"""

from __future__ import annotations

import asyncio
import time
import warnings
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .. import _html as h
from ._approval import ApprovalCard, AutoApprove
from ._display import agent_identity, messages_html, usage_text
from ._run import AgentRun
from ._widgets import close_tree, current_cell, ipy_display, on_click, settled_display, widget_bundle

if TYPE_CHECKING:
    from .._agents import SupportsAgentRun

__all__ = ["AgentView", "ChatWidget", "kernel_supports_awaiting_widgets"]

_MIN_RENDER_INTERVAL = 0.05  # seconds between transcript refreshes while tokens stream

_STATUS_BADGES = {
    "idle": ("idle", ""),
    "running": ("running…", "info"),
    "waiting": ("waiting for approval", "warn"),
    "done": ("done", "ok"),
    "stopped": ("stopped", "warn"),
    "error": ("error", "err"),
}


def kernel_supports_awaiting_widgets() -> bool:
    """Whether widget clicks reach the kernel while a cell awaits (ipykernel 7+).

    On ipykernel 6 the kernel handles no comm messages until the awaiting cell finishes, so a cell that
    awaits a click would wait forever.
    """
    try:
        import ipykernel
    except ImportError:
        return False
    try:
        major = int(str(getattr(ipykernel, "__version__", "0")).split(".")[0])
    except ValueError:
        return False
    return major >= 7


def in_kernel() -> bool:
    """Whether this runs inside a Jupyter kernel (widgets there can receive clicks)."""
    try:
        from IPython.core.getipython import get_ipython
    except ImportError:
        return False
    ip = get_ipython()
    return ip is not None and getattr(ip, "kernel", None) is not None


def _agent_line(agent: SupportsAgentRun) -> str:
    name, client, model = agent_identity(agent)
    if client is None:
        return name
    return f"{name} · {client}" + (f" ({model})" if model else "")


def _agent_title(agent: SupportsAgentRun) -> str:
    name, client, model = agent_identity(agent)
    bits = [f"<span class='anb-title'>{h.escape(name)}</span>"]
    if client:
        bits.append(h.badge(client, "info"))
    if model:
        bits.append(h.badge(model))
    return " ".join(bits)


class AgentView:
    """A live view of an agent run: streamed reply, tool calls, approval cards, usage and a Stop button.

    Args:
        agent: The agent to run.
        session: The session to run on (a new one when omitted); approvals and history live there.
        auto_approve: Unattended approval policy: ``True``/``False``, tool names, or a callable
            (default: ``$AGENTNB_AUTO_APPROVE``, else ask with a card).
        stream: Stream tokens as they arrive (``False`` shows each reply when it is complete).

    Example:
        ```python
        from agentnb import Agent
        from agentnb.local import ScriptedChatClient
        from agentnb.notebook import AgentView

        view = AgentView(Agent(ScriptedChatClient(["Hello!"]), name="greeter"))
        view.run("Hi")  # shows the view; the reply streams in while the cell is already done
        ```
    """

    def __init__(
        self,
        agent: Any,
        *,
        session: Any = None,
        auto_approve: AutoApprove = None,
        stream: bool = True,
        controller: AgentRun | None = None,
    ) -> None:
        import ipywidgets as w

        self.agent = agent
        self.controller = controller or AgentRun(agent, session=session, auto_approve=auto_approve, stream=stream)
        self.header = w.HTML(h.wrap(f"<div class='anb-head'>{_agent_title(agent)}</div>"))
        self.transcript = w.HTML()
        # Widgets whose traits are read back are held as Any: ipywidgets' traits are untyped.
        self.cards_box: Any = w.VBox()
        self.status_line = w.HTML()
        self.stop_button: Any = w.Button(
            description="Stop", icon="stop", button_style="warning", disabled=True, layout=w.Layout(width="90px")
        )
        on_click(self.stop_button, lambda _b: self.stop())
        footer = w.HBox([self.stop_button, self.status_line], layout=w.Layout(align_items="center"))
        self.widget: Any = w.VBox([self.header, self.transcript, self.cards_box, footer])
        self.cards: dict[str, ApprovalCard] = {}
        self._last_render = 0.0
        self._render_handle: asyncio.TimerHandle | None = None
        self._display_handle: Any = None
        self._published: tuple[str, int, int] | None = None
        self._display_cell: str | None = None
        self._rendered_status = ""
        self._closed = False
        self.controller.subscribe(self._on_change)
        self._render()

    @classmethod
    def from_response(cls, response: Any, *, agent: Any, session: Any = None, history: Any = ()) -> AgentView:
        """A view of a finished turn that waits for approval: its cards resume the run on ``agent``/``session``.

        Args:
            response: The :class:`agentnb.AgentResponse` with pending approval requests.
            agent: The agent that produced it.
            session: The session it ran on (``None``: a new session continues the conversation).
            history: Without a session, the conversation before the response (the run's input).
        """
        return cls(agent, controller=AgentRun.resume(response, agent=agent, session=session, history=history))

    # -- public API ----------------------------------------------------------------------------------------
    @property
    def session(self) -> Any:
        """The session the view runs on."""
        return self.controller.session

    @property
    def status(self) -> str:
        """``idle``, ``running``, ``waiting`` (for approval), ``done``, ``stopped`` or ``error``."""
        return self.controller.status

    @property
    def response(self) -> Any:
        """The latest complete :class:`agentnb.AgentResponse`."""
        return self.controller.response

    @property
    def text(self) -> str:
        """The latest response's text (empty before the first turn ends)."""
        response = self.controller.response
        return response.text if response is not None else ""

    @property
    def pending(self) -> list[Any]:
        """Approval requests that wait for an answer."""
        return list(self.controller.pending)

    @property
    def error(self) -> BaseException | None:
        """The exception that ended the last turn, if any."""
        return self.controller.error

    def run(self, prompt: Any, *, display: bool = True) -> AgentView:
        """Show the view (unless ``display=False``) and start a turn in the background.

        Args:
            prompt: The user's prompt (str, Message, or a list of them).
            display: Whether to display the view in the current cell output.

        Returns:
            The view itself, so ``view = AgentView(agent).run("...")`` works.
        """
        if display:
            self.display()
        self.controller.start(prompt)
        return self

    def display(self) -> None:
        """Display the view in the current output (once; later calls do nothing)."""
        if self._display_handle is None:
            self._display_handle = ipy_display(self, display_id=True)
            self._display_cell = current_cell()

    async def wait(self) -> Any:
        """Wait until the run settles (done, stopped, failed, or waiting for approval); return the response."""
        response = await self.controller.wait()
        self._settle()
        return response

    async def approvals(self) -> Any:
        """Wait until every approval is answered and the run is finished; return the final response.

        Inside a kernel this needs ipykernel 7+ (earlier kernels handle no clicks while a cell awaits);
        there it raises at once instead of hanging. With an ``auto_approve`` policy no click is needed.

        Raises:
            RuntimeError: The kernel cannot deliver clicks while a cell awaits.
        """
        await self.controller.wait()
        if self.controller.pending and in_kernel() and not kernel_supports_awaiting_widgets():
            raise RuntimeError(
                "This kernel (ipykernel < 7) cannot handle clicks while a cell awaits, so "
                "`await view.approvals()` would hang. Let the cell finish, click Approve or Deny, and read "
                "view.response in the next cell (or upgrade ipykernel to 7+)."
            )
        while self.controller.pending or self.controller.running:
            await asyncio.sleep(0.05)
            await self.controller.wait()
        self._settle()
        return self.controller.response

    def send(self, prompt: Any) -> None:
        """Start another turn on the same session (the transcript keeps growing)."""
        self.controller.start(prompt)

    def stop(self) -> None:
        """Stop the running turn (what the Stop button does)."""
        self.controller.stop()

    def approve(self, index: int = 0, *, reason: str | None = None) -> None:
        """Approve the ``index``-th pending request, as clicking its Approve button would."""
        card = self._card_for(index)
        if reason:
            card.reason.value = reason
        card.approve()

    def deny(self, index: int = 0, *, reason: str | None = None) -> None:
        """Deny the ``index``-th pending request, as clicking its Deny button would."""
        card = self._card_for(index)
        if reason:
            card.reason.value = reason
        card.deny()

    def close(self) -> None:
        """Stop any running turn and close every widget of the view (releases their comms)."""
        self._closed = True
        self.controller.stop()
        if self._render_handle is not None:
            self._render_handle.cancel()
            self._render_handle = None
        for card in self.cards.values():
            card.close()
        self.cards.clear()
        close_tree(self.widget)

    # -- text and mime -------------------------------------------------------------------------------------
    def to_text(self) -> str:
        """The transcript as plain text (what notebooks store as ``text/plain``)."""
        from ._display import messages_text

        body = messages_text(self.controller.transcript())
        if not body and self.status == "idle":
            return _agent_line(self.agent)
        line = f"[{self.status}]"
        usage = usage_text(self._usage())
        if usage:
            line += f" {usage}"
        return (body + "\n" if body else "") + line

    def to_html(self) -> str:
        """The transcript as static HTML (for exports and front ends without widgets)."""
        head = f"<div class='anb-head'>{_agent_title(self.agent)}</div>"
        if not self.controller.messages and self.status == "idle":
            return h.wrap(head)
        return h.wrap(head + self._transcript_html() + f"<div>{self._status_html(timing=False)}</div>")

    def _repr_mimebundle_(self, **kwargs: Any) -> dict[str, Any]:
        bundle = widget_bundle(self.widget, **kwargs)
        if self.status == "idle" and not self.controller.messages:
            # Nothing has happened yet: no static fallback (it would only repeat the header).
            bundle["text/plain"] = ""
            return bundle
        bundle["text/plain"] = self.to_text()
        bundle["text/html"] = self.to_html()
        return bundle

    # -- rendering -----------------------------------------------------------------------------------------
    def _card_for(self, index: int) -> ApprovalCard:
        waiting = [self.cards[r.id] for r in self.controller.pending if r.id in self.cards]
        if not waiting:
            raise IndexError("No approval is pending.")
        return waiting[index]

    def _usage(self) -> dict[str, Any] | None:
        total: dict[str, Any] = {}
        for response in self.controller.responses:
            usage: Mapping[str, Any] = response.usage_details or {}
            for key, value in usage.items():
                if isinstance(value, int):
                    total[key] = total.get(key, 0) + value
        return total or None

    def _transcript_html(self) -> str:
        return messages_html(self.controller.transcript(), pending=self.controller.running)

    def _status_html(self, *, timing: bool) -> str:
        label, kind = _STATUS_BADGES.get(self.status, (self.status, ""))
        parts = [h.badge(label, kind)]
        if self.controller.error is not None:
            err = self.controller.error
            parts.append(f"<span class='anb-error'>{h.escape(type(err).__name__)}: {h.escape(err)}</span>")
        usage = usage_text(self._usage())
        if usage:
            parts.append(f"<span class='anb-muted'>{h.escape(usage)}</span>")
        start, end = self.controller.started_at, self.controller.ended_at
        if timing and start is not None:
            elapsed = (end or time.time()) - start
            shown = f"{elapsed * 1000:.0f} ms" if elapsed < 1 else f"{elapsed:.1f} s"
            parts.append(f"<span class='anb-muted'>{shown}</span>")
        return " ".join(parts)

    def _on_change(self, _run: AgentRun) -> None:
        if self._closed:
            return
        now = time.monotonic()
        status_changed = self.controller.status != self._rendered_status
        if not status_changed and self.controller.running and now - self._last_render < _MIN_RENDER_INTERVAL:
            # Coalesce token bursts into one refresh so the comm channel is not flooded.
            if self._render_handle is None:
                try:
                    loop = asyncio.get_running_loop()
                except RuntimeError:
                    loop = None
                if loop is not None:
                    self._render_handle = loop.call_later(_MIN_RENDER_INTERVAL, self._render)
                    return
            else:
                return
        self._render()

    def _render(self) -> None:
        self._render_handle = None
        if self._closed:
            return
        self._last_render = time.monotonic()
        self._rendered_status = self.controller.status
        self.transcript.value = h.wrap(self._transcript_html())
        self.status_line.value = h.wrap(self._status_html(timing=True))
        self.stop_button.disabled = not self.controller.running
        # Only a running turn can be stopped: hide the button otherwise instead of showing a dead one.
        self.stop_button.layout.display = "" if self.controller.running else "none"
        self._sync_cards()
        published = (self.status, len(self.controller.messages), len(self.controller.pending))
        if not self.controller.running and self._display_handle is not None and published != self._published:
            # Refresh the stored text/plain and text/html of the output so saved notebooks show the result.
            self._published = published
            self._display_handle.update(self)

    def _settle(self) -> None:
        self._flush()
        handle = settled_display(self, self._display_handle, self._display_cell)
        if handle is not self._display_handle:
            self._display_handle = handle
            self._published = (self.status, len(self.controller.messages), len(self.controller.pending))

    def _flush(self) -> None:
        if self._render_handle is not None:
            self._render_handle.cancel()
        self._render()

    def _sync_cards(self) -> None:
        pending_ids = {r.id for r in self.controller.pending}
        for request in self.controller.pending:
            if request.id not in self.cards and not self.controller.is_answered(request):
                self.cards[request.id] = ApprovalCard(request, on_answer=self._on_card_answer)
        # Answered cards stay visible (disabled, with the verdict) until the next turn starts.
        if self.controller.running:
            for request_id in [rid for rid in self.cards if rid not in pending_ids]:
                self.cards.pop(request_id).close()
        children = tuple(card.widget for card in self.cards.values())
        if self.cards_box.children != children:
            self.cards_box.children = children

    def _on_card_answer(self, request: Any, approved: bool, reason: str | None, always: bool) -> None:
        self.controller.answer(request, approved, reason=reason, always=always)


class ChatWidget(AgentView):
    """A chat box for an agent: an input line and a transcript that keeps one session.

    Example:
        ```python
        from agentnb import Agent
        from agentnb.local import ScriptedChatClient
        from agentnb.notebook import ChatWidget

        chat = ChatWidget(Agent(ScriptedChatClient(["Hi!", "Sure."]), name="helper"))
        chat  # type in the box and press Enter (or chat.submit("Hello") from code)
        ```
    """

    def __init__(self, agent: Any, *, session: Any = None, auto_approve: AutoApprove = None) -> None:
        import ipywidgets as w

        super().__init__(agent, session=session, auto_approve=auto_approve)
        self.input: Any = w.Text(placeholder="Message the agent and press Enter", layout=w.Layout(flex="1"))
        self.send_button = w.Button(description="Send", icon="paper-plane", button_style="primary")
        with warnings.catch_warnings():
            # ipywidgets 8 deprecates on_submit in favour of continuous_update=False, which also sends on blur:
            # clicking elsewhere would send a half-written message. Enter-to-send needs on_submit.
            warnings.simplefilter("ignore", DeprecationWarning)
            self.input.on_submit(self._on_enter)
        on_click(self.send_button, lambda _b: self.submit())
        self.widget.children = (*self.widget.children, w.HBox([self.input, self.send_button]))

    def _on_enter(self, _text_widget: Any) -> None:
        self.submit()

    def submit(self, text: str | None = None) -> bool:
        """Send ``text`` (or the input box's text) as the next user message.

        Returns:
            Whether a turn was started (not when the text is empty or a turn is still running).
        """
        message = (self.input.value if text is None else text).strip()
        if not message or self.controller.running or self.controller.pending:
            return False
        self.input.value = ""
        self.controller.start(message)
        return True

    def _render(self) -> None:
        super()._render()
        if hasattr(self, "send_button"):
            busy = self.controller.running or bool(self.controller.pending)
            self.send_button.disabled = busy
