"""How a failed run surfaces: as the original exception's type *and* as ``WorkflowRunError``.

A handler that raises ``ValueError`` should let ``except ValueError:`` around ``workflow.run`` catch it, as
the reference re-raises the original, while ``except WorkflowRunError:`` keeps working and the message
names the executor and superstep. :func:`run_failure` builds that one exception: an instance of a class
derived from both the original's class and ``WorkflowRunError``, carrying the original's attributes, with
the original as ``__cause__`` (its traceback stays in the chain). Where the two classes cannot be combined
(an exception type that forbids subclassing), it falls back to a plain ``WorkflowRunError``.
"""

from __future__ import annotations

import contextlib
import types
import weakref
from typing import Any, cast

from ..exceptions import WorkflowRunError

__all__ = ["run_failure"]

_CLASSES: weakref.WeakKeyDictionary[type[BaseException], type[WorkflowRunError]] = weakref.WeakKeyDictionary()
_MARK = "__agentnb_run_failure__"


def _str(self: BaseException) -> str:
    # The original class may format its own attributes (KeyError quotes, custom __str__); show our message.
    return str(self.args[0]) if self.args else ""


def _reduce(self: BaseException) -> tuple[Any, ...]:
    # The derived class exists only in this process: pickle (Ray, multiprocessing) as a plain WorkflowRunError.
    return (WorkflowRunError, self.args)


def _combined(original: type[BaseException]) -> type[WorkflowRunError] | None:
    if getattr(original, _MARK, False):
        return cast("type[WorkflowRunError]", original)
    cls = _CLASSES.get(original)
    if cls is None:
        namespace: dict[str, Any] = {
            "__module__": original.__module__,
            "__qualname__": original.__qualname__,
            "__doc__": original.__doc__,
            "__str__": _str,
            "__reduce__": _reduce,
            _MARK: True,
        }
        try:
            made = types.new_class(
                original.__name__, (original, WorkflowRunError), exec_body=lambda ns: ns.update(namespace)
            )
            cls = cast("type[WorkflowRunError]", made)
        except TypeError:  # a final class, or an instance layout that cannot be combined
            return None
        _CLASSES[original] = cls
    return cls


def run_failure(error: BaseException, message: str) -> WorkflowRunError:
    """The exception ``run()`` raises for ``error``: ``isinstance`` of both its type and ``WorkflowRunError``.

    Args:
        error: What the executor (or step) raised.
        message: The run's context: which executor, which superstep, which workflow.

    Raise the result ``from error`` so the original and its traceback stay in the chain.
    """
    original = type(error)
    cls = WorkflowRunError if original is WorkflowRunError else _combined(original)
    if cls is None:
        return WorkflowRunError(message)
    try:
        failure = cls.__new__(cls, message)
    except Exception:  # a __new__ that insists on its own arguments
        return WorkflowRunError(message)
    failure.args = (message,)
    if cls is not WorkflowRunError:
        with contextlib.suppress(AttributeError, TypeError):  # status codes, ids and the like stay readable
            failure.__dict__.update(getattr(error, "__dict__", {}))
    return failure
