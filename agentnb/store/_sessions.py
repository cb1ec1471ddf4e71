"""Saved sessions: an agent session's JSON text under its id, for history that outlives the process."""

from __future__ import annotations

from typing import TypedDict, cast

from ._backend import Backend
from ._values import now_iso

__all__ = ["SessionRow", "SessionTables"]


class SessionRow(TypedDict):
    """A saved session, as :meth:`Store.list_sessions` returns it (``size`` in characters of its JSON text)."""

    session_id: str
    updated_at: str
    size: int


class SessionTables(Backend):
    """Sessions: the part of :class:`~agentnb.store.Store` that keeps agent sessions."""

    def save_session(self, session_id: str, data: str) -> None:
        """Store a session's JSON text (replacing the previous version)."""
        if not isinstance(cast(object, data), str):  # untyped callers may pass anything
            raise TypeError(f"Session data must be JSON text (str), got {type(data).__name__}.")
        with self._write() as conn:
            self._serialize(conn, "sessions")
            conn.execute(
                "INSERT INTO sessions (session_id, updated_at, data) VALUES (?, ?, ?) "
                "ON CONFLICT (session_id) DO UPDATE SET updated_at = excluded.updated_at, data = excluded.data",
                (session_id, now_iso(), data),
            )

    def load_session(self, session_id: str) -> str | None:
        """Return a session's JSON text, or ``None`` when it was never saved."""
        rows = self._read("SELECT data FROM sessions WHERE session_id = ?", (session_id,))
        return rows[0][0] if rows else None

    def list_sessions(self) -> list[SessionRow]:
        """List saved sessions, most recently saved first: ``session_id``, ``updated_at``, ``size`` (characters)."""
        rows = self._read("SELECT session_id, updated_at, LENGTH(data) FROM sessions ORDER BY updated_at DESC")
        return [{"session_id": r[0], "updated_at": r[1], "size": r[2]} for r in rows]

    def delete_session(self, session_id: str) -> bool:
        """Delete a saved session; return whether it existed."""
        with self._write() as conn:
            self._serialize(conn, "sessions")
            return conn.execute("DELETE FROM sessions WHERE session_id = ?", (session_id,)).rowcount > 0
