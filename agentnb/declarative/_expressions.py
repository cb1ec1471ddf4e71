"""A small, safe evaluator for the PowerFx expressions declarative YAML uses (``=Concat(Local.a, "!")``).

The reference evaluates these with the PowerFx engine (a .NET library). agentnb parses the subset its
samples use and evaluates the tree itself: nothing is passed to ``eval``, names resolve only through the
lookup the caller gives, and the only functions are the ones listed in :data:`FUNCTIONS`.

Covered: numbers, strings (``""`` escapes a quote), ``true``/``false``, ``Blank()``; dotted names
(``Local.x``, ``Workflow.Inputs.text``, ``System.LastMessage.Text``, ``Env.NAME``); record literals
``{a: 1}`` and table literals ``[1, 2]``; field access on any value (``Last(Local.items).name``);
``+ - * /``, ``&`` (text concatenation), ``= <> < <= > >=``, ``!``/``Not``, ``And``/``&&``,
``Or``/``||``, parentheses; and the functions If, Switch, IsBlank, IsEmpty, Coalesce, Concat,
Concatenate, Upper, Lower, Trim, Len, Left, Right, Mid, Find, StartsWith, EndsWith, Substitute, Text,
Value, Int, Round, Abs, Min, Max, Sum, CountRows, First, Last, Index, Not, And, Or, Blank, IsNumeric,
MessageText, UserMessage, AgentMessage.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

__all__ = ["FUNCTIONS", "ExpressionError", "evaluate", "is_expression", "names_in", "parse", "truthy"]


class ExpressionError(ValueError):
    """An expression cannot be parsed or evaluated (names the expression)."""


Lookup = Callable[[tuple[str, ...]], Any]

_TOKEN = re.compile(
    r"""\s*(?:
    (?P<num>\d+(?:\.\d+)?)
  | (?P<str>"(?:[^"]|"")*")
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<op><>|<=|>=|&&|\|\||[-+*/&=<>!(),.{}:\[\]])
)""",
    re.VERBOSE,
)


@dataclass(frozen=True)
class _Tok:
    kind: str
    text: str


def _tokenize(text: str) -> list[_Tok]:
    tokens: list[_Tok] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        m = _TOKEN.match(text, pos)
        if m is None or m.end() == pos:
            raise ExpressionError(f"Unexpected character {text[pos:].lstrip()[:1]!r} in expression {text!r}")
        kind = cast(str, m.lastgroup)
        tokens.append(_Tok(kind, m.group(kind)))
        pos = m.end()
    tokens.append(_Tok("end", ""))
    return tokens


# -- syntax tree: tuples keep it small and hashable ----------------------------------------------------------
Node = tuple[Any, ...]

_BINARY = {
    "||": 1, "Or": 1,
    "&&": 2, "And": 2,
    "=": 3, "<>": 3, "<": 3, "<=": 3, ">": 3, ">=": 3,
    "&": 4,
    "+": 5, "-": 5,
    "*": 6, "/": 6,
}  # fmt: skip


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokenize(text)
        self.i = 0

    def peek(self) -> _Tok:
        return self.tokens[self.i]

    def take(self, text: str | None = None) -> _Tok:
        tok = self.tokens[self.i]
        if text is not None and tok.text != text:
            raise ExpressionError(f"Expected {text!r} but found {tok.text or 'the end'!r} in {self.text!r}")
        self.i += 1
        return tok

    def parse(self) -> Node:
        node = self.expr(0)
        if self.peek().kind != "end":
            raise ExpressionError(f"Unexpected {self.peek().text!r} in expression {self.text!r}")
        return node

    def expr(self, min_prec: int) -> Node:
        left = self.unary()
        while True:
            tok = self.peek()
            prec = _BINARY.get(tok.text) if tok.kind in ("op", "name") else None
            if prec is None or prec < min_prec:
                return left
            self.take()
            right = self.expr(prec + 1)
            left = ("bin", tok.text, left, right)

    def unary(self) -> Node:
        tok = self.peek()
        if tok.text in ("!", "-") or (tok.kind == "name" and tok.text == "Not" and self._next_is_not_call()):
            self.take()
            return ("neg" if tok.text == "-" else "not", self.unary())
        return self.postfix(self.primary())

    def _next_is_not_call(self) -> bool:
        return self.tokens[self.i + 1].text != "("

    def postfix(self, node: Node) -> Node:
        while self.peek().text == ".":
            self.take()
            field = self.take()
            if field.kind != "name":
                raise ExpressionError(f"Expected a field name after '.' in {self.text!r}")
            node = ("field", node, field.text)
        return node

    def primary(self) -> Node:
        tok = self.take()
        if tok.kind == "num":
            value = float(tok.text)
            return ("lit", int(value) if value.is_integer() and "." not in tok.text else value)
        if tok.kind == "str":
            return ("lit", tok.text[1:-1].replace('""', '"'))
        if tok.text == "(":
            node = self.expr(0)
            self.take(")")
            return node
        if tok.text == "{":
            fields: list[tuple[str, Node]] = []
            while self.peek().text != "}":
                key = self.take()
                if key.kind not in ("name", "str"):
                    raise ExpressionError(f"Expected a field name in record literal in {self.text!r}")
                self.take(":")
                fields.append((key.text.strip('"'), self.expr(0)))
                if self.peek().text != ",":
                    break
                self.take(",")
            self.take("}")
            return ("record", tuple(fields))
        if tok.text == "[":
            items: list[Node] = []
            while self.peek().text != "]":
                items.append(self.expr(0))
                if self.peek().text != ",":
                    break
                self.take(",")
            self.take("]")
            return ("table", tuple(items))
        if tok.kind == "name":
            if tok.text in ("true", "false"):
                return ("lit", tok.text == "true")
            if self.peek().text == "(":
                self.take("(")
                args: list[Node] = []
                while self.peek().text != ")":
                    args.append(self.expr(0))
                    if self.peek().text != ",":
                        break
                    self.take(",")
                self.take(")")
                return ("call", tok.text, tuple(args))
            return ("name", tok.text)
        raise ExpressionError(f"Unexpected {tok.text or 'end of expression'!r} in {self.text!r}")


def is_expression(value: Any) -> bool:
    """Whether ``value`` is a PowerFx expression string (it starts with ``=``)."""
    return isinstance(value, str) and value.startswith("=")


_CACHE: dict[str, Node] = {}


def parse(text: str) -> Node:
    """Parse an expression (with or without its leading ``=``) into a tree."""
    body = text[1:] if text.startswith("=") else text
    node = _CACHE.get(body)
    if node is None:
        node = _Parser(body).parse()
        if len(_CACHE) < 4096:
            _CACHE[body] = node
    return node


def names_in(text: str) -> set[str]:
    """The top-level names an expression reads (``Env`` for ``=Env.KEY``), without evaluating it."""
    found: set[str] = set()

    def walk(node: Node) -> None:
        kind = node[0]
        if kind == "name":
            found.add(node[1])
        elif kind in ("field", "not", "neg"):
            walk(node[1])
        elif kind == "bin":
            walk(node[2])
            walk(node[3])
        elif kind == "call":
            for arg in node[2]:
                walk(arg)
        elif kind == "record":
            for _, value in node[1]:
                walk(value)
        elif kind == "table":
            for item in node[1]:
                walk(item)

    walk(parse(text))
    return found


def evaluate(text: str, lookup: Lookup) -> Any:
    """Evaluate ``text`` (``=...``); ``lookup`` resolves a dotted name such as ``("Local", "x")``."""
    try:
        return _Eval(text, lookup).run(parse(text))
    except ExpressionError:
        raise
    except (TypeError, ValueError, ZeroDivisionError, IndexError) as e:
        raise ExpressionError(f"Cannot evaluate {text!r}: {e}") from e


class _Eval:
    def __init__(self, text: str, lookup: Lookup) -> None:
        self.text = text
        self.lookup = lookup

    def run(self, node: Node) -> Any:
        kind = node[0]
        if kind == "lit":
            return node[1]
        if kind in ("name", "field"):
            path = _dotted(node)
            if path is not None:
                return self.lookup(path)
            return _get_field(self.run(node[1]), node[2])
        if kind == "not":
            return not _truthy(self.run(node[1]))
        if kind == "neg":
            return -_number(self.run(node[1]))
        if kind == "record":
            return {key: self.run(value) for key, value in node[1]}
        if kind == "table":
            return [self.run(item) for item in node[1]]
        if kind == "bin":
            return self.binary(node[1], node[2], node[3])
        if kind == "call":
            return self.call(node[1], node[2])
        raise ExpressionError(f"Unknown node {kind!r} in {self.text!r}")  # pragma: no cover

    def binary(self, op: str, left_node: Node, right_node: Node) -> Any:
        left = self.run(left_node)
        if op in ("And", "&&"):
            return _truthy(left) and _truthy(self.run(right_node))
        if op in ("Or", "||"):
            return _truthy(left) or _truthy(self.run(right_node))
        right = self.run(right_node)
        if op == "&":
            return _text(left) + _text(right)
        if op == "=":
            return _equal(left, right)
        if op == "<>":
            return not _equal(left, right)
        if op in ("<", "<=", ">", ">="):
            a, b = (_number(left), _number(right)) if _numeric(left) or _numeric(right) else (_text(left), _text(right))
            return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]  # type: ignore[operator]
        a, b = _number(left), _number(right)
        if op == "+":
            return _tidy(a + b)
        if op == "-":
            return _tidy(a - b)
        if op == "*":
            return _tidy(a * b)
        if b == 0:
            raise ExpressionError(f"Division by zero in {self.text!r}")
        return _tidy(a / b)

    def call(self, name: str, arg_nodes: tuple[Node, ...]) -> Any:
        if name == "If":
            # If(cond1, value1, cond2, value2, ..., [else]) evaluates lazily, as PowerFx does.
            args = list(arg_nodes)
            while len(args) >= 2:
                if _truthy(self.run(args[0])):
                    return self.run(args[1])
                args = args[2:]
            return self.run(args[0]) if args else None
        if name == "Switch":
            if not arg_nodes:
                raise ExpressionError(f"Switch needs arguments in {self.text!r}")
            subject = self.run(arg_nodes[0])
            rest = list(arg_nodes[1:])
            while len(rest) >= 2:
                if _equal(subject, self.run(rest[0])):
                    return self.run(rest[1])
                rest = rest[2:]
            return self.run(rest[0]) if rest else None
        if name in ("And", "Or"):
            values = (_truthy(self.run(a)) for a in arg_nodes)
            return all(values) if name == "And" else any(values)
        function = FUNCTIONS.get(name)
        if function is None:
            raise ExpressionError(f"Unknown function {name!r} in {self.text!r}; supported: {sorted(FUNCTIONS)}")
        return function(*(self.run(a) for a in arg_nodes))


def _dotted(node: Node) -> tuple[str, ...] | None:
    if node[0] == "name":
        return (node[1],)
    if node[0] == "field":
        inner = _dotted(node[1])
        return (*inner, node[2]) if inner is not None else None
    return None


def _get_field(value: Any, field: str) -> Any:
    if value is None:
        return None
    if isinstance(value, Mapping):
        mapping = cast("Mapping[str, Any]", value)
        if field in mapping:
            return mapping[field]
        lowered = {k.lower(): v for k, v in mapping.items()}
        return lowered.get(field.lower())
    if field == "Text" and hasattr(value, "text"):
        return value.text
    attr = field[:1].lower() + field[1:]
    return getattr(value, attr, None) if not attr.startswith("_") else None


def truthy(value: Any) -> bool:
    """PowerFx truthiness: ``"true"``/``"false"`` text counts as the boolean it spells."""
    return _truthy(value)


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.lower() == "true" if value.lower() in ("true", "false") else bool(value)
    return bool(value)


def _numeric(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _number(value: Any) -> float:
    if value is None:
        return 0
    if isinstance(value, bool):
        return 1 if value else 0
    if isinstance(value, int | float):
        return value
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            raise ExpressionError(f"{value!r} is not a number") from None
    raise ExpressionError(f"{type(value).__name__} is not a number")


def _tidy(value: float) -> int | float:
    return int(value) if isinstance(value, float) and value.is_integer() else value


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return str(_tidy(value))
    text = getattr(value, "text", None)
    if isinstance(text, str):
        return text
    return str(value)


def _equal(left: Any, right: Any) -> bool:
    if _numeric(left) and _numeric(right):
        return left == right
    if left is None or right is None:
        return _blank(left) and _blank(right)
    if isinstance(left, str) or isinstance(right, str):
        return _text(left) == _text(right)
    return bool(left == right)


def _blank(value: Any) -> bool:
    return value is None or value == ""


def _empty(value: Any) -> bool:
    return _blank(value) or (isinstance(value, Sequence | Mapping) and not isinstance(value, str) and not value)


def _rows(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return list(cast(Sequence[Any], value))
    return [value]


def _message_text(value: Any) -> str:
    """The text of a message, a list of messages or an agent response (their last assistant text)."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        mapping = cast("Mapping[str, Any]", value)
        return _text(mapping.get("text") or mapping.get("Text"))
    text = getattr(value, "text", None)
    if isinstance(text, str):
        return text
    if isinstance(value, list | tuple):
        return "\n".join(t for t in (_message_text(v) for v in cast(Sequence[Any], value)) if t)
    return _text(value)


