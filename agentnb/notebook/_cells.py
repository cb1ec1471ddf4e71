"""Each cell knows its runs: the cell is recorded with every run it starts, and its model use is metered.

Loading the extension registers two IPython hooks. Before a cell runs, the cell (execution count, first
source line, the notebook's path when the kernel can know it) becomes :mod:`agentnb._provenance`'s current
cell, so workflow runs and batch cases written to the run store carry it in their metadata. A span processor
tags every span the cell causes with the cell, records each top-level agent turn as a run in the run store
(kind ``"agent"``), and counts model calls, tool calls, tokens and model time for the cell's meter
(:mod:`._meter`), which is shown after the cell finishes. Runs a cell started may go on after it (a reply
still streaming, a continuation after an approval click, which :class:`~agentnb.notebook.AgentRun` runs as
the cell that started it): their calls still count for that cell, and its line is updated in place.
"""

from __future__ import annotations

import contextlib
import json
import os
import threading
import time
import uuid
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import SpanProcessor

from .. import _telemetry as tel
from .._json import is_json_object
from .._provenance import CellInfo, cell_label, current_cell, set_cell
from ._meter import CellUsage, get_prices, meter_text

__all__ = ["CELL_ATTRIBUTE", "CellTracker", "agent_run_id", "notebook_location"]

#: Span attribute naming the cell a span ran in (``"[12] r = await agent.run(...)"``).
CELL_ATTRIBUTE = "agentnb.notebook.cell"

_KERNEL = uuid.uuid4().hex[:12]  # tells this kernel's runs apart when the notebook's path is unknown
_SOURCE_LIMIT = 80


def _first_line(source: str) -> str:
    for line in source.splitlines():
        if line.strip():
            line = line.rstrip()
            return line if len(line) <= _SOURCE_LIMIT else line[: _SOURCE_LIMIT - 1] + "…"
    return ""


def _server_for_kernel() -> dict[str, Any] | None:
    """The Jupyter server that started this kernel (its runtime file names its URL and root folder)."""
    try:
        from jupyter_core.paths import jupyter_runtime_dir
    except ImportError:
        return None
    parent = os.getppid()
    for path in sorted(Path(jupyter_runtime_dir()).glob("jpserver-*.json")):
        with contextlib.suppress(OSError, ValueError):
            info = json.loads(path.read_text())
            if info.get("pid") == parent:
                return info
    return None


_location: dict[str, tuple[str | None, str | None]] = {}


def notebook_location(user_ns: dict[str, Any] | None = None) -> tuple[str | None, str | None]:
    """Return ``(path, url)`` of the notebook this kernel runs, each ``None`` when the kernel cannot know it.

    The path comes from ``JPY_SESSION_NAME`` (set by Jupyter Server) or VS Code's ``__vsc_ipynb_file__``;
    the URL opens it in the JupyterLab that started the kernel.
    """
    path = os.environ.get("JPY_SESSION_NAME") or (user_ns or {}).get("__vsc_ipynb_file__")
    if not isinstance(path, str) or not path:
        return None, None
    if path in _location:
        return _location[path]
    url = None
    server = _server_for_kernel()
    if server is not None and server.get("url") and server.get("root_dir"):
        with contextlib.suppress(ValueError):
            relative = Path(path).resolve().relative_to(Path(server["root_dir"]).resolve())
            from urllib.parse import quote

            url = f"{str(server['url']).rstrip('/')}/lab/tree/{quote(relative.as_posix())}"
    _location[path] = (path, url)
    return path, url


def agent_run_id(trace_id: int) -> str:
    """The run id a top-level agent turn of a notebook cell is stored under (one run per trace)."""
    return f"agent-{trace_id:032x}"


