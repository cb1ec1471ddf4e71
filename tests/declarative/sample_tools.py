"""Functions a declarative agent binds to by import string in the tests (never imported unless allowed)."""

from __future__ import annotations


def shout(text: str) -> str:
    """Return the text in upper case."""
    return text.upper()


def _hidden(text: str) -> str:
    return text


NOT_CALLABLE = 42
