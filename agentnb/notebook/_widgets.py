"""Small ipywidgets helpers shared by the views."""

from __future__ import annotations

from typing import Any

__all__ = ["close_tree"]


def close_tree(widget: Any) -> None:
    """Close a widget with its children, layout and style, releasing every comm it opened.

    ``Widget.close()`` alone leaves the ``Layout`` and ``Style`` models (and the children) open, which
    leaks one comm per model in a long notebook session.
    """
    seen: set[int] = set()
    stack = [widget]
    while stack:
        current = stack.pop()
        if current is None or id(current) in seen:
            continue
        seen.add(id(current))
        for name in ("children", "layout", "style"):
            if name in getattr(current, "keys", ()):
                value = getattr(current, name, None)
                if isinstance(value, (list, tuple)):
                    stack.extend(value)
                elif value is not None and hasattr(value, "close"):
                    stack.append(value)
        current.close()
