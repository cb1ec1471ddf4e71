"""What model calls cost: a price table and the one function that applies it.

Prices are per million tokens, input and output apiece, as providers publish them. The table is yours to
give (prices change and differ by contract), so agentnb ships none; :func:`token_cost` is the single place
that turns token counts into money, shared by :func:`~agentnb.observability.usage_summary` and the
notebook's per-cell meter.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping

from .._json import is_list_or_tuple

__all__ = ["Prices", "price_for", "token_cost"]

Prices = Mapping[str, tuple[float, float]]
"""A price table: model name -> (price per 1M input tokens, price per 1M output tokens)."""

# A dated or versioned variant of a model: "gpt-4o-mini-2024-07-18" or "gpt-4-0125" for "gpt-4o-mini" or
# "gpt-4". A suffix that starts with a letter ("-mini") names another model and never matches.
_VERSION_SUFFIX = re.compile(r"-\d")


def _check(model: str, price: object) -> tuple[float, float]:
    if not is_list_or_tuple(price) or len(price) != 2:
        raise ValueError(f"The price of {model!r} must be (input per 1M tokens, output per 1M tokens), got {price!r}.")
    out: list[float] = []
    for value in price:
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
            raise ValueError(f"Prices must be finite numbers >= 0; {model!r} has {price!r}.")
        out.append(float(value))
    return out[0], out[1]


def price_for(model: str | None, prices: Prices) -> tuple[float, float] | None:
    """Return ``(input, output)`` prices per 1M tokens for ``model``, or ``None`` when the table has none.

    An exact name wins; otherwise the longest table entry that ``model`` extends with a version or date
    (``"gpt-4o-mini"`` prices ``"gpt-4o-mini-2024-07-18"``, but ``"gpt-4o"`` never prices ``"gpt-4o-mini"``).

    Raises:
        ValueError: The entry found is not a pair of finite, non-negative numbers.
    """
    if not model:
        return None
    if model in prices:
        return _check(model, prices[model])
    best: str | None = None
    for name in prices:
        if (
            model.startswith(name)
            and _VERSION_SUFFIX.match(model, len(name))
            and (best is None or len(name) > len(best))
        ):
            best = name
    return None if best is None else _check(best, prices[best])


def token_cost(
    model: str | None, input_tokens: int | None, output_tokens: int | None, prices: Prices
) -> tuple[float, float] | None:
    """Return ``(input_cost, output_cost)`` of a model's tokens under ``prices``; ``None`` when unpriced.

    Missing token counts cost nothing (a call that reported no usage).

    Example:
        ```python
        from agentnb.observability import token_cost

        token_cost("gpt-4o-mini-2024-07-18", 1_000, 200, {"gpt-4o-mini": (0.15, 0.60)})
        # (0.00015, 0.00012)
        ```
    """
    price = price_for(model, prices)
    if price is None:
        return None
    return (input_tokens or 0) * price[0] / 1e6, (output_tokens or 0) * price[1] / 1e6
