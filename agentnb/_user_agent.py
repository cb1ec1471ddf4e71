"""The ``User-Agent`` names of the reference, with agentnb's values, for code that builds its own HTTP headers.

agentnb's clients send their SDK's own user agent; these let code written for the reference (which adds its
framework to custom clients' headers) keep doing so. Setting ``AGENTNB_USER_AGENT_DISABLED=true`` leaves
headers as they are.
"""

from __future__ import annotations

import os
from typing import Any, Final

from . import __version__

__all__ = [
    "AGENT_FRAMEWORK_USER_AGENT",
    "APP_INFO",
    "USER_AGENT_KEY",
    "USER_AGENT_TELEMETRY_DISABLED_ENV_VAR",
    "prepend_agent_framework_to_user_agent",
]

USER_AGENT_TELEMETRY_DISABLED_ENV_VAR: Final[str] = "AGENTNB_USER_AGENT_DISABLED"
"""Set to ``true`` or ``1`` to keep agentnb out of ``User-Agent`` headers."""
USER_AGENT_KEY: Final[str] = "User-Agent"
AGENT_FRAMEWORK_USER_AGENT: Final[str] = f"agentnb-python/{__version__}"
"""agentnb's product token, as the reference names its own."""


def _enabled() -> bool:
    return os.environ.get(USER_AGENT_TELEMETRY_DISABLED_ENV_VAR, "false").strip().lower() not in ("true", "1")


APP_INFO: dict[str, str] | None = {"agentnb-version": f"python/{__version__}"} if _enabled() else None
"""Application info for SDKs that take it (``None`` when the user agent is disabled at import)."""


def prepend_agent_framework_to_user_agent(headers: dict[str, Any] | None = None) -> dict[str, Any]:
    """``headers`` with agentnb's token put first in ``User-Agent`` (a new dict when ``headers`` is None).

    Example:
        >>> prepend_agent_framework_to_user_agent({"User-Agent": "my-app/1.0"})["User-Agent"].split()[1]
        'my-app/1.0'
    """
    if not _enabled():
        return headers if headers is not None else {}
    if not headers:
        return {USER_AGENT_KEY: AGENT_FRAMEWORK_USER_AGENT}
    current = headers.get(USER_AGENT_KEY)
    headers[USER_AGENT_KEY] = f"{AGENT_FRAMEWORK_USER_AGENT} {current}" if current else AGENT_FRAMEWORK_USER_AGENT
    return headers
