"""The per-cell meter: one quiet line under a cell that called a model.

``2 model calls · 1 tool call · 812 in / 96 out tokens · model 1.2 s of 1.4 s · $0.0003``: counted from the
spans the cell caused (see :mod:`._cells`), priced with :func:`agentnb.observability.token_cost` when a
price table is set (``%agentnb prices ...`` or :func:`set_prices`).

The meter is on after ``%load_ext agentnb`` in front ends that identify cells (JupyterLab, Notebook 7,
VS Code). Headless runners (nbclient, nbval, papermill) send no cell id, so the line stays out of outputs
they store and tutorials compare as stored; ``%agentnb meter on`` shows it there too, ``off`` nowhere.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .. import _html as h
from .. import _telemetry as tel
from ._widgets import ipy_display

__all__ = ["CellUsage", "Meter", "MeterMode", "get_prices", "set_prices"]

MeterMode = Literal["auto", "on", "off"]

_prices: dict[str, tuple[float, float]] = {}


def set_prices(prices: Mapping[str, tuple[float, float]] | None) -> None:
    """Set the price table the meter uses: model -> (USD per 1M input tokens, USD per 1M output tokens).

    Args:
        prices: The table (a dated model name takes its base entry's price); ``None`` or ``{}`` clears it.

    Raises:
        ValueError: A price is not a pair of finite, non-negative numbers.

    Example:
        ```python
        from agentnb.notebook import set_prices

        set_prices({"gpt-4o-mini": (0.15, 0.60)})
        ```
    """
    from ..observability import price_for

    table = dict(prices or {})
    for model in table:
        price_for(model, table)  # checks the entry, with an error that names the model
    _prices.clear()
    _prices.update({model: (float(p[0]), float(p[1])) for model, p in table.items()})


def get_prices() -> dict[str, tuple[float, float]]:
    """Return a copy of the meter's price table."""
    return dict(_prices)


@dataclass
class CellUsage:
    """What one cell's runs used: calls, tokens per model, and time spent waiting for the model."""

    model_calls: int = 0
    tool_calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    model_ns: int = 0
    compacted_calls: int = 0
    tokens_by_model: dict[str, list[int]] = field(default_factory=dict)

    def add_span(
        self,
        operation: Any,
        *,
        model: Any = None,
        input_tokens: Any = None,
        output_tokens: Any = None,
        duration_ns: int = 0,
        compacted: bool = False,
    ) -> None:
        """Count one finished span (only model calls and tool calls count; ``compacted``: compaction left
        something out of the call)."""
        if operation == tel.OP_CHAT:
            self.model_calls += 1
            self.compacted_calls += compacted
            self.model_ns += max(0, duration_ns)
            tokens_in = input_tokens if isinstance(input_tokens, int) else 0
            tokens_out = output_tokens if isinstance(output_tokens, int) else 0
            self.input_tokens += tokens_in
            self.output_tokens += tokens_out
            counts = self.tokens_by_model.setdefault(str(model or ""), [0, 0])
            counts[0] += tokens_in
            counts[1] += tokens_out
        elif operation == tel.OP_EXECUTE_TOOL:
            self.tool_calls += 1

    def cost(self, prices: Mapping[str, tuple[float, float]]) -> float | None:
        """Return the cost of the tokens under ``prices``; ``None`` when a model used has no price."""
        if not prices or not self.tokens_by_model:
            return None
        from ..observability import token_cost

        total = 0.0
        for model, (tokens_in, tokens_out) in self.tokens_by_model.items():
            priced = token_cost(model or None, tokens_in, tokens_out, prices)
            if priced is None:
                return None
            total += priced[0] + priced[1]
        return total


def _seconds(value: float) -> str:
    return f"{value * 1000:.0f} ms" if value < 1 else f"{value:.1f} s"


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def meter_text(usage: CellUsage, *, total_seconds: float | None, prices: Mapping[str, tuple[float, float]]) -> str:
    """Return the meter line for one cell."""
    parts = [_plural(usage.model_calls, "model call"), _plural(usage.tool_calls, "tool call")]
    if usage.compacted_calls:
        parts.append(f"{usage.compacted_calls} compacted")
    parts.append(f"{usage.input_tokens} in / {usage.output_tokens} out tokens")
    model = _seconds(usage.model_ns / 1e9)
    parts.append(f"model {model} of {_seconds(total_seconds)}" if total_seconds is not None else f"model {model}")
    cost = usage.cost(prices)
    if cost is not None:
        parts.append(_dollars(cost))
    return " · ".join(parts)


def _dollars(cost: float) -> str:
    """Two significant digits below a cent (``$0.000014``), cents above it (``$1.25``)."""
    if cost <= 0:
        return "$0"
    if cost >= 0.01:
        return f"${cost:.2f}"
    decimals = 1 - math.floor(math.log10(cost))
    return f"${cost:.{decimals}f}"


class Meter:
    """Shows the meter line after a cell; ``mode`` is ``"auto"`` (interactive front ends), ``"on"`` or ``"off"``."""

    def __init__(self, mode: MeterMode = "auto") -> None:
        self.mode: MeterMode = mode
        self.last: str | None = None
        """The last line shown (or that would have been shown in ``auto`` mode under a headless runner)."""

    def show(
        self,
        usage: CellUsage,
        *,
        total_seconds: float | None,
        interactive: bool,
        handle: Any = None,
        reserve: bool = False,
    ) -> Any:
        """Display the line for ``usage`` unless the meter is off (or ``auto`` outside an interactive front end).

        Args:
            usage: What the cell used.
            total_seconds: The cell's own run time (``None``: not shown).
            interactive: Whether the front end identifies cells (``auto`` shows the line only there).
            handle: The display of a line already shown for the cell: it is updated in place (a run the
                cell started went on after it finished, e.g. after an approval click).

        Returns:
            The line's display handle (``None`` when nothing is shown), for later updates.
        """
        if self.mode == "off" or (self.mode == "auto" and not interactive):
            if usage.model_calls or usage.tool_calls:
                self.last = meter_text(usage, total_seconds=total_seconds, prices=_prices)
            return handle
        if usage.model_calls == 0 and usage.tool_calls == 0:
            if handle is None and reserve:
                # Calls the cell started are still running: hold the line's place for when they end.
                return ipy_display({"text/plain": ""}, raw=True, display_id=True)
            return handle
        line = meter_text(usage, total_seconds=total_seconds, prices=_prices)
        self.last = line
        html = h.wrap(f"<div class='anb-muted anb-meter' style='font-size:0.85em'>{h.escape(line)}</div>")
        bundle = {"text/plain": line, "text/html": html}
        if handle is not None:
            handle.update(bundle, raw=True)
            return handle
        return ipy_display(bundle, raw=True, display_id=True)