def _find(needle: Any, haystack: Any, start: Any = 1) -> int | None:
    index = _text(haystack).find(_text(needle), int(_number(start)) - 1)
    return index + 1 if index >= 0 else None


def _message(role: str) -> Callable[[Any], dict[str, Any]]:
    def build(text: Any) -> dict[str, Any]:
        return {"role": role, "text": _text(text)}

    return build


def _sum(*values: Any) -> Any:
    items = _rows(values[0]) if len(values) == 1 else list(values)
    return _tidy(sum(_number(v) for v in items))


def _mid(text: Any, start: Any, count: Any = None) -> str:
    tail = _text(text)[int(_number(start)) - 1 :]
    return tail[: int(_number(count))] if count is not None else tail


def _right(text: Any, count: Any) -> str:
    n = int(_number(count))
    return _text(text)[-n:] if n > 0 else ""


def _is_numeric(value: Any) -> bool:
    return _numeric(value) or (isinstance(value, str) and re.fullmatch(r"\s*-?\d+(\.\d+)?\s*", value) is not None)


def _first(value: Any) -> Any:
    rows = _rows(value)
    return rows[0] if rows else None


def _last(value: Any) -> Any:
    rows = _rows(value)
    return rows[-1] if rows else None


def _index(value: Any, position: Any) -> Any:
    return _rows(value)[int(_number(position)) - 1]


