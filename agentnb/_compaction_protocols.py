"""What the chat loop asks of compaction: a strategy, a token counter, and the per-request compactor.

The loop in ``_clients.py`` compacts what each model call is sent when a request has a strategy or a
tokenizer; the work lives in :mod:`agentnb.compaction`, which fills ``REQUEST_COMPACTION``
(``agentnb/_extensions.py``) with its ``RequestCompaction``. The protocols live here so the core can type
its parameters without importing the package above it; ``agentnb.compaction`` exports the same names.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from ._types import Message

__all__ = ["CompactionStrategy", "RequestCompactor", "TokenizerProtocol"]


@runtime_checkable
class TokenizerProtocol(Protocol):
    """Counts tokens; what token-aware compaction strategies measure with."""

    def count_tokens(self, text: str) -> int:
        """The number of tokens in ``text`` (a message serialized as JSON)."""
        ...


@runtime_checkable
class CompactionStrategy(Protocol):
    """Marks messages of an annotated list excluded (or inserts summaries) in place."""

    async def __call__(self, messages: list[Message]) -> bool:
        """Compact ``messages`` in place; return whether what is included changed."""
        ...


class RequestCompactor(Protocol):
    """The compaction of one request, as the function-invocation loop drives it."""

    @property
    def reports(self) -> Sequence[Any]:
        """One report per model call compacted so far."""
        ...

    def start(self, messages: list[Message]) -> list[Message]:
        """Annotate the request's messages; return the list the loop works on."""
        ...

    async def prepare(self, conversation: list[Message]) -> list[Message]:
        """Compact ``conversation`` in place; return what the model is sent."""
        ...

    def report_dicts(self) -> list[dict[str, Any]]:
        """The reports as JSON-safe dicts."""
        ...

    def log_turn(self, state: dict[str, Any]) -> None:
        """Record the last report in the session state's compaction log."""
        ...
