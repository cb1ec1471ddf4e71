"""The per-test view of recorded spans (imported by conftest and the tests)."""

from __future__ import annotations

from dataclasses import dataclass

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentnb.observability import SpanStore


@dataclass
class Otel:
    """What a test sees: finished spans (from the in-memory exporter when there is one, else from the
    span store) and a memory-only span store."""

    exporter: InMemorySpanExporter | None
    span_store: SpanStore

    def spans(self) -> list[ReadableSpan]:
        if self.exporter is None:
            return self.span_store.spans()
        return list(self.exporter.get_finished_spans())

    def by_name(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.spans() if s.name == name]

    def one(self, name: str) -> ReadableSpan:
        found = self.by_name(name)
        assert len(found) == 1, [s.name for s in self.spans()]
        return found[0]
