"""The approval card widget, and what ``auto_approve`` accepts.

Approval is data: a tool that needs approval ends the turn with a ``function_approval_request`` content and
the run continues when a ``function_approval_response`` is sent on the same session. The
:class:`~agentnb.ApprovalPolicy` decides which answer to send without a person (for "Run All" and CI); a
card lets a person decide. Neither invokes a tool itself.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .. import _html as h
from .._approval import ToolApprovalRule
from .._approval_policy import AUTO_APPROVE_ENV, ApprovalPolicy
from .._types import Content
from ._widgets import on_click

__all__ = ["AUTO_APPROVE_ENV", "ApprovalCard", "AutoApprove"]

#: What ``auto_approve`` takes, read as an :class:`~agentnb.ApprovalPolicy`: ``True`` approves every
#: request, ``False`` denies every one, a collection of tools approves those (``name`` for a local tool,
#: ``server:name`` for an MCP server's; others wait for a click), a callable gets the request content and
#: returns ``True``/``False`` or ``None`` to leave it to a person, and ``None`` reads ``$AGENTNB_AUTO_APPROVE``.
AutoApprove = bool | ApprovalPolicy | Iterable[str | ToolApprovalRule] | Callable[[Content], bool | None] | None


class ApprovalCard:
    """A card for one pending approval: the tool, its arguments, Approve / Deny, a reason, "always allow".

    The card only reports the person's answer to ``on_answer``; the view that owns it sends the
    ``function_approval_response`` and resumes the run.

    Example:
        ```python
        from agentnb import Content
        from agentnb.notebook import ApprovalCard

        call = Content.from_function_call("c1", "delete_file", arguments={"path": "notes.txt"})
        request = Content.from_function_approval_request("r1", call)
        card = ApprovalCard(request, on_answer=lambda req, ok, reason, always: print(ok, reason, always))
        card.widget  # display it; card.approve_button.click() answers as a click would
        ```
    """

    def __init__(
        self,
        request: Content,
        *,
        on_answer: Callable[[Content, bool, str | None, bool], None],
    ) -> None:
        import ipywidgets as w

        self.request = request
        self._on_answer = on_answer
        self.answered: bool | None = None
        call = request.function_call
        name = _tool_name(request) or "tool"
        args = h.json_html((call.arguments if call is not None else None) or {})
        self.summary = w.HTML(
            h.wrap(
                "<div class='anb-card'><div class='anb-head'>"
                f"{h.badge('approval needed', 'warn')} <span class='anb-title'>{h.escape(name)}</span>"
                f"</div>{args}</div>"
            )
        )
        self.reason = w.Text(placeholder="Reason (optional)", layout=w.Layout(width="260px"))
        source = request.additional_properties.get("server_label")
        # The rule it makes covers this tool from this source only, and the label says so.
        scope = f"{name} from {source}" if isinstance(source, str) else name
        self.always = w.Checkbox(value=False, description=f"Always allow {scope}", indent=False)
        self.approve_button = w.Button(description="Approve", button_style="success", icon="check")
        self.deny_button = w.Button(description="Deny", button_style="danger", icon="times")
        on_click(self.approve_button, lambda _b: self.approve())
        on_click(self.deny_button, lambda _b: self.deny())
        controls = w.HBox([self.approve_button, self.deny_button, self.reason, self.always])
        self.widget = w.VBox([self.summary, controls], layout=w.Layout(margin="2px 0 6px 0"))

    @property
    def tool_name(self) -> str | None:
        """The name of the tool waiting for approval."""
        return _tool_name(self.request)

    def approve(self) -> None:
        """Approve the call (what clicking Approve does)."""
        self._answer(True)

    def deny(self) -> None:
        """Deny the call (what clicking Deny does)."""
        self._answer(False)

    def _answer(self, approved: bool) -> None:
        if self.answered is not None:
            return  # a double click must not send two answers
        self.answered = approved
        reason = self.reason.value.strip() or None
        for control in (self.approve_button, self.deny_button, self.reason, self.always):
            control.disabled = True
        verdict = h.badge("approved", "ok") if approved else h.badge("denied", "err")
        note = f" <span class='anb-muted'>{h.escape(reason)}</span>" if reason else ""
        self.summary.value = self.summary.value.replace(h.badge("approval needed", "warn"), verdict + note, 1)
        self._on_answer(self.request, approved, reason, bool(self.always.value) and approved)

    def close(self) -> None:
        """Close the card's widgets (releases their comms)."""
        from ._widgets import close_tree

        close_tree(self.widget)


def _tool_name(request: Content) -> str | None:
    """The name of the tool an approval request is about."""
    return request.function_call.name if request.function_call is not None else None
