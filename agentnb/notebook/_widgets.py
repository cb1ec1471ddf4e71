"""Small ipywidgets helpers shared by the views."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .._json import is_json_object, is_list_or_tuple

__all__ = ["close_tree", "ipy_display", "on_click", "widget_bundle"]

# ipywidgets and IPython's display() are untyped: the views hold widgets as they are and reach them through
# these helpers, the one place their signatures are assumed.


def on_click(button: Any, callback: Callable[[Any], object]) -> None:
    """Call ``callback`` with the button each time an ipywidgets ``Button`` is clicked."""
    button.on_click(callback)


def ipy_display(obj: object, **kwargs: Any) -> Any:
    """IPython's ``display(obj, **kwargs)``; returns its display handle when ``display_id=True``."""
    from IPython.display import display  # pyright: ignore[reportUnknownVariableType] - IPython is untyped here

    return display(obj, **kwargs)


def widget_bundle(widget: Any, **kwargs: Any) -> dict[str, Any]:
    """A widget's MIME bundle (``_repr_mimebundle_``, the hook Jupyter calls) as a new dict."""
    return dict(widget._repr_mimebundle_(**kwargs) or {})


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
                if is_list_or_tuple(value):
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
    header = parent.get("header") if is_json_object(parent) else None
    return header.get("msg_id") if is_json_object(header) else None


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
    from IPython.display import clear_output

    clear_output(wait=True)
    return ipy_display(view, display_id=True)
