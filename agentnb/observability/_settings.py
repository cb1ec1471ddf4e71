"""The reference's observability settings object: the switches as attributes, read from the environment.

One :class:`ObservabilitySettings` is the process's active one (``agentnb.observability.OBSERVABILITY_SETTINGS``);
its ``enable_instrumentation`` and ``enable_sensitive_data`` are what agentnb's spans obey, so writing them
switches instrumentation like :func:`~agentnb.observability.enable_instrumentation` does. Other instances are
plain records of what the environment (or their arguments) said.

Differences from the reference, on purpose: instrumentation is off unless switched on (the reference's is on
by default), and agentnb's ``AGENTNB_ENABLE_INSTRUMENTATION`` / ``AGENTNB_ENABLE_SENSITIVE_DATA`` are read when
the reference's names are unset.
"""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING, Any, TypedDict

from .. import _telemetry
from .._settings import load_settings
from ._span_store import DEFAULT, SpanStore

if TYPE_CHECKING:
    from opentelemetry.sdk.metrics.export import MetricReader
    from opentelemetry.sdk.metrics.view import View
    from opentelemetry.sdk.trace import SpanProcessor

    from ..store import Store

__all__ = ["GEN_AI_LATEST_EXPERIMENTAL_OPT_IN", "ObservabilitySettings", "activate_settings", "active_settings"]

logger = logging.getLogger("agentnb.observability")

# The token of ``OTEL_SEMCONV_STABILITY_OPT_IN`` that selects the GenAI conventions above v1.36.0.
GEN_AI_LATEST_EXPERIMENTAL_OPT_IN = "gen_ai_latest_experimental"


class _Fields(TypedDict, total=False):
    """The settings read through :func:`~agentnb.load_settings` (each from the upper-case variable)."""

    enable_instrumentation: bool | None
    enable_sensitive_data: bool | None
    enable_console_exporters: bool | None
    enable_message_events: bool | None
    otel_semconv_stability_opt_in: str | None
    vs_code_extension_port: int | None


_active: dict[str, ObservabilitySettings | None] = {"settings": None}


