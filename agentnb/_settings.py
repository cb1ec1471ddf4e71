"""Settings from keyword arguments, a ``.env`` file and the environment, typed by a ``TypedDict``.

agentnb's own clients take their settings as keyword arguments and read the documented environment
variables; :func:`load_settings` is the reference's helper for code that declares its settings as a
``TypedDict`` and resolves them the same way. :class:`SecretString` keeps keys out of reprs and logs.
"""

from __future__ import annotations

import os
import types
from collections.abc import Sequence
from contextlib import suppress
from pathlib import Path
from typing import Any, Union, get_args, get_origin, get_type_hints

from typing_extensions import TypeVar

from .exceptions import SettingNotFoundError

__all__ = ["SecretString", "load_settings"]

SettingsT = TypeVar("SettingsT", default=dict[str, Any])


class SecretString(str):
    """A string whose ``repr`` hides its value, so an API key printed by accident shows stars.

    Example:
        >>> key = SecretString("sk-123")
        >>> key, key == "sk-123", key.get_secret_value()
        (SecretString('**********'), True, 'sk-123')
    """

    def __repr__(self) -> str:
        return "SecretString('**********')"

    def get_secret_value(self) -> str:
        """The plain value (the name ``pydantic.SecretStr`` uses)."""
        return str(self)


def read_env_file(path: str, encoding: str) -> dict[str, str]:
    """``KEY=VALUE`` lines of a ``.env`` file (``export``, comments and quotes as dotenv reads them)."""
    values: dict[str, str] = {}
    for raw in Path(path).read_text(encoding=encoding).splitlines():
        line = raw.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.removeprefix("export ").partition("=")
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        elif " #" in value:
            value = value.split(" #", 1)[0].rstrip()
        values[key.strip()] = value
    return values


def _coerce(value: str, target: Any) -> Any:
    """A string from the environment as the field's type (``int``, ``float``, ``bool``, ``SecretString``)."""
    if get_origin(target) in (Union, types.UnionType):
        for arm in get_args(target):
            if arm is not type(None):
                with suppress(ValueError, TypeError):
                    return _coerce(value, arm)
        return value
    if isinstance(target, type) and issubclass(target, SecretString):
        return SecretString(value)
    if target is bool:
        return value.strip().lower() in ("true", "1", "yes", "on")
    if target in (int, float):
        return target(value)
    return value


def _accepts(value: object, target: Any) -> bool:
    arms = (
        [a for a in get_args(target) if a is not type(None)]
        if get_origin(target) in (Union, types.UnionType)
        else [target]
    )
    plain = [get_origin(a) or a for a in arms]
    if any(not isinstance(a, type) for a in plain):
        return True  # Literal, TypeVar, ...: not checked
    if isinstance(value, bool):
        return bool in plain
    if isinstance(value, str) and any(isinstance(a, type) and issubclass(a, SecretString) for a in plain):
        return True  # a plain string for a secret: wrapped by the caller
    if isinstance(value, int) and float in plain:
        return True
    return isinstance(value, tuple(plain))


def load_settings(
    settings_type: type[SettingsT],
    *,
    env_prefix: str = "",
    env_file_path: str | None = None,
    env_file_encoding: str | None = None,
    required_fields: Sequence[str | tuple[str, ...]] | None = None,
    **overrides: Any,
) -> SettingsT:
    """Resolve each field of a ``TypedDict``: keyword override, then ``.env`` file, then environment, then default.

    A field ``api_key`` is read from ``<env_prefix>API_KEY``. ``None`` overrides are ignored, so callers can
    forward optional parameters. ``required_fields`` holds names that must resolve, or tuples of names of
    which exactly one must.

    Raises:
        FileNotFoundError: ``env_file_path`` was given and does not exist.
        SettingNotFoundError: A required setting is missing, or a group has none or several set.
        ValueError: An override has the wrong type.

    Example:
        >>> from typing import TypedDict
        >>> class MySettings(TypedDict, total=False):
        ...     model: str | None
        ...     timeout: float | None
        >>> load_settings(MySettings, env_prefix="MYAPP_", model="gpt-4o-mini")["model"]
        'gpt-4o-mini'
    """
    from_file: dict[str, str] = {}
    if env_file_path is not None:
        if not os.path.exists(env_file_path):
            raise FileNotFoundError(env_file_path)
        from_file = read_env_file(env_file_path, env_file_encoding or "utf-8")
    given = {k: v for k, v in overrides.items() if v is not None}
    result: dict[str, Any] = {}
    for name, field_type in get_type_hints(settings_type).items():
        variable = f"{env_prefix}{name.upper()}"
        if name in given:
            value = given[name]
            if not _accepts(value, field_type):
                raise ValueError(
                    f"Invalid type for setting {name!r}: expected {field_type}, got {type(value).__name__}."
                )
            if isinstance(value, str) and not isinstance(value, SecretString):
                with suppress(ValueError, TypeError):
                    if isinstance(coerced := _coerce(value, field_type), SecretString):
                        value = coerced
            result[name] = value
            continue
        text = from_file.get(variable)
        if text is None:
            text = os.environ.get(variable)
        if text is not None:
            try:
                result[name] = _coerce(text, field_type)
            except (ValueError, TypeError):
                result[name] = text
            continue
        result[name] = getattr(settings_type, name, None)
    for entry in required_fields or ():
        if isinstance(entry, str):
            if result.get(entry) is None:
                raise SettingNotFoundError(
                    f"Required setting {entry!r} was not provided. Set it via the {entry!r} parameter or the "
                    f"{env_prefix}{entry.upper()!s} environment variable."
                )
            continue
        found = [name for name in entry if result.get(name) is not None]
        names = ", ".join(repr(name) for name in entry)
        if not found:
            raise SettingNotFoundError(f"Exactly one of {names} must be provided, but none was set.")
        if len(found) > 1:
            raise SettingNotFoundError(
                f"Only one of {names} may be provided, but multiple were set: {', '.join(map(repr, found))}."
            )
    return result  # pyright: ignore[reportReturnType]  # a TypedDict is a dict at run time
