"""Fixtures for the evals tests: an in-memory run store; the test folder importable by workers."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentnb.store import RunStore

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))


@pytest.fixture
def store() -> Iterator[RunStore]:
    s = RunStore(":memory:")
    yield s
    s.close()