class ObservabilitySettings:
    """What to trace and where to export it, from keyword arguments, a ``.env`` file or the environment.

    Keyword Args:
        enable_instrumentation: Emit spans and metrics (``ENABLE_INSTRUMENTATION``; off when unset).
        enable_sensitive_data: Also record messages, tool arguments and results (``ENABLE_SENSITIVE_DATA``).
        enable_console_exporters: :func:`configure_otel_providers` adds console exporters
            (``ENABLE_CONSOLE_EXPORTERS``).
        enable_message_events: Emit the v1.36.0 GenAI message events with sensitive data
            (``ENABLE_MESSAGE_EVENTS``; on when unset).
        otel_semconv_stability_opt_in: The OpenTelemetry opt-in list (``OTEL_SEMCONV_STABILITY_OPT_IN``).
        vs_code_extension_port: Port of a local OTLP collector such as the AI Toolkit's
            (``VS_CODE_EXTENSION_PORT``).
        service_name, service_version, resource_attributes: Resource overrides for new providers.
        otlp_endpoint, otlp_protocol, otlp_headers, otlp_timeout, otlp_compression: OTLP overrides.
        env_file_path, env_file_encoding: A ``.env`` file read before the environment.

    Example:
        >>> ObservabilitySettings(enable_instrumentation=True).ENABLED
        True
    """

    def __init__(self, **kwargs: Any) -> None:
        """Resolve the switches now (keyword, then ``.env`` file, then environment)."""
        env_file_path: str | None = kwargs.pop("env_file_path", None)
        env_file_encoding: str | None = kwargs.pop("env_file_encoding", None)
        # Resource and OTLP overrides are plain values: OpenTelemetry's own variables (OTEL_*) are read where
        # they are used, so they must not get a second, generic variable here.
        self.service_name: str | None = kwargs.pop("service_name", None)
        self.service_version: str | None = kwargs.pop("service_version", None)
        self.resource_attributes: dict[str, Any] | None = kwargs.pop("resource_attributes", None)
        self.otlp_endpoint: str | None = kwargs.pop("otlp_endpoint", None)
        self.otlp_protocol: str | None = kwargs.pop("otlp_protocol", None)
        self.otlp_headers: dict[str, str] | None = kwargs.pop("otlp_headers", None)
        self.otlp_timeout: float | None = kwargs.pop("otlp_timeout", None)
        self.otlp_compression: str | None = kwargs.pop("otlp_compression", None)
        data = load_settings(_Fields, env_file_path=env_file_path, env_file_encoding=env_file_encoding, **kwargs)
        instrumentation = data.get("enable_instrumentation")
        sensitive = data.get("enable_sensitive_data")
        self._user_disabled = False
        self._enable_instrumentation = (
            _telemetry.env_switch("ENABLE_INSTRUMENTATION") if instrumentation is None else bool(instrumentation)
        )
        self._enable_sensitive_data = (
            _telemetry.env_switch("ENABLE_SENSITIVE_DATA") if sensitive is None else bool(sensitive)
        )
        if self._enable_sensitive_data and not self._enable_instrumentation:
            logger.warning(
                "Sensitive data capture is enabled but instrumentation is disabled, so no sensitive data is "
                "captured; enable instrumentation too."
            )
        self.enable_console_exporters: bool = bool(data.get("enable_console_exporters"))
        message_events = data.get("enable_message_events")
        self.enable_message_events: bool = True if message_events is None else bool(message_events)
        self.otel_semconv_stability_opt_in: str | None = data.get("otel_semconv_stability_opt_in")
        self.vs_code_extension_port: int | None = data.get("vs_code_extension_port")
        self.env_file_path = env_file_path
        self.env_file_encoding = env_file_encoding
        self._executed_setup = False

    def _push(self) -> None:
        """Hand the switches to agentnb's spans when this is the active settings object."""
        if _active["settings"] is self:
            _telemetry.set_switches(enabled=self.ENABLED, sensitive=self.SENSITIVE_DATA_ENABLED)

    @property
    def enable_instrumentation(self) -> bool:
        """Whether spans and metrics are emitted (always ``False`` after ``disable_instrumentation()``)."""
        return False if self._user_disabled else self._enable_instrumentation

    @enable_instrumentation.setter
    def enable_instrumentation(self, value: bool) -> None:
        if self._user_disabled and value:
            # The user's explicit opt-out wins over code that switches instrumentation on by itself.
            logger.debug("Ignoring enable_instrumentation=True: disable_instrumentation() was called.")
            return
        self._enable_instrumentation = value
        self._push()

    @property
    def enable_sensitive_data(self) -> bool:
        """Whether sensitive data is captured (always ``False`` after ``disable_instrumentation()``)."""
        return False if self._user_disabled else self._enable_sensitive_data

    @enable_sensitive_data.setter
    def enable_sensitive_data(self, value: bool) -> None:
        if self._user_disabled and value:
            logger.debug("Ignoring enable_sensitive_data=True: disable_instrumentation() was called.")
            return
        self._enable_sensitive_data = value
        self._push()

    @property
    def use_latest_experimental_gen_ai_semconv(self) -> bool:
        """Whether the GenAI conventions above v1.36.0 are selected (the default when the opt-in is unset)."""
        if self.otel_semconv_stability_opt_in is None:
            return True
        tokens = {token.strip() for token in self.otel_semconv_stability_opt_in.split(",")}
        return GEN_AI_LATEST_EXPERIMENTAL_OPT_IN in tokens

    @property
    def ENABLED(self) -> bool:
        """Whether instrumentation is on."""
        return self.enable_instrumentation

    @property
    def SENSITIVE_DATA_ENABLED(self) -> bool:
        """Whether instrumentation and sensitive-data capture are both on."""
        return self.enable_instrumentation and self.enable_sensitive_data

    @property
    def emit_tool_call_attributes(self) -> bool:
        """Whether tool spans carry ``gen_ai.tool.call.arguments`` / ``.result`` (sensitive, newer conventions)."""
        return self.SENSITIVE_DATA_ENABLED and self.use_latest_experimental_gen_ai_semconv

    @property
    def is_setup(self) -> bool:
        """Whether :func:`configure_otel_providers` has set providers up with these settings."""
        return self._executed_setup

    @property
    def is_user_disabled(self) -> bool:
        """Whether ``disable_instrumentation()`` was called and not overridden with ``force=True``."""
        return self._user_disabled

    def _disable(self) -> None:
        """Switch everything off and keep it off until a forced enable (``disable_instrumentation()``)."""
        self._user_disabled = True
        self._enable_instrumentation = False
        self._enable_sensitive_data = False
        self._push()

    def _clear_disable(self) -> None:
        self._user_disabled = False

    def _configure(
        self,
        *,
        additional_exporters: list[Any] | None = None,
        views: list[View] | None = None,
        processors: list[SpanProcessor] | None = None,
        metric_readers: list[MetricReader] | None = None,
        span_store: SpanStore | bool = True,
        store: Store | str | os.PathLike[str] | None = DEFAULT,
    ) -> SpanStore | None:
        """Build (or join) the SDK providers these settings describe (what ``configure_otel_providers`` runs)."""
        from ._setup import build_providers

        result = build_providers(
            self,
            additional_exporters=list(additional_exporters or ()),
            views=views,
            processors=list(processors or ()),
            metric_readers=list(metric_readers or ()),
            span_store=span_store,
            store=store,
        )
        self._executed_setup = True
        return result


def active_settings() -> ObservabilitySettings:
    """The settings agentnb's spans obey (created from the environment on first use)."""
    settings = _active["settings"]
    if settings is None:
        settings = activate_settings(ObservabilitySettings())
    return settings


def activate_settings(settings: ObservabilitySettings) -> ObservabilitySettings:
    """Make ``settings`` the ones agentnb's spans obey, and switch instrumentation as they say."""
    _active["settings"] = settings
    if isinstance(settings, ObservabilitySettings):  # pyright: ignore[reportUnnecessaryIsInstance]  # mocks
        settings._push()  # pyright: ignore[reportPrivateUsage]
    return settings
