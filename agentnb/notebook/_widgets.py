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


def current_cell() -> str | None:
    """The message id of the cell execution running now (``None`` outside a kernel).

    Views remember it when they display themselves, so that they refresh their output only from the cell
    that owns it.
    """
    try:
        from IPython.core.getipython import get_ipython
    except ImportError:  # pragma: no cover - IPython is part of the notebook extra
        return None
    kernel = getattr(get_ipython(), "kernel", None)
    get_parent = getattr(kernel, "get_parent", None)
    if get_parent is None:
        return None
    try:
        parent = get_parent()
    except TypeError:  # pragma: no cover - ipykernel < 6 needs the channel
        parent = get_parent("shell")
    header = (parent or {}).get("header") or {}
    return header.get("msg_id")


def settled_display(view: Any, handle: Any, cell: str | None) -> Any:
    """Re-display ``view`` in place once it has settled, when still in the cell that displayed it.

    The live widget stays the same; the cell's output is replaced (``clear_output(wait=True)``, so nothing
    flickers) by the view's bundle as it is now. Tools that record outputs without applying display updates
    (nbval, some exporters) thereby store the result instead of the empty view shown at the start.

    Returns:
        The new display handle, or ``handle`` unchanged when not in the owning cell.
    """
    if handle is None or cell is None or cell != current_cell():
        return handle
    from IPython.display import clear_output, display

    clear_output(wait=True)
    return display(view, display_id=True)
