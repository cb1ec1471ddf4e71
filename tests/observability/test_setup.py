"""configure_otel_providers / enable_instrumentation in fresh processes: providers, idempotence, metrics, OTLP.

Each test runs a small script in its own interpreter, because OpenTelemetry's global providers can be set
only once per process.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

REPO = Path(__file__).resolve().parents[2]

AGENT_RUN = """
import asyncio
from agentnb import Agent, tool
from agentnb.local import ToolCallingChatClient

@tool
def weather(city: str) -> str:
    \"\"\"Weather.\"\"\"
    return f"Sunny in {city}"

def run_agent(name="helper"):
    agent = Agent(ToolCallingChatClient(), name=name, tools=[weather])
    return asyncio.run(agent.run("Weather in Paris?"))
"""


def _run(script: str, tmp_path: Path, *, argv: list[str] | None = None, **env: str) -> dict[str, Any]:
    environ = {**os.environ, "AGENTNB_HOME": str(tmp_path / "home"), **env}
    for key in ("OTEL_EXPORTER_OTLP_ENDPOINT", "AGENTNB_ENABLE_INSTRUMENTATION", "AGENTNB_ENABLE_SENSITIVE_DATA"):
        if key not in env:
            environ.pop(key, None)
    proc = subprocess.run(
        [sys.executable, "-W", "error", "-c", AGENT_RUN + textwrap.dedent(script), *(argv or [])],
        cwd=REPO,
        env=environ,
        capture_output=True,
        text=True,
        timeout=90,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_configure_creates_sdk_providers_once_and_records_metrics(tmp_path: Path) -> None:
    out = _run(
        """
        import json
        from opentelemetry import metrics, trace
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.metrics.export import InMemoryMetricReader
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        import agentnb
        from agentnb.observability import configure_otel_providers, get_span_store

        exporter, reader = InMemorySpanExporter(), InMemoryMetricReader()
        processor = SimpleSpanProcessor(exporter)
        first = configure_otel_providers(processors=[processor], metric_readers=[reader])
        provider = trace.get_tracer_provider()
        second = configure_otel_providers(processors=[processor])  # twice: nothing is added twice
        run_agent()
        names = [s.name for s in exporter.get_finished_spans()]
        points = {}
        for rm in reader.get_metrics_data().resource_metrics:
            for sm in rm.scope_metrics:
                for metric in sm.metrics:
                    for p in metric.data.data_points:
                        points.setdefault(metric.name, []).append({"attrs": dict(p.attributes), "count": p.count,
                                                                   "sum": p.sum, "unit": metric.unit})
        df = agentnb.traces()
        print(json.dumps({
            "same_store": first is second and first is get_span_store(),
            "sdk": isinstance(provider, TracerProvider) and provider is trace.get_tracer_provider(),
            "meter_sdk": isinstance(metrics.get_meter_provider(), MeterProvider),
            "names": names,
            "points": points,
            "store_path": str(first.store_path),
            "frame": df["name"].tolist(),
            "resource": df.shape[0] and get_span_store().rows()[0]["resource"].get("service.name"),
        }))
        """,
        tmp_path,
    )
    assert out["same_store"] and out["sdk"] and out["meter_sdk"]
    assert sorted(out["names"]) == sorted(
        ["chat tool-calling-test-model", "execute_tool weather", "chat tool-calling-test-model", "invoke_agent helper"]
    )
    # The span store writes to the default run store under AGENTNB_HOME, and traces() reads it back.
    assert out["store_path"] == str((tmp_path / "home" / "agentnb.db").resolve())
    assert sorted(out["frame"]) == sorted(out["names"])
    assert out["resource"] == "agentnb"

    durations = out["points"]["gen_ai.client.operation.duration"]
    assert {p["unit"] for p in durations} == {"s"}
    by_op = {p["attrs"]["gen_ai.operation.name"]: p for p in durations}
    assert set(by_op) == {"invoke_agent", "chat", "execute_tool"}
    assert by_op["chat"]["count"] == 2
    assert by_op["chat"]["attrs"]["gen_ai.request.model"] == "tool-calling-test-model"
    assert by_op["chat"]["attrs"]["gen_ai.agent.name"] == "helper"
    assert by_op["execute_tool"]["attrs"]["gen_ai.tool.name"] == "weather"
    tokens = {p["attrs"]["gen_ai.token.type"]: p for p in out["points"]["gen_ai.client.token.usage"]}
    assert set(tokens) == {"input", "output"}
    assert tokens["input"]["count"] == 2 and tokens["input"]["sum"] > 0
    assert all(p["attrs"]["gen_ai.operation.name"] == "chat" for p in tokens.values())


def test_enable_instrumentation_joins_the_users_provider(tmp_path: Path) -> None:
    out = _run(
        """
        import json
        from opentelemetry import metrics, trace
        from opentelemetry.sdk.metrics import MeterProvider
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        from agentnb.observability import configure_otel_providers, enable_instrumentation, traces

        mine = TracerProvider()
        exporter = InMemorySpanExporter()
        mine.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(mine)
        first = enable_instrumentation(store=None)
        second = enable_instrumentation(store=None)
        third = configure_otel_providers(store=None)  # also joins rather than replacing
        run_agent()
        print(json.dumps({
            "kept": trace.get_tracer_provider() is mine,
            "same": first is second is third,
            "exported": len(exporter.get_finished_spans()),
            "buffered": len(first),
            "frame": len(traces()),
            "no_meter": not isinstance(metrics.get_meter_provider(), MeterProvider),
        }))
        """,
        tmp_path,
    )
    # No metric readers were given: no meter provider, so measurements cost nothing.
    assert out == {"kept": True, "same": True, "exported": 4, "buffered": 4, "frame": 4, "no_meter": True}
    assert not (tmp_path / "home").exists()  # store=None: nothing on disk


def test_each_destination_gets_one_span_store(tmp_path: Path) -> None:
    out = _run(
        """
        import json, sys
        from agentnb.observability import configure_otel_providers, enable_instrumentation, get_span_store, traces

        memory = configure_otel_providers(store=None)
        on_disk = configure_otel_providers(store=sys.argv[1])
        again = enable_instrumentation(store=sys.argv[1])
        run_agent()
        print(json.dumps({
            "distinct": memory is not on_disk, "reused": again is on_disk, "active": get_span_store() is on_disk,
            "memory": len(memory), "disk_frame": len(traces()), "path": str(on_disk.store_path),
        }))
        """,
        tmp_path,
        argv=[str(tmp_path / "spans.db")],
    )
    assert out["distinct"] and out["reused"] and out["active"]
    assert out["memory"] == 4 and out["disk_frame"] == 4
    assert out["path"] == str((tmp_path / "spans.db").resolve())


def test_enabled_without_a_provider_skips_spans_until_one_is_set(tmp_path: Path) -> None:
    out = _run(
        """
        import json
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        from agentnb import _telemetry
        from agentnb.observability import enable_instrumentation, is_instrumentation_enabled

        result = enable_instrumentation()
        before = {"span": _telemetry.start_span("probe") is None, "recording": _telemetry.recording()}
        run_agent()  # nothing to record to: no spans are made at all
        exporter = InMemorySpanExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        trace.set_tracer_provider(provider)
        run_agent()  # the provider set later is picked up
        print(json.dumps({"store": result is None, "enabled": is_instrumentation_enabled(), "before": before,
                          "after": sorted({s.name.split()[0] for s in exporter.get_finished_spans()})}))
        """,
        tmp_path,
    )
    assert out == {
        "store": True,
        "enabled": True,
        "before": {"span": True, "recording": False},
        "after": ["chat", "execute_tool", "invoke_agent"],
    }


def test_a_foreign_provider_type_is_a_clear_error(tmp_path: Path) -> None:
    out = _run(
        """
        import json
        from opentelemetry import trace
        from opentelemetry.trace import NoOpTracerProvider
        from agentnb.observability import configure_otel_providers

        trace.set_tracer_provider(NoOpTracerProvider())
        try:
            configure_otel_providers(store=None)
        except RuntimeError as e:
            print(json.dumps({"error": str(e)}))
        """,
        tmp_path,
    )
    assert "NoOpTracerProvider is already set" in out["error"]


def test_environment_switch_turns_instrumentation_on(tmp_path: Path) -> None:
    out = _run(
        """
        import json
        from agentnb import _telemetry
        from agentnb.observability import is_instrumentation_enabled
        from agentnb.observability import enable_instrumentation

        first = [is_instrumentation_enabled(), _telemetry.sensitive_data_enabled()]
        enable_instrumentation()  # None: the environment decides
        second = _telemetry.sensitive_data_enabled()
        enable_instrumentation(enable_sensitive_data=False)  # an explicit answer wins
        print(json.dumps({"at_import": first, "env_default": second, "explicit": _telemetry.sensitive_data_enabled()}))
        """,
        tmp_path,
        AGENTNB_ENABLE_INSTRUMENTATION="true",
        AGENTNB_ENABLE_SENSITIVE_DATA="1",
    )
    assert out == {"at_import": [True, True], "env_default": True, "explicit": False}


def test_import_stays_light(tmp_path: Path) -> None:
    out = _run(
        """
        import json, sys
        import agentnb, agentnb.observability, agentnb.store
        heavy = [m for m in ("pandas", "numpy", "opentelemetry.sdk", "opentelemetry.sdk.trace") if m in sys.modules]
        print(json.dumps({"heavy": heavy, "lazy": callable(agentnb.traces) and callable(agentnb.usage_summary)}))
        """,
        tmp_path,
    )
    assert out == {"heavy": [], "lazy": True}


class _Collector(BaseHTTPRequestHandler):
    received: ClassVar[list[tuple[str, bytes]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
        self.received.append((self.path, body))
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        return None


@pytest.fixture
def collector() -> Iterator[tuple[str, list[tuple[str, bytes]]]]:
    received: ClassVar[list[tuple[str, bytes]]] = []
    handler = type("Handler", (_Collector,), {"received": received})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", received
    server.shutdown()
    server.server_close()
    thread.join()


def test_otlp_export_when_the_endpoint_is_set(tmp_path: Path, collector: tuple[str, list[tuple[str, bytes]]]) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    endpoint, received = collector
    out = _run(
        """
        import json
        from opentelemetry import metrics, trace
        from agentnb.observability import configure_otel_providers

        configure_otel_providers(store=None)
        run_agent()
        trace.get_tracer_provider().shutdown()
        metrics.get_meter_provider().shutdown()
        print(json.dumps({"ok": True}))
        """,
        tmp_path,
        OTEL_EXPORTER_OTLP_ENDPOINT=endpoint,
    )
    assert out == {"ok": True}
    paths = {path for path, _ in received}
    assert "/v1/traces" in paths and "/v1/metrics" in paths
    names = []
    for path, body in received:
        if path == "/v1/traces":
            request = ExportTraceServiceRequest.FromString(body)
            names += [s.name for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]
    assert "invoke_agent helper" in names and "execute_tool weather" in names


def test_missing_otlp_package_warns_with_the_install_hint(tmp_path: Path) -> None:
    out = _run(
        """
        import json, sys, warnings
        # Simulate an install without the optional exporter package.
        sys.modules["opentelemetry.exporter.otlp.proto.http.trace_exporter"] = None
        sys.modules["opentelemetry.exporter.otlp.proto.http.metric_exporter"] = None
        from agentnb.observability import configure_otel_providers

        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            spans = configure_otel_providers(store=None)
        run_agent()
        print(json.dumps({"warnings": [str(w.message) for w in caught], "spans": len(spans),
                          "where": sorted({w.filename for w in caught})}))
        """,
        tmp_path,
        OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9",
    )
    assert len(out["warnings"]) == 2
    assert all('pip install "agentnb[otlp]"' in w for w in out["warnings"])
    assert "traces" in out["warnings"][0] and "metrics" in out["warnings"][1]
    assert out["spans"] == 4  # local tracing works regardless
    assert out["where"] == ["<string>"]  # the warnings point at the caller's line, not at agentnb
