"""Token accounting for a chat session, from the usage each model call reports: nothing estimated.

A model call reports its input tokens (the whole prompt: instructions, history, the new messages) and its
output tokens (what it wrote). From that sequence alone, exactly:

- the tokens of each answer: the output tokens of the call that wrote it;
- the context size after each call: its input plus its output;
- how much the prompt grew between two calls: the next call's input minus the previous context. Between the
  end of one turn and the next, that growth is the new user message; inside a turn, it is the tool results
  the agent added. The growth includes the chat format's framing tokens around those messages.

What the reports cannot give is a split of input tokens per message or per role beyond that: the first
call's input mixes the instructions with the first message. The ledger keeps those as one labelled row
instead of guessing (no tokenizer is used: the model's own is rarely available offline).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

__all__ = ["ModelCall", "TokenLedger"]

Source = Literal["instructions + user", "instructions + tool", "user", "tool"]


@dataclass(frozen=True)
class ModelCall:
    """One model call's usage and what it added to the context."""

    turn: int
    index: int  # 1-based position within the turn
    input: int
    output: int
    added: int  # prompt growth since the previous call's context (the first call: its whole input)
    added_by: Source

    @property
    def total(self) -> int:
        return self.input + self.output


@dataclass
class TokenLedger:
    """The model calls of one session, in order.

    Example:
        >>> ledger = TokenLedger()
        >>> ledger.record({"input_token_count": 3, "output_token_count": 3}, turn=1, opened_by="user").added_by
        'instructions + user'
        >>> ledger.record({"input_token_count": 9, "output_token_count": 4}, turn=1, opened_by="user").added
        3
        >>> ledger.context, ledger.by_role()["assistant"]
        (13, 7)
    """

    calls: list[ModelCall] = field(default_factory=list)

    @property
    def context(self) -> int | None:
        """Tokens in the context after the last call (its input plus its output), ``None`` before any call."""
        return self.calls[-1].total if self.calls else None

    def record(self, usage: Mapping[str, Any], *, turn: int, opened_by: Literal["user", "tool"]) -> ModelCall:
        """Add one call's usage. ``opened_by`` says what started the turn: a user message, or answers to
        approval requests (after which the approved tools run, so their results are what the prompt gains)."""
        inp = int(usage.get("input_token_count") or 0)
        out = int(usage.get("output_token_count") or 0)
        earlier = [c for c in self.calls if c.turn == turn]
        before = self.context
        source: Source
        if before is None:
            source = "instructions + user" if opened_by == "user" else "instructions + tool"
        else:
            source = opened_by if not earlier else "tool"
        call = ModelCall(turn, len(earlier) + 1, inp, out, inp - before if before is not None else inp, source)
        self.calls.append(call)
        return call

    def turn_calls(self, turn: int) -> list[ModelCall]:
        return [c for c in self.calls if c.turn == turn]

    def by_role(self) -> dict[str, int]:
        """Tokens by where they came from: ``assistant`` (written), ``user`` and ``tool`` (prompt growth),
        and the first call's input as one ``instructions + …`` row."""
        roles: dict[str, int] = {}
        for call in self.calls:
            roles["assistant"] = roles.get("assistant", 0) + call.output
            roles[call.added_by] = roles.get(call.added_by, 0) + call.added
        return roles
