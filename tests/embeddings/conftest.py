"""The span fixtures of the observability tests, shared rather than written again."""

from tests.observability.conftest import _provider, otel  # pyright: ignore[reportPrivateUsage]

__all__ = ["_provider", "otel"]