class _CellSpans(SpanProcessor):
    """A span processor: tags spans with their cell, records top-level agent turns, feeds the meters."""

    def __init__(self, tracker: CellTracker) -> None:
        self.tracker = tracker
        self._cells: dict[int, tuple[CellInfo, CellUsage]] = {}  # span id -> its cell, until the span ends

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        cell = current_cell()
        if cell is None or not self.tracker.active:
            return
        usage = self.tracker.usage_for(cell)
        context = span.get_span_context()
        self._cells[context.span_id] = (cell, usage)
        span.set_attribute(CELL_ATTRIBUTE, cell_label(dict(cell)) or "")
        attrs: Mapping[str, Any] = span.attributes or {}
        top_level_turn = span.parent is None and attrs.get(tel.GEN_AI_OPERATION_NAME) == tel.OP_INVOKE_AGENT
        if top_level_turn and tel.WORKFLOW_RUN_ID not in attrs:
            # A top-level agent turn is recorded as a run of its own: its id goes on the span (and, inherited,
            # on its model calls' spans), so the run store sums the turn's tokens into that run.
            span.set_attribute(tel.WORKFLOW_RUN_ID, agent_run_id(context.trace_id))

    def on_end(self, span: Any) -> None:
        # on_end gets a read-only copy of the span, so spans are matched by id, not by object.
        context = span.context
        entry = self._cells.pop(context.span_id, None) if context is not None else None
        if entry is None:
            return
        cell, usage = entry
        attrs: Mapping[str, Any] = span.attributes or {}
        operation = attrs.get(tel.GEN_AI_OPERATION_NAME)
        duration = (span.end_time or 0) - (span.start_time or 0)
        usage.add_span(
            operation,
            model=attrs.get(tel.GEN_AI_RESPONSE_MODEL) or attrs.get(tel.GEN_AI_REQUEST_MODEL),
            input_tokens=attrs.get(tel.GEN_AI_USAGE_INPUT_TOKENS),
            output_tokens=attrs.get(tel.GEN_AI_USAGE_OUTPUT_TOKENS),
            duration_ns=duration,
            compacted=bool(attrs.get(tel.COMPACTION_GROUPS_EXCLUDED)),
        )
        if operation in (tel.OP_CHAT, tel.OP_EXECUTE_TOOL):
            self.tracker.counted_late(cell)
        if span.parent is None and operation == tel.OP_INVOKE_AGENT:
            self.tracker.record_agent_run(span, cell)

    def shutdown(self) -> None:
        self._cells.clear()


_FINISHED_KEPT = 64  # finished cells whose late calls still update their meter line

_processors: dict[int, _CellSpans] = {}  # one per tracer provider: the SDK offers no way to remove one


class CellTracker:
    """What the extension registers with IPython: the current cell, its runs, its meter."""

    def __init__(self, ip: Any) -> None:
        from ._meter import Meter

        self.ip = ip
        self.active = True
        self.meter = Meter()
        self._usage: dict[int, tuple[CellInfo, CellUsage]] = {}
        # Finished cells whose runs may still go on: their usage and the display of their meter line.
        self._finished: dict[int, tuple[CellInfo, CellUsage, Any]] = {}
        self._started: float | None = None
        self._cell: CellInfo | None = None
        self._lock = threading.Lock()
        self._warned = False
        ip.events.register("pre_run_cell", self.pre_run_cell)
        ip.events.register("post_run_cell", self.post_run_cell)
        self._attach()

    def _attach(self) -> None:
        try:
            from opentelemetry import trace
        except ImportError:  # pragma: no cover - the SDK is part of the notebook extra
            return
        provider = trace.get_tracer_provider()
        # The API's provider has no processors; the SDK's (or any that takes them) has add_span_processor.
        add_span_processor: Any = getattr(provider, "add_span_processor", None)
        if add_span_processor is None:
            return
        processor = _processors.get(id(provider))
        if processor is None:
            processor = _processors[id(provider)] = _CellSpans(self)
            add_span_processor(processor)
        processor.tracker = self

    # -- IPython hooks -------------------------------------------------------------------------------------
    def pre_run_cell(self, info: Any) -> None:
        """Make the cell that is about to run the current one."""
        path, url = notebook_location(getattr(self.ip, "user_ns", None))
        # The number the front end shows ("[12]"): the display hook's prompt count (ipykernel 7 has already
        # advanced the shell's own counter by the time the cell runs).
        count = getattr(getattr(self.ip, "displayhook", None), "prompt_count", None)
        if not isinstance(count, int):
            count = getattr(self.ip, "execution_count", None)
        cell: CellInfo = {
            "execution_count": count if getattr(info, "store_history", True) and isinstance(count, int) else None,
            "source": _first_line(getattr(info, "raw_cell", "") or ""),
            "cell_id": getattr(info, "cell_id", None),
            "notebook": path,
            "notebook_url": url,
            "kernel": _KERNEL,
        }
        self._started = time.perf_counter()
        self._cell = cell
        set_cell(cell)

    def post_run_cell(self, result: Any) -> None:
        """Show the finished cell's meter line, then leave no cell current."""
        # The hooks may run in another context than the cell's code: the tracker keeps its own copy.
        cell, self._cell = self._cell, None
        set_cell(None)
        if cell is None:
            return
        with self._lock:
            entry = self._usage.pop(id(cell), None)
        total = time.perf_counter() - self._started if self._started is not None else None
        if entry is not None and self.active:
            handle = self.meter.show(entry[1], total_seconds=total, interactive=bool(cell.get("cell_id")), reserve=True)
            with self._lock:
                self._finished[id(cell)] = (cell, entry[1], handle)
                while len(self._finished) > _FINISHED_KEPT:
                    del self._finished[next(iter(self._finished))]

    # -- used by the span processor ---------------------------------------------------------------------
    def usage_for(self, cell: CellInfo) -> CellUsage:
        with self._lock:
            finished = self._finished.get(id(cell))
            if finished is not None and finished[0] is cell:
                return finished[1]
            entry = self._usage.get(id(cell))
            if entry is None or entry[0] is not cell:
                entry = self._usage[id(cell)] = (cell, CellUsage())
            return entry[1]

    def counted_late(self, cell: CellInfo) -> None:
        """A call of ``cell`` ended after the cell did: bring its meter line up to date."""
        with self._lock:
            finished = self._finished.get(id(cell))
        if finished is None or finished[0] is not cell or not self.active:
            return
        _cell, usage, handle = finished
        # Wall time since the cell ran would count the person's wait for a click: only model time is shown.
        if handle is None:  # no line in the output to update (meter off, or a headless runner)
            self.meter.last = meter_text(usage, total_seconds=None, prices=get_prices())
            return
        self.meter.show(usage, total_seconds=None, interactive=bool(cell.get("cell_id")), handle=handle)

    def record_agent_run(self, span: Any, cell: CellInfo) -> None:
        """Write a top-level agent turn to the run store the spans go to, with the cell it ran in."""
        try:
            from ..observability import get_span_store

            spans = get_span_store()
            store = spans.run_store() if spans is not None else None
            if store is None:
                return
            attrs: Mapping[str, Any] = span.attributes or {}
            status = span.status
            failed, error = False, None
            if status is not None and status.status_code.name == "ERROR":
                failed, error = True, status.description
            trace_id = format(span.context.trace_id, "032x")
            store.add_runs(
                [
                    {
                        "run_id": attrs.get(tel.WORKFLOW_RUN_ID) or agent_run_id(span.context.trace_id),
                        "kind": "agent",
                        "name": str(attrs.get(tel.GEN_AI_AGENT_NAME) or attrs.get(tel.GEN_AI_AGENT_ID) or "agent"),
                        "status": "failed" if failed else "completed",
                        "started_at": (span.start_time or 0) / 1e9,
                        "ended_at": (span.end_time or 0) / 1e9,
                        "error": error,
                        "metadata": {"cell": dict(cell), "trace_id": trace_id, "via": "notebook"},
                        "events": [],
                    }
                ]
            )
        except Exception as e:  # the notebook must keep working when the store cannot be written
            if not self._warned:
                self._warned = True
                warnings.warn(f"agentnb could not record a run in the run store: {e}", RuntimeWarning, stacklevel=2)

    def close(self) -> None:
        """Unregister the hooks; the span processor stays attached but idle (the SDK cannot remove it)."""
        self.active = False
        set_cell(None)
        for name, hook in (("pre_run_cell", self.pre_run_cell), ("post_run_cell", self.post_run_cell)):
            with contextlib.suppress(ValueError):
                self.ip.events.unregister(name, hook)