def _concat(*values: Any) -> str:
    return "".join(_text(v) for v in values)


def _coalesce(*values: Any) -> Any:
    return next((v for v in values if not _blank(v)), None)


def _round(value: Any, digits: Any = 0) -> Any:
    return _tidy(round(_number(value), int(_number(digits))))


def _blank_value() -> None:
    return None


FUNCTIONS: dict[str, Callable[..., Any]] = {
    "Abs": lambda v: _tidy(abs(_number(v))),  # pyright: ignore[reportUnknownLambdaType]
    "AgentMessage": _message("assistant"),
    "Blank": _blank_value,
    "Coalesce": _coalesce,
    "Concat": _concat,
    "Concatenate": _concat,
    "CountRows": lambda v: len(_rows(v)),  # pyright: ignore[reportUnknownLambdaType]
    "EndsWith": lambda t, s: _text(t).endswith(_text(s)),  # pyright: ignore[reportUnknownLambdaType]
    "Find": _find,
    "First": _first,
    "Index": _index,
    "Int": lambda v: math.floor(_number(v)),  # pyright: ignore[reportUnknownLambdaType]
    "IsBlank": _blank,
    "IsEmpty": _empty,
    "IsNumeric": _is_numeric,
    "Last": _last,
    "Left": lambda t, n: _text(t)[: int(_number(n))],  # pyright: ignore[reportUnknownLambdaType]
    "Len": lambda v: len(_text(v)),  # pyright: ignore[reportUnknownLambdaType]
    "Lower": lambda v: _text(v).lower(),  # pyright: ignore[reportUnknownLambdaType]
    "Max": lambda *vs: _tidy(max(_number(v) for v in vs)),  # pyright: ignore[reportUnknownLambdaType]
    "MessageText": _message_text,
    "Mid": _mid,
    "Min": lambda *vs: _tidy(min(_number(v) for v in vs)),  # pyright: ignore[reportUnknownLambdaType]
    "Not": lambda v: not _truthy(v),  # pyright: ignore[reportUnknownLambdaType]
    "Right": _right,
    "Round": _round,
    "StartsWith": lambda t, p: _text(t).startswith(_text(p)),  # pyright: ignore[reportUnknownLambdaType]
    "Substitute": lambda t, o, n: _text(t).replace(_text(o), _text(n)),  # pyright: ignore[reportUnknownLambdaType]
    "Sum": _sum,
    "Text": _text,
    "Trim": lambda v: " ".join(_text(v).split()),  # pyright: ignore[reportUnknownLambdaType]
    "Upper": lambda v: _text(v).upper(),  # pyright: ignore[reportUnknownLambdaType]
    "UserMessage": _message("user"),
    "Value": _number,
}
