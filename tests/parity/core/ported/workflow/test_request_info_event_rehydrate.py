# Copyright (c) Microsoft. All rights reserved.

import json
from dataclasses import dataclass, field
from datetime import datetime, timezone

from agentnb import FileCheckpointStorage, InMemoryCheckpointStorage, InProcRunnerContext, WorkflowBuilder, WorkflowRunState
from agentnb import WorkflowEvent

from .test_request_info_and_response import CalculationRequest, UserApprovalRequest


@dataclass
class MockRequest: ...


@dataclass(kw_only=True)
class SimpleApproval:
    prompt: str = ""
    draft: str = ""
    iteration: int = 0


@dataclass(slots=True)
class SlottedApproval:
    note: str = ""


@dataclass
class TimedApproval:
    issued_at: datetime = field(default_factory=lambda: datetime.now(timezone.utc))














