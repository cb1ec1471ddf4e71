"""A workflow file's own ``agents:``: inline ``kind: Prompt`` definitions and ``file:`` references beside it."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentnb import Agent
from agentnb.declarative import AgentFactory, DeclarativeWorkflowError, WorkflowFactory
from agentnb.local import ScriptedChatClient

WORKFLOW = """\
kind: Workflow
agents:
  Greeter:
    kind: Prompt
    name: Greeter
    instructions: Greet.
  Closer:
    file: closer.yaml
trigger:
  actions:
    - kind: InvokeAzureAgent
      agent: {name: Greeter}
    - kind: InvokeAzureAgent
      agent: {name: Closer}
"""


async def test_inline_and_file_agents_are_built_and_invoked(tmp_path: Path) -> None:
    (tmp_path / "closer.yaml").write_text("kind: Prompt\nname: Closer\ninstructions: Close.\n")
    (tmp_path / "workflow.yaml").write_text(WORKFLOW)
    factory = WorkflowFactory(agent_factory=AgentFactory(client=ScriptedChatClient(["Hello!", "Goodbye!"])))
    workflow = factory.create_workflow_from_yaml_path(tmp_path / "workflow.yaml")
    assert (await workflow.run("hi")).get_outputs() == ["Hello!", "Goodbye!"]


async def test_agents_passed_in_win_over_the_files_own(tmp_path: Path) -> None:
    (tmp_path / "closer.yaml").write_text("kind: Prompt\nname: Closer\ninstructions: Close.\n")
    given = Agent(ScriptedChatClient(["from the caller"]), name="Greeter")
    factory = WorkflowFactory(
        agents={"Greeter": given}, agent_factory=AgentFactory(client=ScriptedChatClient(["from the file"]))
    )
    workflow = factory.create_workflow_from_yaml(WORKFLOW, base_path=tmp_path)
    assert (await workflow.run("hi")).get_outputs() == ["from the caller", "from the file"]


@pytest.mark.parametrize(
    ("agents", "message"),
    [
        ("  Closer:\n    file: ../outside.yaml\n", r"line 3: agent 'Closer': .*outside the workflow's folder"),
        ("  Closer:\n    connection: {kind: remote}\n", r"line 3: agent 'Closer': expected an inline definition"),
        ("  Closer:\n    kind: Prompt\n    nme: typo\n", r"agent 'Closer': .*nme"),
    ],
)
def test_bad_agent_definitions_name_the_line(tmp_path: Path, agents: str, message: str) -> None:
    text = f"name: w\nagents:\n{agents}actions:\n  - kind: InvokeAzureAgent\n    agent: {{name: Closer}}\n"
    with pytest.raises(DeclarativeWorkflowError, match=message):
        WorkflowFactory().create_workflow_from_yaml(text, base_path=tmp_path)
