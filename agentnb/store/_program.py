"""Store operations written once as programs of SQL statements, run on blocking or async connections alike.

A program is a generator: it yields :class:`Statement` objects and receives each one's result (a row, the
rows, or a row count), then returns the operation's value. It does no I/O itself, so the same program (and
so the same SQL and the same rules about what to write) runs under :func:`drive` on a blocking DB-API
connection and under :func:`adrive` on an async one: a backend supplies only the function that executes one
statement.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

__all__ = ["Program", "Statement", "adrive", "drive", "perform"]

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Statement:
    """One SQL statement (``?`` placeholders) and what its program wants back from it.

    Attributes:
        sql: Portable SQL with ``?`` placeholders.
        params: The parameters, or with ``many=True`` a sequence of parameter rows.
        result: ``"none"``, ``"one"`` (the first row or ``None``), ``"all"`` (every row) or ``"rowcount"``.
        many: Run once per parameter row (``executemany``).
        final: The program yields nothing after this statement. When it is also the first, a backend may
            run it without opening a transaction (one statement is atomic by itself), saving round trips.
    """

    sql: str
    params: Sequence[Any] = ()
    result: Literal["none", "one", "all", "rowcount"] = "none"
    many: bool = False
    final: bool = False


Program = Generator[Statement, Any, T]
"""A store operation: yields statements, receives their results, returns its value."""


def drive(program: Program[T], execute: Callable[[Statement], Any], first: Statement | None = None) -> T:
    """Run ``program`` to its end, executing each statement with the blocking ``execute``.

    ``first`` is the program's first statement when the caller already took it with ``next(program)``
    (to choose how to run it, e.g. whether a transaction is needed).
    """
    try:
        statement = next(program) if first is None else first
        while True:
            try:
                result = execute(statement)
            except Exception as error:  # the program may handle it (e.g. a duplicate key), else it propagates
                statement = _after(statement, program.throw(error))
            else:
                statement = _after(statement, program.send(result))
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


async def adrive(
    program: Program[T], execute: Callable[[Statement], Awaitable[Any]], first: Statement | None = None
) -> T:
    """Run ``program`` to its end, awaiting each statement on ``execute`` (an async connection); see :func:`drive`."""
    try:
        statement = next(program) if first is None else first
        while True:
            try:
                result = await execute(statement)
            except Exception as error:  # the program may handle it (e.g. a duplicate key), else it propagates
                statement = _after(statement, program.throw(error))
            else:
                statement = _after(statement, program.send(result))
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


def _after(previous: Statement, statement: Statement) -> Statement:
    if previous.final:
        raise RuntimeError(f"A store program yielded {statement.sql!r} after its final statement {previous.sql!r}.")
    return statement


def perform(conn: Any, statement: Statement) -> Any:
    """Execute one statement on a blocking connection whose ``execute``/``executemany`` take ``?`` SQL."""
    if statement.many:
        cursor = conn.executemany(statement.sql, statement.params)
    else:
        cursor = conn.execute(statement.sql, statement.params)
    if statement.result == "one":
        return cursor.fetchone()
    if statement.result == "all":
        return cursor.fetchall()
    if statement.result == "rowcount":
        return cursor.rowcount
    return None
