"""Fixtures for the approval tests: counting tools, and each test run both streaming and not."""

from __future__ import annotations

from typing import Any

import pytest

from agentnb import AgentResponse, ResponseStream
from tests.approval.approval_helpers import Run, Tools


@pytest.fixture
def tools() -> Tools:
    return Tools()


@pytest.fixture(params=[False, True], ids=["run", "stream"])
def stream(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


@pytest.fixture
def run(stream: bool) -> Run:
    """``await run(agent, messages, session=...)`` -> (updates, final response), streaming or not."""

    async def run_agent(agent: Any, messages: Any = None, **kwargs: Any) -> tuple[list[Any], AgentResponse]:
        if stream:
            result = agent.run(messages, stream=True, **kwargs)
            assert isinstance(result, ResponseStream)
            updates = [u async for u in result]
            return updates, await result.get_final_response()
        return [], await agent.run(messages, **kwargs)

    return run_agent
