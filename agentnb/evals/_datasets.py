"""Datasets grown from real runs: pick stored runs, keep their inputs and answers, edit, save a new version.

A dataset is rows of ``input`` and ``expected`` (the answer the run gave, to edit into the right one) plus
where each row came from (``source_run``, ``agent``, ``cell``); :func:`~agentnb.evals.evaluate` takes it as
it is. Saved datasets are versioned in the run store: each :meth:`Dataset.save` writes version N + 1 and
never changes an earlier one, so an experiment can name the exact data it ran on (``dataset:geo@3``).

Versions are kept with the store's experiment records (named ``dataset:<name>@<version>``, target
``"dataset"``), through its public API only, so every store backend holds them without a schema change.
"""

from __future__ import annotations

import csv
import datetime
import json
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

from .. import _html as h
from .._gc import gc_paused
from ._cases import plain

__all__ = ["DATASET_PREFIX", "Dataset", "add_runs_to_dataset", "dataset_from_runs", "datasets", "load_dataset"]

#: Experiment-record names that hold dataset versions start with this.
DATASET_PREFIX = "dataset:"
_KIND = "dataset"


def _store(store: Any) -> Any:
    from ._run import resolve_store

    return resolve_store(store)


class Dataset:
    """Rows to evaluate on (``input``, ``expected``, anything else), with a name and a version once saved.

    Args:
        rows: Dicts with at least ``input``.
        name: The dataset's name in the store.
        version: Its version (``None`` until saved).

    Example:
        ```python
        from agentnb.evals import dataset_from_runs, evaluate, scorers

        data = dataset_from_runs(agent="geo", status="completed", name="geo")
        data.rows[0]["expected"] = "Paris"  # fix an answer
        data.save()  # version 1, 2, ...
        await evaluate(agent, data, [scorers.exact_match()], name="geo-v2")
        ```
    """

    def __init__(
        self, rows: Iterable[Mapping[str, Any]], *, name: str | None = None, version: int | None = None
    ) -> None:
        self.rows: list[dict[str, Any]] = [dict(r) for r in rows]
        for i, row in enumerate(self.rows):
            if "input" not in row:
                raise ValueError(f"Dataset row {i} has no 'input' (its keys are {sorted(row)}).")
        self.name = name
        self.version = version

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Any:
        return iter(self.rows)

    def __repr__(self) -> str:
        return f"Dataset(name={self.name!r}, version={self.version!r}, rows={len(self.rows)})"

    # ------------------------------------------------------------------ files and frames

    def to_frame(self) -> Any:
        """The rows as a pandas DataFrame (``input`` and ``expected`` first)."""
        import pandas as pd

        columns = list(dict.fromkeys(["case_id", "input", "expected", *(k for r in self.rows for k in r)]))
        return pd.DataFrame.from_records(self.rows, columns=[c for c in columns if any(c in r for r in self.rows)])

    @classmethod
    def from_frame(cls, frame: Any, *, name: str | None = None) -> Dataset:
        """A dataset from a DataFrame with an ``input`` column (missing values become ``None``)."""
        records: list[dict[str, Any]] = frame.to_dict("records")
        return cls(({k: _clean(v) for k, v in r.items()} for r in records), name=name)

    def to_jsonl(self, path: str | os.PathLike[str]) -> Path:
        """Write one JSON object per line (atomically: a temporary file renamed into place)."""
        target = Path(path)
        text = "".join(json.dumps(plain(row), ensure_ascii=False) + "\n" for row in self.rows)
        return _write(target, text)

    def to_csv(self, path: str | os.PathLike[str]) -> Path:
        """Write a CSV file; values that are not text are written as JSON."""
        target = Path(path)
        columns = list(dict.fromkeys(k for r in self.rows for k in r))
        tmp = target.with_name(target.name + ".tmp")
        with tmp.open("w", encoding="utf-8", newline="") as f:
            writer = csv.DictWriter(f, columns)
            writer.writeheader()
            for row in self.rows:
                writer.writerow(
                    {k: v if isinstance(v, str) or v is None else json.dumps(plain(v)) for k, v in row.items()}
                )
        tmp.replace(target)
        return target

    @classmethod
    def from_file(cls, path: str | os.PathLike[str], *, name: str | None = None) -> Dataset:
        """Read a ``.jsonl`` or ``.csv`` file (as :func:`~agentnb.evals.evaluate` reads it)."""
        from ._cases import dataset_rows

        return cls(dataset_rows(path), name=name or Path(path).stem)

    # ------------------------------------------------------------------ the store

    def save(self, name: str | None = None, *, store: Any = None, note: str | None = None) -> Dataset:
        """Save these rows as the next version of dataset ``name`` in the run store; return the saved dataset.

        Raises:
            ValueError: No name was given here or when the dataset was made.
        """
        title = name or self.name
        if not title:
            raise ValueError("A dataset needs a name to be saved: save('geo') or Dataset(rows, name='geo').")
        run_store = _store(store)
        version = max(_versions(run_store, title), default=0) + 1
        record = f"{DATASET_PREFIX}{title}@{version}"
        run_store.put_experiment(
            record,
            status="completed",
            target=_KIND,
            metadata={"dataset": title, "version": version, "rows": len(self.rows), "note": note},
        )
        cases = [
            {"case_id": str(row.get("case_id", i)), "position": i, "status": "ok", "data": plain(row)}
            for i, row in enumerate(self.rows)
        ]
        run_store.add_experiment_cases(record, cases)
        return Dataset(self.rows, name=title, version=version)

    def _repr_html_(self) -> str:
        head = f"<b>{h.escape(self.name or 'dataset')}</b>" + (f" v{self.version}" if self.version else "")
        rows = [[_short(r.get("input")), _short(r.get("expected")), r.get("source_run") or ""] for r in self.rows[:20]]
        more = f"<div class='anb-muted'>{len(self.rows) - 20} more rows</div>" if len(self.rows) > 20 else ""
        return h.wrap(
            f"<div>{head}, {len(self.rows)} rows</div>{h.table(['input', 'expected', 'source_run'], rows)}{more}"
        )


