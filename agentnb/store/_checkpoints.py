"""Checkpoints: a workflow's state after a superstep, as JSON text, with what lineage and time travel read.

Workflows await these writes, so each is a program (:mod:`._program`) with a blocking method and an
``a``-prefixed coroutine twin.
"""

from __future__ import annotations

from typing import Any, TypedDict, cast

from ._backend import Backend
from ._program import Program, Statement
from ._values import to_iso

__all__ = ["CheckpointRow", "CheckpointTables"]


class CheckpointRow(TypedDict):
    """A stored checkpoint's metadata (no data), as :meth:`Store.list_checkpoints` returns it."""

    checkpoint_id: str
    run_id: str | None
    workflow_name: str | None
    parent_id: str | None
    step: int | None
    created_at: str


_CHECKPOINT_COLUMNS: tuple[str, ...] = ("checkpoint_id", "run_id", "workflow_name", "parent_id", "step", "created_at")
_PUT_CHECKPOINT_SQL = (
    "INSERT INTO checkpoints (checkpoint_id, run_id, workflow_name, parent_id, step, created_at, data) "
    "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (checkpoint_id) DO UPDATE SET "
    "run_id = excluded.run_id, workflow_name = excluded.workflow_name, parent_id = excluded.parent_id, "
    "step = excluded.step, created_at = excluded.created_at, data = excluded.data"
)


def _get_checkpoint(checkpoint_id: str) -> Program[str | None]:
    rows = yield Statement("SELECT data FROM checkpoints WHERE checkpoint_id = ?", (checkpoint_id,), result="all")
    return rows[0][0] if rows else None


class CheckpointTables(Backend):
    """Checkpoints: the part of :class:`~agentnb.store.Store` that workflows resume from."""

    def put_checkpoint(
        self,
        checkpoint_id: str,
        *,
        run_id: str | None,
        workflow_name: str | None,
        parent_id: str | None,
        step: int | None,
        created_at: Any = None,
        data: str,
    ) -> None:
        """Store a checkpoint's JSON text (replacing one with the same id)."""
        self._transact(self._put_checkpoint(checkpoint_id, run_id, workflow_name, parent_id, step, created_at, data))

    async def aput_checkpoint(
        self,
        checkpoint_id: str,
        *,
        run_id: str | None,
        workflow_name: str | None,
        parent_id: str | None,
        step: int | None,
        created_at: Any = None,
        data: str,
    ) -> None:
        """Await :meth:`put_checkpoint` (on PostgreSQL over an async connection)."""
        await self._atransact(
            self._put_checkpoint(checkpoint_id, run_id, workflow_name, parent_id, step, created_at, data)
        )

    def _put_checkpoint(
        self,
        checkpoint_id: str,
        run_id: str | None,
        workflow_name: str | None,
        parent_id: str | None,
        step: int | None,
        created_at: Any,
        data: str,
    ) -> Program[None]:
        if not isinstance(cast(object, data), str):  # untyped callers may pass anything
            raise TypeError(f"Checkpoint data must be JSON text (str), got {type(data).__name__}.")
        params = (checkpoint_id, run_id, workflow_name, parent_id, step, to_iso(created_at), data)
        yield from self._turn("checkpoints")
        yield Statement(_PUT_CHECKPOINT_SQL, params, final=True)

    def get_checkpoint(self, checkpoint_id: str) -> str | None:
        """Return a checkpoint's JSON text, or ``None`` when there is no such checkpoint."""
        return self._query(_get_checkpoint(checkpoint_id))

    async def aget_checkpoint(self, checkpoint_id: str) -> str | None:
        """Await :meth:`get_checkpoint`."""
        return await self._aquery(_get_checkpoint(checkpoint_id))

    def get_checkpoint_info(self, checkpoint_id: str) -> CheckpointRow | None:
        """Return a checkpoint's metadata row (no data), or ``None``."""
        rows = self._read(
            f"SELECT {', '.join(_CHECKPOINT_COLUMNS)} FROM checkpoints WHERE checkpoint_id = ?", (checkpoint_id,)
        )
        return cast(CheckpointRow, dict(zip(_CHECKPOINT_COLUMNS, rows[0], strict=True))) if rows else None

    def list_checkpoints(self, *, run_id: str | None = None, workflow_name: str | None = None) -> list[CheckpointRow]:
        """List checkpoint metadata, oldest first.

        Each row has ``checkpoint_id, run_id, workflow_name, parent_id, step, created_at`` (no data).
        """
        return self._query(self._list_checkpoints(run_id, workflow_name))

    async def alist_checkpoints(
        self, *, run_id: str | None = None, workflow_name: str | None = None
    ) -> list[CheckpointRow]:
        """Await :meth:`list_checkpoints`."""
        return await self._aquery(self._list_checkpoints(run_id, workflow_name))

    def _list_checkpoints(self, run_id: str | None, workflow_name: str | None) -> Program[list[CheckpointRow]]:
        where: list[str] = []
        params: list[Any] = []
        if run_id is not None:
            where.append("run_id = ?")
            params.append(run_id)
        if workflow_name is not None:
            where.append("workflow_name = ?")
            params.append(workflow_name)
        sql = f"SELECT {', '.join(_CHECKPOINT_COLUMNS)} FROM checkpoints"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += f" ORDER BY created_at, {self._insert_order}"
        rows = yield Statement(sql, params, result="all")
        return cast("list[CheckpointRow]", [dict(zip(_CHECKPOINT_COLUMNS, row, strict=True)) for row in rows])

    def delete_checkpoint(self, checkpoint_id: str) -> bool:
        """Delete a checkpoint; return whether it existed."""
        return self._transact(self._delete_checkpoint(checkpoint_id))

    async def adelete_checkpoint(self, checkpoint_id: str) -> bool:
        """Await :meth:`delete_checkpoint`."""
        return await self._atransact(self._delete_checkpoint(checkpoint_id))

    def _delete_checkpoint(self, checkpoint_id: str) -> Program[bool]:
        yield from self._turn("checkpoints")
        sql = "DELETE FROM checkpoints WHERE checkpoint_id = ?"
        deleted = yield Statement(sql, (checkpoint_id,), result="rowcount", final=True)
        return bool(deleted > 0)
