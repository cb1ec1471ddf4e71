# Copyright (c) Microsoft. All rights reserved.

from dataclasses import dataclass
from typing import Any
from unittest.mock import patch

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from agentnb import Executor, InProcRunnerContext, WorkflowContext, WorkflowMessage, handler
from agentnb.workflows import Edge, FanInEdgeGroup, FanOutEdgeGroup, SingleEdgeGroup, SwitchCaseEdgeGroup, SwitchCaseEdgeGroupCase, SwitchCaseEdgeGroupDefault
from agentnb import create_edge_runner
from agentnb.observability import EdgeGroupDeliveryStatus


@dataclass
class MockMessage:
    """A mock message for testing purposes."""

    data: Any


@dataclass
class MockMessageSecondary:
    """A secondary mock message for testing purposes."""

    data: Any


class MockExecutor(Executor):
    """A mock executor for testing purposes."""

    def __init__(self, *, id: str) -> None:
        super().__init__(id=id)
        self.call_count: int = 0
        self.last_message: MockMessage | None = None

    @handler
    async def mock_handler(self, message: MockMessage, ctx: WorkflowContext) -> None:
        """A mock handler that does nothing."""
        self.call_count += 1
        self.last_message = message


class MockExecutorSecondary(Executor):
    """A secondary mock executor for testing purposes."""

    def __init__(self, *, id: str) -> None:
        super().__init__(id=id)
        self.call_count: int = 0
        self.last_message: MockMessageSecondary | None = None

    @handler
    async def mock_handler_secondary(self, message: MockMessageSecondary, ctx: WorkflowContext) -> None:
        """A secondary mock handler that does nothing."""
        self.call_count += 1
        self.last_message = message


class MockAggregator(Executor):
    """A mock aggregator for testing purposes."""

    def __init__(self, *, id: str) -> None:
        super().__init__(id=id)
        self.call_count: int = 0
        self.last_message: list[MockMessage] | list[MockMessageSecondary] | None = None

    @handler
    async def mock_aggregator_handler(self, message: list[MockMessage], ctx: WorkflowContext) -> None:
        """A mock aggregator handler that does nothing."""
        self.call_count += 1
        self.last_message = message

    @handler
    async def mock_aggregator_handler_secondary(
        self,
        message: list[MockMessageSecondary],
        ctx: WorkflowContext,
    ) -> None:
        """A mock aggregator handler that does nothing."""
        self.call_count += 1
        self.last_message = message


class MockAggregatorSecondary(Executor):
    """A mock aggregator that has a handler for a union type for testing purposes."""

    def __init__(self, *, id: str) -> None:
        super().__init__(id=id)
        self.call_count: int = 0
        self.last_message: list[MockMessage | MockMessageSecondary] | None = None

    @handler
    async def mock_aggregator_handler_combine(
        self,
        message: list[MockMessage | MockMessageSecondary],
        ctx: WorkflowContext,
    ) -> None:
        """A mock aggregator handler that does nothing."""
        self.call_count += 1
        self.last_message = message


# region Edge


def test_create_edge():
    """Test creating an edge with a source and target executor."""
    source = MockExecutor(id="source_executor")
    target = MockExecutor(id="target_executor")

    edge = Edge(source_id=source.id, target_id=target.id)

    assert edge.source_id == "source_executor"
    assert edge.target_id == "target_executor"
    assert edge.id == f"{edge.source_id}{Edge.ID_SEPARATOR}{edge.target_id}"


def test_edge_can_handle():
    """Test creating an edge with a source and target executor."""
    source = MockExecutor(id="source_executor")
    target = MockExecutor(id="target_executor")

    _ = Edge(source_id=source.id, target_id=target.id)


async def test_edge_should_route():
    """Test edge should_route with no condition."""
    source = MockExecutor(id="source_executor")
    target = MockExecutor(id="target_executor")

    edge = Edge(source_id=source.id, target_id=target.id)

    assert await edge.should_route(MockMessage(data="test"))


# endregion Edge

# region SingleEdgeGroup


def test_single_edge_group():
    """Test creating a single edge group."""
    source = MockExecutor(id="source_executor")
    target = MockExecutor(id="target_executor")

    edge_group = SingleEdgeGroup(source_id=source.id, target_id=target.id)

    assert edge_group.source_executor_ids == [source.id]
    assert edge_group.target_executor_ids == [target.id]
    assert edge_group.edges[0].source_id == "source_executor"
    assert edge_group.edges[0].target_id == "target_executor"
























# endregion SingleEdgeGroup


# region FanOutEdgeGroup


