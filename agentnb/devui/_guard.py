"""Keep a failing view callback inside its view: an error card there, never a broken page or server.

Panel runs view callbacks (button clicks, watchers, periodic polls) on the server's event loop. An exception
that escapes one leaves the view half-updated with nothing shown, and a ``SystemExit`` raised while reading
hostile data (a crafted run-store row written by another process, a fork edit) would end the server for
every session. Every view callback and every refresh that reads shared data is wrapped with
:func:`view_callback`, which turns any failure into an error card in that view and logs it.
"""

from __future__ import annotations

import functools
import inspect
import logging
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["guard", "view_callback"]

logger = logging.getLogger("agentnb.devui")

F = TypeVar("F", bound=Callable[..., Any])

# Failures a view must contain. KeyboardInterrupt stays out: Ctrl+C in the launcher should still stop it.
CONTAINED: tuple[type[BaseException], ...] = (Exception, SystemExit)


def _show(show: Callable[[Any], None] | None, exc: BaseException, title: str) -> None:
    logger.warning("%s: %s: %s", title, type(exc).__name__, exc, exc_info=exc)
    if show is None:
        return
    from ._widgets import error_card

    try:
        show(error_card(exc, title=title))
    except CONTAINED:  # the view itself is broken; the log keeps the original error
        logger.exception("Cannot show an error card for %s", title)


def guard(callback: F, *, title: str, show: Callable[[Any], None] | None) -> F:
    """Wrap ``callback`` (sync or async) so a failure becomes ``show(error_card)`` and a ``None`` result.

    Example:
        ```python
        button.on_click(guard(self._on_fork, title="Fork not started", show=self.show_error))
        ```
    """
    if inspect.iscoroutinefunction(callback):

        @functools.wraps(callback)
        async def run_async(*args: Any, **kwargs: Any) -> Any:
            try:
                return await callback(*args, **kwargs)
            except CONTAINED as exc:
                _show(show, exc, title)
                return None

        return run_async  # type: ignore[return-value]

    @functools.wraps(callback)
    def run(*args: Any, **kwargs: Any) -> Any:
        try:
            return callback(*args, **kwargs)
        except CONTAINED as exc:
            _show(show, exc, title)
            return None

    return run  # type: ignore[return-value]


def view_callback(title: str) -> Callable[[F], F]:
    """Decorate a view method so a failure shows an error card through the view's ``show_error(card)``.

    The view class defines ``show_error(self, card)`` (put the card where the user looks); without it the
    failure is only logged. The method returns ``None`` when it failed.

    Example:
        ```python
        class RunsView:
            def show_error(self, card):
                self.errors.objects = [card]

            @view_callback("Run store")
            def refresh(self) -> int: ...
        ```
    """

    def decorate(method: F) -> F:
        if inspect.iscoroutinefunction(method):

            @functools.wraps(method)
            async def run_async(self: Any, *args: Any, **kwargs: Any) -> Any:
                try:
                    return await method(self, *args, **kwargs)
                except CONTAINED as exc:
                    _show(getattr(self, "show_error", None), exc, title)
                    return None

            return run_async  # type: ignore[return-value]

        @functools.wraps(method)
        def run(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return method(self, *args, **kwargs)
            except CONTAINED as exc:
                _show(getattr(self, "show_error", None), exc, title)
                return None

        return run  # type: ignore[return-value]

    return decorate
