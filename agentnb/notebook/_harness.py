"""The notebook view of a harness agent: the ordinary run view plus live harness panels.

:class:`HarnessView` is an :class:`~agentnb.notebook.AgentView` (streamed reply, approval cards, Stop) with a
panel above the transcript showing the session's todos ticking off, its mode, the loop's iteration, its
background tasks with their status, the files its tools touched and its memory files (click one to read it).
The panel re-renders from the session as the run changes it; Stop asks the loop to end and stops the turn.
"""

from __future__ import annotations

import asyncio
from typing import Any

from .. import _html as h
from ._approval import AutoApprove
from ._run import AgentRun
from ._views import AgentView

__all__ = ["HarnessView", "view_class_for"]


def view_class_for(agent: Any) -> type[AgentView]:
    """The view a run of ``agent`` gets: :class:`HarnessView` for a harness agent, else :class:`AgentView`."""
    if not getattr(agent, "context_providers", None):
        return AgentView  # a plain agent: the harness is not even imported
    from ..harness import is_harness_agent

    return HarnessView if is_harness_agent(agent) else AgentView


class HarnessView(AgentView):
    """A live view of a harness agent's run with its todos, mode, loop, background tasks and memory files.

    Args:
        agent: A harness agent (``create_harness_agent``) or any agent with harness providers.
        session: The session to run on (a new one when omitted).
        auto_approve: As for :class:`~agentnb.notebook.AgentView`.
        stream: Stream tokens as they arrive.

    Example:
        ```python
        from agentnb.harness import InMemoryAgentFileStore, create_harness_agent
        from agentnb.local import ScriptedChatClient
        from agentnb.notebook import HarnessView

        agent = create_harness_agent(ScriptedChatClient(["Planned."]), file_memory_store=InMemoryAgentFileStore())
        view = HarnessView(agent).run("Plan my week")
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

        self.panel: Any = w.HTML()
        self.snapshot: Any = None
        self._refreshing: asyncio.Task[None] | None = None
        self._dirty = False
        super().__init__(agent, session=session, auto_approve=auto_approve, stream=stream, controller=controller)
        children = list(self.widget.children)
        self.widget.children = (children[0], self.panel, *children[1:])
        self._schedule_refresh()

    async def refresh(self) -> Any:
        """Read the session again and re-render the panel; returns the :class:`HarnessSnapshot` shown."""
        from ..harness import harness_snapshot

        self.snapshot = await harness_snapshot(self.agent, self.session)
        self.panel.value = h.wrap(self.snapshot.to_html())
        return self.snapshot

    def stop(self) -> None:
        """Ask the loop to stop and stop the running turn (what the Stop button does)."""
        from ..harness import request_loop_stop

        if self.session is not None:
            request_loop_stop(self.session)
        super().stop()

    async def wait(self) -> Any:
        response = await super().wait()
        await self._refreshed()
        return response

    def to_html(self) -> str:
        panel = self.snapshot.to_html() if self.snapshot is not None else ""
        base = super().to_html()
        if not panel:
            return base
        return base.replace("</style>", "</style>" + panel, 1)

    # -- live refresh --------------------------------------------------------------------------------------
    def _render(self) -> None:
        super()._render()
        if hasattr(self, "panel"):
            self._schedule_refresh()

    def _schedule_refresh(self) -> None:
        """Refresh the panel soon; changes that arrive meanwhile are folded into one more refresh."""
        if self._closed:
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return  # no loop (a plain script): refresh() renders on demand
        if self._refreshing is not None and not self._refreshing.done():
            self._dirty = True
            return
        self._refreshing = loop.create_task(self._refresh_loop())

    async def _refresh_loop(self) -> None:
        while True:
            self._dirty = False
            try:
                await self.refresh()
            except Exception as e:  # a broken store must not take the run view down with it
                self.panel.value = h.wrap(f"<div class='anb-error'>harness panel: {h.escape(e)}</div>")
            if not self._dirty or self._closed:
                return

    async def _refreshed(self) -> None:
        """Wait for the pending panel refresh, then make sure the panel reflects the settled run."""
        task = self._refreshing
        if task is not None and not task.done():
            await asyncio.wait({task})
        await self.refresh()

    def close(self) -> None:
        if self._refreshing is not None and not self._refreshing.done():
            self._refreshing.cancel()
        super().close()
