"""The PowerFx subset: what the reference's samples use, evaluated without eval and only through the lookup."""

from __future__ import annotations

from typing import Any

import pytest

from agentnb.declarative._expressions import ExpressionError, evaluate, names_in

VARIABLES: dict[tuple[str, ...], Any] = {
    ("Local", "age"): 15,
    ("Local", "name"): "Ada",
    ("Local", "items"): [{"name": "a"}, {"name": "b"}],
    ("inputs", "name"): None,
}


def _eval(text: str) -> Any:
    return evaluate(text, lambda path: VARIABLES.get(path))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("=1 + 2 * 3", 7),
        ("=(1 + 2) * 3", 9),
        ("=7 / 2", 3.5),
        ("=-Local.age + 1", -14),
        ('="say ""hi"""', 'say "hi"'),
        ('=Concat("Hi ", Local.name, "!")', "Hi Ada!"),
        ('=Concatenate("a", 1, true)', "a1true"),
        ('="x" & 2', "x2"),
        ("=Local.age < 13", False),
        ("=Local.age >= 13 And Local.age < 20", True),
        ("=Or(Local.age = 1, Local.age = 15)", True),
        ('=Local.name <> "Bob"', True),
        ("=!IsBlank(inputs.name)", False),
        ('=If(IsBlank(inputs.name), "World", inputs.name)', "World"),
        ('=If(Local.age < 13, "child", Local.age < 20, "teen", "adult")', "teen"),
        ('=Switch(Local.name, "Bob", 1, "Ada", 2, 3)', 2),
        ('=Upper(Local.name) & Lower("X")', "ADAx"),
        ('=Find("CONG", Upper("congrats"))', 1),
        ('=IsBlank(Find("zzz", "abc"))', True),
        ("=CountRows(Local.items)", 2),
        ("=Last(Local.items).name", "b"),
        ("={a: 1, b: [1, 2]}", {"a": 1, "b": [1, 2]}),
        ('=Trim("  a   b ")', "a b"),
        ('=Mid("abcdef", 2, 3)', "bcd"),
        ('=Value("4.5") + 1', 5.5),
        ('=MessageText({text: "hello"})', "hello"),
        ("=Text(Local.age)", "15"),
        ("=Not(true)", False),
    ],
)
def test_expressions(text: str, expected: Any) -> None:
    assert _eval(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('=__import__("os")', "Unknown function '__import__'"),
        ('=Upper("a").__class__', None),
        ("=Local.name.__class__", None),  # dunder fields resolve to nothing, never to Python attributes
        ("=1 / 0", "Division by zero"),
        ("=Concat(1,", "Unexpected"),
        ("=1 $ 2", "Unexpected character"),
        ('="abc" + 1', "is not a number"),
    ],
)
def test_no_python_is_reachable_and_errors_are_typed(text: str, message: str | None) -> None:
    if message is None:
        assert _eval(text) is None
        return
    with pytest.raises(ExpressionError, match=message):
        _eval(text)


def test_names_in_finds_what_an_expression_reads() -> None:
    assert names_in('=Concat(Env.KEY, If(Local.x, Workflow.Inputs.y, "z"))') == {"Env", "Local", "Workflow"}