def _shown_path(path: object) -> str | None:
    """A notebook's path as ``%agentnb runs`` shows it: relative to the kernel's folder when inside it.

    Absolute paths are long and a table cuts them at the end, where the notebook's name is.
    """
    if not isinstance(path, str) or not path:
        return None
    with contextlib.suppress(ValueError, OSError):
        return Path(path).resolve().relative_to(Path.cwd().resolve()).as_posix()
    return path


def notebook_runs(*, last: int = 20, everywhere: bool = False, user_ns: dict[str, Any] | None = None) -> Any:
    """Return this notebook's runs, newest first, as a DataFrame with their cells (``%agentnb runs``).

    Args:
        last: At most this many runs.
        everywhere: Runs started from any notebook cell, not only this notebook's.
        user_ns: The kernel's namespace (to find the notebook's path in VS Code).

    The ``notebook`` column names each run's notebook relative to the kernel's folder when it is inside it
    (the full path is in the run's metadata, as ``agentnb.runs()`` reads it).
    """
    import pandas as pd

    from ..store import default_store

    store = None
    with contextlib.suppress(ImportError):
        from ..observability import get_span_store

        spans = get_span_store()
        store = spans.run_store() if spans is not None else None
    store = store or default_store()
    path, _url = notebook_location(user_ns)
    rows: list[dict[str, Any]] = []
    for row in store.summarize_runs(limit=None):
        metadata: dict[str, Any] = row.get("metadata") or {}
        cell = metadata.get("cell")
        if not is_json_object(cell):
            continue
        mine = (path is not None and cell.get("notebook") == path) or cell.get("kernel") == _KERNEL
        if everywhere or mine:
            rows.append({**row, "cell": cell_label(cell), "notebook": _shown_path(cell.get("notebook"))})
        if len(rows) >= last:
            break
    columns = ["cell", "kind", "name", "status", "started_at", "duration_ms", "input_tokens", "output_tokens"]
    columns += ["notebook", "run_id"]
    frame = pd.DataFrame.from_records(rows, columns=columns)
    frame["started_at"] = pd.to_datetime(frame["started_at"], utc=True, format="ISO8601")
    return frame