def _short(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(plain(value), ensure_ascii=False)
    return h.shorten(text, 100)


def _clean(value: Any) -> Any:
    return None if isinstance(value, float) and value != value else value


def _write(target: Path, text: str) -> Path:
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(target)
    return target


def _versions(store: Any, name: str) -> list[int]:
    return [
        int(info["metadata"]["version"])
        for info in store.list_experiments()
        if info["target"] == _KIND and info["metadata"].get("dataset") == name
    ]


def load_dataset(name: str, *, version: int | None = None, store: Any = None) -> Dataset:
    """Read a saved dataset: ``version`` (default the latest).

    Raises:
        KeyError: There is no such dataset or version.
    """
    run_store = _store(store)
    versions = _versions(run_store, name)
    if not versions:
        raise KeyError(f"No dataset {name!r} in the run store.")
    chosen = max(versions) if version is None else version
    if chosen not in versions:
        raise KeyError(f"Dataset {name!r} has no version {chosen}; it has {sorted(versions)}.")
    rows = run_store.list_experiment_cases(f"{DATASET_PREFIX}{name}@{chosen}")
    return Dataset((r["data"] for r in rows), name=name, version=chosen)


def datasets(*, store: Any = None) -> list[dict[str, Any]]:
    """The saved datasets: one entry per version (``name, version, rows, note, created_at``), newest first."""
    out: list[dict[str, Any]] = []
    for info in _store(store).list_experiments():
        if info["target"] == _KIND:
            meta: dict[str, Any] = info["metadata"]
            out.append(
                {
                    "name": meta.get("dataset"),
                    "version": meta.get("version"),
                    "rows": meta.get("rows"),
                    "note": meta.get("note"),
                    "created_at": info["created_at"],
                }
            )
    return out


# --------------------------------------------------------------------------- from runs


def _moment(value: Any) -> datetime.datetime:
    """A time (datetime, epoch seconds or ISO text) as an aware UTC datetime, for comparing."""
    if isinstance(value, (int, float)):
        return datetime.datetime.fromtimestamp(value, datetime.timezone.utc)
    moment = value if isinstance(value, datetime.datetime) else datetime.datetime.fromisoformat(str(value))
    return moment if moment.tzinfo is not None else moment.astimezone(datetime.timezone.utc)


def _fast_loads() -> Callable[[str], Any]:
    """orjson's decoder when installed (several times faster on the small texts events hold), else json's."""
    try:
        from orjson import loads
    except ImportError:
        return json.loads
    return cast("Callable[[str], Any]", loads)


_loads = _fast_loads()


def _event_data(event: Mapping[str, Any]) -> Any:
    data = event.get("data")
    if type(data) is str:
        try:
            return _loads(data)
        except ValueError:  # what orjson refuses and json reads (NaN), or text that is no JSON at all
            try:
                return json.loads(data)
            except ValueError:
                return data
    return data


def _mapping(value: object) -> Mapping[str, Any] | None:
    # Decoded events are dicts and text: test for those first (a Mapping check costs several times more).
    if type(value) is dict:
        return cast("dict[str, Any]", value)
    if type(value) is str or value is None:
        return None
    return cast("Mapping[str, Any]", value) if isinstance(value, Mapping) else None


def _message_text(value: Any) -> Any:
    """A stored message's text (its text contents joined), or the value itself when it is not a message."""
    message = _mapping(value)
    if message is not None and "contents" in message:
        contents: list[Any] = message["contents"] or []
        texts = [str(part.get("text")) for c in contents if (part := _mapping(c)) is not None and part.get("text")]
        return " ".join(texts).strip()
    return value


def _field(data: Any, key: str) -> Any:
    """``data[key]`` when data is a dict holding it (the batch engine's ``{"input": ...}``), else data."""
    found = _mapping(data)
    return found[key] if found is not None and key in found else data


def run_io(events: Sequence[Mapping[str, Any]]) -> tuple[Any, Any]:
    """A stored run's input and final answer, from its events (batch cases, chats and workflows alike)."""
    question: Any = None
    answer: Any = None
    for event in events:
        kind = event.get("type")
        if question is not None and (kind == "input" or kind == "executor_invoked"):
            continue  # only the first input counts: its data need not be read
        data = _event_data(event)
        if kind == "input" and question is None:
            question = _message_text(_field(data, "input"))
        elif kind == "executor_invoked" and question is None:
            question = _message_text(data)
        elif kind == "message":
            text = _message_text(data)
            if text:
                answer = text
        elif kind == "output":
            answer = _field(_message_text(_field(data, "output")), "text")
    return question, answer


#: The event types :func:`run_io` reads (a dataset build asks the store for these alone).
_IO_EVENTS = ("input", "executor_invoked", "message", "output")
_READ_AT_ONCE = 20_000


def dataset_from_runs(
    *,
    agent: str | None = None,
    kind: str | None = None,
    status: str | None = "completed",
    since: Any = None,
    until: Any = None,
    cell: str | None = None,
    tag: str | None = None,
    run_ids: Sequence[str] | None = None,
    limit: int | None = None,
    name: str | None = None,
    store: Any = None,
) -> Dataset:
    """Turn stored runs into a dataset: each run's input, and its answer as ``expected`` (to edit).

    Args:
        agent: Only runs of this agent or workflow (the run's name).
        kind: Only runs of this kind (``"agent"``, ``"workflow"``).
        status: Only runs with this status (default ``"completed"``; ``None`` for all).
        since: Only runs started at or after this time.
        until: Only runs started before this time.
        cell: Only runs started from a notebook cell whose source contains this text.
        tag: Only runs whose metadata ``tags`` include this, or whose experiment is named this.
        run_ids: Exactly these runs (the DevUI's selection).
        limit: At most this many runs (newest first).
        name: The dataset's name (for :meth:`Dataset.save`).
        store: The run store (``None``: the default one).

    Runs without a readable input are skipped; rows keep ``source_run``, ``agent`` and ``started_at``.
    """
    run_store = _store(store)
    with gc_paused():
        return _from_runs(run_store, agent, kind, status, since, until, cell, tag, run_ids, limit, name)


def _from_runs(
    run_store: Any,
    agent: str | None,
    kind: str | None,
    status: str | None,
    since: Any,
    until: Any,
    cell: str | None,
    tag: str | None,
    run_ids: Sequence[str] | None,
    limit: int | None,
    name: str | None,
) -> Dataset:
    if run_ids is not None:
        read = run_store.read_runs(run_ids, parts=("run",))
        runs = [r["run"] for r in read.values() if r["run"] is not None]
    else:
        runs = run_store.list_runs(kind=kind, name=agent, status=status, since=since)
    end = None if until is None else _moment(until)
    chosen: list[dict[str, Any]] = []
    for run in runs:
        if end is not None and _moment(run["started_at"]) >= end:
            continue
        meta: dict[str, Any] = run.get("metadata") or {}
        started_in: dict[str, Any] = meta.get("cell") or {}
        if cell is not None and cell not in str(started_in.get("source") or ""):
            continue
        if tag is not None and tag not in (meta.get("tags") or []) and meta.get("experiment") != tag:
            continue
        chosen.append(run)
    rows: list[dict[str, Any]] = []
    # The events of many runs per query; with a limit, only as many runs as it may take to fill it.
    step = _READ_AT_ONCE if limit is None else max(limit, 64)
    for start in range(0, len(chosen), step):
        batch = chosen[start : start + step]
        events = run_store.read_runs([r["run_id"] for r in batch], parts=("events",), event_types=_IO_EVENTS)
        for run in batch:
            question, answer = run_io(events[run["run_id"]]["events"])
            if question is None:
                continue
            rows.append(
                {
                    "case_id": run["run_id"],
                    "input": question,
                    "expected": answer,
                    "source_run": run["run_id"],
                    "agent": run["name"],
                    "started_at": str(run["started_at"]),
                }
            )
            if limit is not None and len(rows) >= limit:
                return _built(rows, name)
    return _built(rows, name)


def _built(rows: list[dict[str, Any]], name: str | None) -> Dataset:
    """A dataset of rows made here (each a fresh dict with an input): taken as they are, not copied and checked."""
    data = Dataset([], name=name)
    data.rows = rows
    return data


def add_runs_to_dataset(name: str, run_ids: Sequence[str], *, store: Any = None) -> Dataset:
    """Append stored runs to dataset ``name`` (its latest version, or a new dataset) and save the next version.

    Runs already in the dataset are not added twice; runs without a readable input are skipped. This is the
    DevUI Runs view's "Add to dataset" action.
    """
    run_store = _store(store)
    try:
        current = load_dataset(name, store=run_store)
    except KeyError:
        current = Dataset([], name=name)
    have = {row.get("source_run") for row in current.rows}
    fresh = dataset_from_runs(run_ids=[r for r in run_ids if r not in have], status=None, store=run_store)
    return Dataset([*current.rows, *fresh.rows], name=name).save(store=run_store)
