"""An agent's ``input.externalLoop``: the run pauses after each answer while ``when`` holds, and the reply goes
back to the agent. The workflow is the reference's function_tools sample's YAML, unchanged."""

from __future__ import annotations

from typing import Any

import pytest

from agentnb import Agent
from agentnb.declarative import DeclarativeWorkflowError, ExternalInputRequest, ExternalInputResponse, WorkflowFactory
from agentnb.local import FunctionChatClient
from agentnb.workflows import InMemoryCheckpointStorage

MENU_LOOP = """\
kind: Workflow
trigger:

  kind: OnConversationStart
  id: workflow_demo
  actions:

    - kind: InvokeAzureAgent
      id: invoke_menu_agent
      agent:
        name: MenuAgent
      input:
        externalLoop:
          when: =Upper(System.LastMessage.Text) <> "EXIT"
"""


def _menu_agent(seen: list[list[str]]) -> Agent:
    def model(messages: list[Any], options: dict[str, Any]) -> str:
        seen.append([m.text for m in messages])
        return f"Answer {len(seen)} to: {messages[-1].text}"

    return Agent(FunctionChatClient(model), name="MenuAgent")


async def test_the_loop_asks_after_each_answer_until_the_user_says_exit() -> None:
    seen: list[list[str]] = []
    storage = InMemoryCheckpointStorage()
    factory = WorkflowFactory(checkpoint_storage=storage)
    factory.register_agent("MenuAgent", _menu_agent(seen))
    workflow = factory.create_workflow_from_yaml(MENU_LOOP)

    result = await workflow.run({"userInput": "What is the soup of the day?"})
    assert result.get_outputs() == ["Answer 1 to: What is the soup of the day?"]
    (asked,) = result.get_request_info_events()
    assert isinstance(asked.data, ExternalInputRequest)
    assert asked.data.request_type == "agent_external_input"
    assert asked.data.message == "Answer 1 to: What is the soup of the day?"
    assert asked.data.metadata["agent"] == "MenuAgent"

    # The sample answers with ExternalInputResponse; the agent sees the whole conversation.
    result = await workflow.run(responses={asked.request_id: ExternalInputResponse(user_input="How much is it?")})
    assert result.get_outputs() == ["Answer 2 to: How much is it?"]
    assert seen[1] == ["What is the soup of the day?", "Answer 1 to: What is the soup of the day?", "How much is it?"]
    (again,) = result.get_request_info_events()
    assert again.data.metadata["iteration"] == 2

    # A workflow rebuilt from the same YAML resumes from the checkpoint; "exit" ends it without the agent.
    checkpoint = (await storage.list_checkpoints(workflow_name=workflow.name))[-1]
    rebuilt = WorkflowFactory(checkpoint_storage=storage, agents={"MenuAgent": _menu_agent(seen)})
    resumed = rebuilt.create_workflow_from_yaml(MENU_LOOP)
    result = await resumed.run(checkpoint_id=checkpoint.checkpoint_id, responses={again.request_id: "exit"})
    assert result.get_outputs() == []
    assert result.get_request_info_events() == []
    assert len(seen) == 2


async def test_max_iterations_bounds_the_loop() -> None:
    seen: list[list[str]] = []
    workflow = WorkflowFactory(agents={"MenuAgent": _menu_agent(seen)}).create_workflow_from_yaml(
        """\
name: bounded
actions:
  - kind: InvokeAzureAgent
    agent: {name: MenuAgent}
    input:
      externalLoop:
        when: =true
        maxIterations: 2
  - kind: SendActivity
    activity: {text: done}
"""
    )
    result = await workflow.run("hi")
    (asked,) = result.get_request_info_events()
    result = await workflow.run(responses={asked.request_id: "more"})
    assert result.get_outputs() == ["Answer 2 to: more", "done"]
    assert result.get_request_info_events() == []


def test_an_external_loop_without_when_names_the_line() -> None:
    with pytest.raises(DeclarativeWorkflowError, match=r"line 6: externalLoop needs a when"):
        WorkflowFactory(agents={"A": object()}).create_workflow_from_yaml(
            "name: x\nactions:\n  - kind: InvokeAzureAgent\n    agent: {name: A}\n    input:\n      externalLoop: {}\n"
        )
