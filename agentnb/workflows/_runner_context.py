"""The runner context: the message queue, event queue and checkpoint storage a :class:`Runner` is driven through.

``Workflow.run`` keeps a run's messages and events inside its own run (a list, or the stream's queue); a
:class:`Runner` built from explicit parts exchanges them through a :class:`RunnerContext` instead, as the
reference's runner does: messages waiting for the next superstep are ``send_message`` / ``drain_messages``,
the events of each superstep are ``add_event`` / ``drain_events`` / ``next_event``, and checkpoints go to the
context's storage. :class:`InProcRunnerContext` is the in-process implementation; another implementation
(a queue in another process, a database) is any object with these methods.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ._checkpoints import CheckpointStorage, WorkflowCheckpoint
    from ._edges import WorkflowMessage
    from ._events import WorkflowEvent

__all__ = ["InProcRunnerContext", "RunnerContext"]


@runtime_checkable
class RunnerContext(Protocol):
    """What a :class:`Runner` needs to exchange messages, events and checkpoints with its surroundings."""

    async def send_message(self, message: WorkflowMessage) -> None:
        """Queue a message for the next superstep."""
        ...

    async def drain_messages(self) -> dict[str, list[WorkflowMessage]]:
        """Take every queued message, grouped by sender (in the order they were sent)."""
        ...

    async def has_messages(self) -> bool:
        """Whether any message is queued."""
        ...

    async def add_event(self, event: WorkflowEvent) -> None:
        """Queue an event for whoever drives the runner."""
        ...

    async def drain_events(self) -> list[WorkflowEvent]:
        """Take every queued event, oldest first."""
        ...

    async def has_events(self) -> bool:
        """Whether any event is queued."""
        ...

    async def next_event(self) -> WorkflowEvent:
        """Wait for the next event and take it."""
        ...

    def has_checkpointing(self) -> bool:
        """Whether checkpoints are written (a storage is set)."""
        ...

    @property
    def checkpoint_storage(self) -> CheckpointStorage | None:
        """Where checkpoints go: the run's storage if one is set, else the context's own."""
        ...

    def set_runtime_checkpoint_storage(self, storage: CheckpointStorage) -> None:
        """Use ``storage`` for the current run (over the context's own)."""
        ...

    def clear_runtime_checkpoint_storage(self) -> None:
        """Go back to the context's own storage."""
        ...

    async def load_checkpoint(self, checkpoint_id: str) -> WorkflowCheckpoint:
        """The checkpoint ``checkpoint_id`` from the storage.

        Raises:
            ValueError: No storage is set.
            CheckpointNotFoundError: The storage has no such checkpoint.
        """
        ...

    def reset_for_new_run(self) -> None:
        """Forget the queued messages and events (a fresh run starts)."""
        ...

    def set_streaming(self, streaming: bool) -> None:
        """Record whether the run's events are streamed."""
        ...

    def is_streaming(self) -> bool:
        """Whether the run's events are streamed."""
        ...


class InProcRunnerContext:
    """A :class:`RunnerContext` held in this process: a message list, an event queue and an optional storage.

    Example:
        >>> ctx = InProcRunnerContext()
        >>> ctx.has_checkpointing()
        False
    """

    def __init__(self, checkpoint_storage: CheckpointStorage | None = None) -> None:
        self._messages: dict[str, list[WorkflowMessage]] = {}
        self._events: asyncio.Queue[WorkflowEvent] | None = None  # made on first use, inside the running loop
        self._storage = checkpoint_storage
        self._runtime_storage: CheckpointStorage | None = None
        self._streaming = False

    # -- messages -----------------------------------------------------------------------------------------
    async def send_message(self, message: WorkflowMessage) -> None:
        self._messages.setdefault(message.source_id, []).append(message)

    async def drain_messages(self) -> dict[str, list[WorkflowMessage]]:
        messages, self._messages = self._messages, {}
        return messages

    async def has_messages(self) -> bool:
        return bool(self._messages)

    # -- events -------------------------------------------------------------------------------------------
    def _queue(self) -> asyncio.Queue[WorkflowEvent]:
        if self._events is None:
            self._events = asyncio.Queue()
        return self._events

    async def add_event(self, event: WorkflowEvent) -> None:
        self._queue().put_nowait(event)

    async def drain_events(self) -> list[WorkflowEvent]:
        queue = self._queue()
        events: list[WorkflowEvent] = []
        while not queue.empty():
            events.append(queue.get_nowait())
        return events

    async def has_events(self) -> bool:
        return not self._queue().empty()

    async def next_event(self) -> WorkflowEvent:
        return await self._queue().get()

    # -- checkpoints --------------------------------------------------------------------------------------
    def has_checkpointing(self) -> bool:
        return self.checkpoint_storage is not None

    @property
    def checkpoint_storage(self) -> CheckpointStorage | None:
        return self._runtime_storage if self._runtime_storage is not None else self._storage

    def set_runtime_checkpoint_storage(self, storage: CheckpointStorage) -> None:
        self._runtime_storage = storage

    def clear_runtime_checkpoint_storage(self) -> None:
        self._runtime_storage = None

    async def load_checkpoint(self, checkpoint_id: str) -> WorkflowCheckpoint:
        storage = self.checkpoint_storage
        if storage is None:
            raise ValueError("Checkpointing is not enabled: give the context a checkpoint_storage.")
        return await storage.load(checkpoint_id)

    # -- the run ------------------------------------------------------------------------------------------
    def reset_for_new_run(self) -> None:
        self._messages = {}
        if self._events is not None:
            while not self._events.empty():
                self._events.get_nowait()
        self._streaming = False

    def set_streaming(self, streaming: bool) -> None:
        self._streaming = streaming

    def is_streaming(self) -> bool:
        return self._streaming
