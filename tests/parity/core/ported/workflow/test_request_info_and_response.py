# Copyright (c) Microsoft. All rights reserved.

from dataclasses import dataclass

from agentnb import WorkflowBuilder, WorkflowContext, WorkflowEvent, WorkflowRunState, handler, response_handler
from agentnb import Executor


@dataclass
class UserApprovalRequest:
    """A request for user approval with context."""

    prompt: str
    context: str
    request_id: str = ""

    def __post_init__(self):
        if not self.request_id:
            import uuid

            self.request_id = str(uuid.uuid4())


@dataclass
class CalculationRequest:
    """A request for a complex calculation."""

    operation: str
    operands: list[float]
    request_id: str = ""

    def __post_init__(self):
        if not self.request_id:
            import uuid

            self.request_id = str(uuid.uuid4())








class OutputCollector(Executor):
    """Simple executor that collects outputs for testing."""

    def __init__(self, id: str):
        super().__init__(id=id)
        self.collected_outputs: list[str] = []

    @handler
    async def collect_output(self, message: str, ctx: WorkflowContext) -> None:
        """Collect output messages."""
        self.collected_outputs.append(message)


class TestRequestInfoAndResponse:
    """Test cases for end-to-end request info and response handling at the workflow level."""






