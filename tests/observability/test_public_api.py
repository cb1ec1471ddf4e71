"""The public names of agentnb.observability and agentnb.store, and their docstring examples."""

from __future__ import annotations

import importlib

import pytest

import agentnb


@pytest.mark.parametrize("module_name", ["agentnb.observability", "agentnb.store"])
def test_all_is_sorted_and_resolvable(module_name: str) -> None:
    module = importlib.import_module(module_name)

    # Sorted the way ruff's RUF022 sorts: CONSTANTS, then Classes, then functions.
    def key(name: str) -> tuple[int, str]:
        return (0 if name.isupper() else 1 if name[0].isupper() else 2, name)

    assert list(module.__all__) == sorted(module.__all__, key=key)
    for name in module.__all__:
        assert getattr(module, name) is not None


def test_top_level_lazy_exports() -> None:
    from agentnb import observability

    for name in ("configure_otel_providers", "enable_instrumentation", "traces", "usage_summary"):
        assert getattr(agentnb, name) is getattr(observability, name)


def test_run_store_example_runs() -> None:
    from agentnb.store import RunStore

    store = RunStore(":memory:")
    store.start_run("run-1", kind="agent", name="helper", started_at=None)
    store.add_events("run-1", [{"type": "started", "data": {"input": "hi"}}])
    store.finish_run("run-1", status="completed", ended_at=None)
    run = store.get_run("run-1")
    assert run is not None and run["status"] == "completed" and len(store.list_events("run-1")) == 1
    store.close()


def test_span_store_example_runs() -> None:
    from opentelemetry.sdk.trace import TracerProvider

    from agentnb.observability import SpanStore

    spans = SpanStore(None)
    provider = TracerProvider(shutdown_on_exit=False)
    provider.add_span_processor(spans)  # pyright: ignore[reportArgumentType]
    with provider.get_tracer("demo").start_as_current_span("hello"):
        pass
    assert [s.name for s in spans.spans()] == ["hello"]
    spans.shutdown()