def test_source_edge_group():
    """Test creating a fan-out group."""
    source = MockExecutor(id="source_executor")
    target1 = MockExecutor(id="target_executor_1")
    target2 = MockExecutor(id="target_executor_2")

    edge_group = FanOutEdgeGroup(source_id=source.id, target_ids=[target1.id, target2.id])

    assert edge_group.source_executor_ids == [source.id]
    assert edge_group.target_executor_ids == [target1.id, target2.id]
    assert len(edge_group.edges) == 2
    assert edge_group.edges[0].source_id == "source_executor"
    assert edge_group.edges[0].target_id == "target_executor_1"
    assert edge_group.edges[1].source_id == "source_executor"
    assert edge_group.edges[1].target_id == "target_executor_2"


def test_source_edge_group_invalid_number_of_targets() -> None:
    """Test creating a fan-out group with an invalid number of targets."""
    source = MockExecutor(id="source_executor")
    target = MockExecutor(id="target_executor")

    with pytest.raises(ValueError, match="FanOutEdgeGroup must contain at least two targets"):
        FanOutEdgeGroup(source_id=source.id, target_ids=[target.id])












def test_source_edge_group_with_selection_func():
    """Test creating a partitioning edge group."""
    source = MockExecutor(id="source_executor")
    target1 = MockExecutor(id="target_executor_1")
    target2 = MockExecutor(id="target_executor_2")

    edge_group = FanOutEdgeGroup(
        source_id=source.id,
        target_ids=[target1.id, target2.id],
        selection_func=lambda data, target_ids: [target1.id],
    )

    assert edge_group.source_executor_ids == [source.id]
    assert edge_group.target_executor_ids == [target1.id, target2.id]
    assert len(edge_group.edges) == 2
    assert edge_group.edges[0].source_id == "source_executor"
    assert edge_group.edges[0].target_id == "target_executor_1"
    assert edge_group.edges[1].source_id == "source_executor"
    assert edge_group.edges[1].target_id == "target_executor_2"


















# endregion FanOutEdgeGroup

# region FanInEdgeGroup


def test_target_edge_group():
    """Test creating a fan-in edge group."""
    source1 = MockExecutor(id="source_executor_1")
    source2 = MockExecutor(id="source_executor_2")
    target = MockAggregator(id="target_executor")

    edge_group = FanInEdgeGroup(source_ids=[source1.id, source2.id], target_id=target.id)

    assert edge_group.source_executor_ids == [source1.id, source2.id]
    assert edge_group.target_executor_ids == [target.id]
    assert len(edge_group.edges) == 2
    assert edge_group.edges[0].source_id == "source_executor_1"
    assert edge_group.edges[0].target_id == "target_executor"
    assert edge_group.edges[1].source_id == "source_executor_2"
    assert edge_group.edges[1].target_id == "target_executor"


def test_target_edge_group_invalid_number_of_sources():
    """Test creating a fan-in edge group with an invalid number of sources."""
    source = MockExecutor(id="source_executor")
    target = MockAggregator(id="target_executor")

    with pytest.raises(ValueError, match="FanInEdgeGroup must contain at least two sources"):
        FanInEdgeGroup(source_ids=[source.id], target_id=target.id)
















# endregion FanInEdgeGroup

# region SwitchCaseEdgeGroup




def test_switch_case_edge_group_invalid_number_of_cases():
    """Test creating a switch case edge group with an invalid number of cases."""
    source = MockExecutor(id="source_executor")
    target = MockExecutor(id="target_executor")

    with pytest.raises(
        ValueError, match=r"SwitchCaseEdgeGroup must contain at least two cases \(including the default case\)."
    ):
        SwitchCaseEdgeGroup(
            source_id=source.id,
            cases=[
                SwitchCaseEdgeGroupCase(condition=lambda x: x.data < 0, target_id=target.id),
            ],
        )

    with pytest.raises(ValueError, match="SwitchCaseEdgeGroup must contain exactly one default case."):
        SwitchCaseEdgeGroup(
            source_id=source.id,
            cases=[
                SwitchCaseEdgeGroupCase(condition=lambda x: x.data < 0, target_id=target.id),
                SwitchCaseEdgeGroupCase(condition=lambda x: x.data >= 0, target_id=target.id),
            ],
        )


def test_switch_case_edge_group_invalid_number_of_default_cases():
    """Test creating a switch case edge group with an invalid number of conditions."""
    source = MockExecutor(id="source_executor")
    target1 = MockExecutor(id="target_executor_1")
    target2 = MockExecutor(id="target_executor_2")

    with pytest.raises(ValueError, match="SwitchCaseEdgeGroup must contain exactly one default case."):
        SwitchCaseEdgeGroup(
            source_id=source.id,
            cases=[
                SwitchCaseEdgeGroupCase(condition=lambda x: x.data < 0, target_id=target1.id),
                SwitchCaseEdgeGroupDefault(target_id=target2.id),
                SwitchCaseEdgeGroupDefault(target_id=target2.id),
            ],
        )










# endregion SwitchCaseEdgeGroup
