"""Input forms generated from Python types: pydantic models become one widget per field, text stays text.

Used for a workflow's input (the start executor's input type) and for answers to ``request_info``
(the request's response type). Values are validated with pydantic before anything runs, and a bad value
is reported next to the form instead of raising.
"""

from __future__ import annotations

import enum
import json
import types
from typing import Any, Literal, Union, get_args, get_origin

import panel as pn

from agentnb._html import escape
from agentnb._plain import type_label

from ._widgets import html_pane, pretty_json, set_html, watch

__all__ = ["TypeForm", "hints_of", "type_label"]

_NONE = type(None)


def _is_model(tp: Any) -> bool:
    try:
        from pydantic import BaseModel
    except ImportError:  # pragma: no cover - pydantic is a core dependency
        return False
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _strip_optional(tp: Any) -> tuple[Any, bool]:
    origin = get_origin(tp)
    if origin in (Union, types.UnionType):
        args = [a for a in get_args(tp) if a is not _NONE]
        if len(args) == 1 and len(get_args(tp)) == 2:
            return args[0], True
    return tp, False


def _field_widget(name: str, tp: Any, default: Any, description: str, constraints: dict[str, Any]) -> Any:
    """One widget for one field; anything without a natural widget is edited as JSON."""
    tp, optional = _strip_optional(tp)
    label = f"{name}{' (optional)' if optional else ''}"
    common: dict[str, Any] = {"label": label, "description": description or None, "sizing_mode": "stretch_width"}
    has_default = default is not None and default is not ...
    origin = get_origin(tp)
    if origin is Literal:
        options = list(get_args(tp))
        return pn.widgets.Select(options=options, value=default if default in options else options[0], **common)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        options = {str(m.value): m.value for m in tp}
        value = default.value if isinstance(default, enum.Enum) else next(iter(options.values()))
        return pn.widgets.Select(options=options, value=value, **common)
    if tp is bool:
        return pn.widgets.Checkbox(label=label, value=bool(default) if has_default else False)
    if tp is int:
        bounds = {k: constraints[k] for k in ("start", "end") if k in constraints}
        start = int(default) if isinstance(default, (int, float)) else bounds.get("start", 0)
        return pn.widgets.IntInput(value=start, **bounds, **common)
    if tp is float:
        return pn.widgets.FloatInput(value=float(default) if isinstance(default, (int, float)) else 0.0, **common)
    if tp is str:
        text = str(default) if has_default else ""
        if name in {"body", "text", "content", "prompt", "draft"} or len(text) > 60:
            return pn.widgets.TextAreaInput(value=text, height=90, **common)
        return pn.widgets.TextInput(value=text, **common)
    value = pretty_json(default) if has_default else ""
    return pn.widgets.TextAreaInput(
        value=value, height=90, placeholder=f"JSON for {type_label(tp)}", css_classes=["anb-json-field"], **common
    )


def _constraints(field: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    metadata: list[Any] = getattr(field, "metadata", None) or []
    for meta in metadata:
        for attr, key in (("ge", "start"), ("gt", "start"), ("le", "end"), ("lt", "end")):
            value = getattr(meta, attr, None)
            if value is not None:
                out[key] = value
    return out


class TypeForm:
    """A form that produces a value of one type (or one of several).

    Args:
        types_: The accepted types (the first is shown first).
        submit_label: The label of the submit button.

    Example:
        >>> from pydantic import BaseModel
        >>> class Order(BaseModel):
        ...     item: str = "tea"
        ...     count: int = 1
        >>> TypeForm([Order]).value()
        Order(item='tea', count=1)
    """

    def __init__(self, types_: list[Any] | tuple[Any, ...], *, submit_label: str = "Run") -> None:
        self.types = [t for t in types_ if t is not _NONE] or [str]
        self.type_select = pn.widgets.Select(
            label="Input type", options={type_label(t): i for i, t in enumerate(self.types)}, value=0, width=240
        )
        self.fields = pn.Column(sizing_mode="stretch_width", css_classes=["anb-form-fields"])
        self.error = html_pane("", css_classes=["anb-form-error"])
        self.submit = pn.widgets.Button(label=submit_label, color="primary", width=120, css_classes=["anb-form-submit"])
        self._widgets: dict[str, Any] = {}
        watch(self.type_select, lambda _e: self._build(), "value")
        self._build()

    @property
    def current_type(self) -> Any:
        """The type the form currently builds."""
        return self.types[int(self.type_select.value or 0)]

    def panel(self) -> pn.viewable.Viewable:
        """Return the form's layout."""
        items: list[Any] = []
        if len(self.types) > 1:
            items.append(self.type_select)
        items += [self.fields, self.error, self.submit]
        return pn.Column(*items, sizing_mode="stretch_width", css_classes=["anb-type-form"])

    def _build(self) -> None:
        tp = self.current_type
        self._widgets = {}
        if _is_model(tp):
            for name, field in tp.model_fields.items():
                default = field.get_default(call_default_factory=True) if not field.is_required() else None
                self._widgets[name] = _field_widget(
                    name, field.annotation, default, field.description or "", _constraints(field)
                )
            header = html_pane(f"<span class='anb-muted'>{escape(type_label(tp))}</span>")
            self.fields.objects = [header, *self._widgets.values()]
        else:
            widget = _field_widget("value", tp, None, "", {})
            if tp is str:
                widget = pn.widgets.TextAreaInput(
                    label="Input (text)", height=80, sizing_mode="stretch_width", css_classes=["anb-text-input"]
                )
            self._widgets["value"] = widget
            self.fields.objects = [widget]

    def value(self) -> Any:
        """Return the validated value; raise ``ValueError`` with a readable message when it is invalid."""
        tp = self.current_type
        raw: dict[str, Any] = {}
        for name, widget in self._widgets.items():
            value = widget.value
            if isinstance(widget, pn.widgets.TextAreaInput) and "anb-json-field" in widget.css_classes:
                if value.strip() == "":
                    continue
                try:
                    value = json.loads(value)
                except ValueError as e:
                    raise ValueError(f"{name}: not valid JSON ({e})") from e
            raw[name] = value
        try:
            from pydantic import TypeAdapter, ValidationError
        except ImportError:  # pragma: no cover
            return raw.get("value", raw)
        try:
            if _is_model(tp):
                return tp.model_validate(raw)
            return TypeAdapter(tp).validate_python(raw.get("value"))
        except ValidationError as e:
            lines = [f"{'.'.join(str(p) for p in err['loc']) or 'value'}: {err['msg']}" for err in e.errors()]
            raise ValueError("; ".join(lines)) from e

    def show_error(self, message: str) -> None:
        """Show a validation message under the form (empty clears it)."""
        set_html(self.error, f"<div class='anb-error'>{escape(message)}</div>" if message else "")


def hints_of(tp: Any) -> list[Any]:
    """Split a union hint into its members (``int | str`` -> ``[int, str]``)."""
    if get_origin(tp) in (Union, types.UnionType):
        return list(get_args(tp))
    return [tp]
