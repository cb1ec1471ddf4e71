"""Store programs: one generator per operation, run by a blocking or an async driver."""

from __future__ import annotations

from collections.abc import Generator
from typing import Any

import pytest

from agentnb.store._program import Statement, adrive, drive


def program(log: list[str]) -> Generator[Statement, Any, str]:
    rows = yield Statement("SELECT 1", result="all")
    try:
        yield Statement("INSERT dup", final=True)
    except KeyError as e:  # a failing statement is thrown into the program, which may handle it
        log.append(f"handled {e}")
        return f"rows={rows}"
    return "inserted"


def execute(statement: Statement) -> Any:
    if statement.sql == "INSERT dup":
        raise KeyError("dup")
    return [(1,)]


async def aexecute(statement: Statement) -> Any:
    return execute(statement)


async def test_both_drivers_send_results_and_throw_errors_into_the_program() -> None:
    log: list[str] = []
    assert drive(program(log), execute) == "rows=[(1,)]"
    assert await adrive(program(log), aexecute) == "rows=[(1,)]"
    assert log == ["handled 'dup'", "handled 'dup'"]
    first_taken = program([])
    first = next(first_taken)
    assert drive(first_taken, execute, first) == "rows=[(1,)]"


def test_an_unhandled_error_propagates_and_nothing_follows_a_final_statement() -> None:
    def failing() -> Generator[Statement, Any, None]:
        yield Statement("INSERT dup")

    with pytest.raises(KeyError):
        drive(failing(), execute)

    def broken() -> Generator[Statement, Any, None]:
        yield Statement("SELECT 1", final=True)
        yield Statement("SELECT 2")

    with pytest.raises(RuntimeError, match="after its final statement"):
        drive(broken(), execute)
