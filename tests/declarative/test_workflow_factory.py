"""WorkflowFactory: the reference's declarative workflow YAML becomes an ordinary agentnb workflow."""

from __future__ import annotations

from typing import Any

import pytest

from agentnb import Agent
from agentnb.declarative import (
    DeclarativeActionError,
    DeclarativeWorkflowError,
    ExternalInputRequest,
    HttpRequestInfo,
    HttpRequestResult,
    MCPToolInvocation,
    MCPToolResult,
    WorkflowFactory,
)
from agentnb.exceptions import WorkflowRunError
from agentnb.local import FunctionChatClient, ScriptedChatClient
from agentnb.workflows import InMemoryCheckpointStorage, Workflow

GREETING = """\
name: simple-greeting-workflow
description: A simple workflow that greets the user
actions:
  - kind: SetValue
    id: set_greeting
    path: Local.greeting
    value: Hello
  - kind: SetValue
    id: set_name
    path: Local.name
    value: =If(IsBlank(inputs.name), "World", inputs.name)
  - kind: SetValue
    id: build_message
    path: Local.message
    value: =Concat(Local.greeting, ", ", Local.name, "!")
  - kind: SendActivity
    id: send_greeting
    activity:
      text: =Local.message
  - kind: SetValue
    id: set_output
    path: Workflow.Outputs.greeting
    value: =Local.message
"""

AGES = """\
name: conditional-workflow
actions:
  - kind: SetValue
    path: Local.age
    value: =inputs.age
  - kind: If
    id: check_age
    condition: =Local.age < 13
    then:
      - kind: SetValue
        path: Local.category
        value: child
    else:
      - kind: ConditionGroup
        conditions:
          - condition: =Local.age < 20
            actions:
              - kind: SetValue
                path: Local.category
                value: teenager
          - condition: =Local.age < 65
            actions:
              - kind: SetValue
                path: Local.category
                value: adult
        elseActions:
          - kind: SetValue
            path: Local.category
            value: senior
  - kind: SendActivity
    activity:
      text: '=Concat("You have been categorized as: ", Local.category)'
"""

SURVEY = """\
name: human-in-loop-workflow
actions:
  - kind: Question
    id: ask_name
    question:
      text: "What is your name?"
    variable: Local.userName
    default: "Demo User"
  - kind: RequestExternalInput
    id: ask_feedback
    prompt:
      text: =Concat("Any feedback, ", Local.userName, "?")
    variable: Local.feedback
  - kind: SendActivity
    id: summary
    activity:
      text: '=Concat("Thank you, ", Local.userName, "! Your feedback: ", Local.feedback)'
"""

TUTORING = """\
kind: Workflow
trigger:
  kind: OnConversationStart
  id: student_teacher_workflow
  actions:
    - kind: SetVariable
      id: init_counter
      variable: Local.TurnCount
      value: =0
    - kind: InvokeAzureAgent
      id: question_student
      conversationId: =System.ConversationId
      agent:
        name: StudentAgent
    - kind: InvokeAzureAgent
      id: question_teacher
      agent:
        name: TeacherAgent
      output:
        messages: Local.TeacherResponse
    - kind: SetVariable
      id: increment_counter
      variable: Local.TurnCount
      value: =Local.TurnCount + 1
    - kind: ConditionGroup
      id: check_completion
      conditions:
        - condition: =!IsBlank(Find("CONGRATULATIONS", Upper(MessageText(Local.TeacherResponse))))
          actions:
            - kind: SetVariable
              variable: workflow.outputs.result
              value: success
            - kind: SendActivity
              activity:
                text: GOLD STAR
      elseActions:
        - kind: ConditionGroup
          id: check_turn_limit
          conditions:
            - condition: =Local.TurnCount < 4
              actions:
                - kind: GotoAction
                  id: continue_loop
                  actionId: question_student
          elseActions:
            - kind: SendActivity
              activity:
                text: Out of turns.
"""


async def test_simple_workflow_greets_with_and_without_a_name() -> None:
    workflow = WorkflowFactory().create_workflow_from_yaml(GREETING)
    assert isinstance(workflow, Workflow)
    assert workflow.name == "simple-greeting-workflow"
    assert {"set_greeting", "set_name", "build_message", "send_greeting", "set_output"} <= set(workflow.executors)
    assert (await workflow.run({})).get_outputs() == ["Hello, World!"]
    assert (await workflow.run({"name": "Alice"})).get_outputs() == ["Hello, Alice!"]


@pytest.mark.parametrize(("age", "category"), [(10, "child"), (15, "teenager"), (30, "adult"), (70, "senior")])
async def test_conditions_choose_one_branch(age: int, category: str) -> None:
    workflow = WorkflowFactory().create_workflow_from_yaml(AGES)
    outputs = (await workflow.run({"age": age})).get_outputs()
    assert outputs == [f"You have been categorized as: {category}"]


async def test_questions_pause_and_resume_from_a_checkpoint_in_a_new_workflow() -> None:
    storage = InMemoryCheckpointStorage()
    first = WorkflowFactory(checkpoint_storage=storage).create_workflow_from_yaml(SURVEY)
    result = await first.run({})
    (asked,) = result.get_request_info_events()
    assert isinstance(asked.data, ExternalInputRequest)
    assert asked.data.message == "What is your name?"
    assert asked.data.metadata["output_property"] == "Local.userName"
    checkpoint = (await storage.list_checkpoints(workflow_name=first.name))[-1]

    # Another workflow object from the same YAML (as after a kernel restart) resumes from the checkpoint.
    again = WorkflowFactory(checkpoint_storage=storage).create_workflow_from_yaml(SURVEY)
    result = await again.run(checkpoint_id=checkpoint.checkpoint_id, responses={asked.request_id: "Ada"})
    (feedback,) = result.get_request_info_events()
    assert feedback.data.message == "Any feedback, Ada?"
    result = await again.run(responses={feedback.request_id: "Lovely."})
    assert result.get_outputs() == ["Thank you, Ada! Your feedback: Lovely."]


async def test_agents_loop_with_goto_until_the_teacher_is_happy() -> None:
    student = Agent(ScriptedChatClient(["2 + 2 = 5", "2 + 2 = 4"]), name="StudentAgent")
    seen: list[list[str]] = []

    def teacher_model(messages: list[Any], options: dict[str, Any]) -> str:
        seen.append([m.text for m in messages])
        return "Congratulations, correct!" if "2 + 2 = 4" in messages[-1].text else "Try again."

    teacher = Agent(FunctionChatClient(teacher_model), name="TeacherAgent")
    workflow = WorkflowFactory(agents={"StudentAgent": student, "TeacherAgent": teacher}).create_workflow_from_yaml(
        TUTORING
    )
    outputs = (await workflow.run("What is 2 + 2?")).get_outputs()
    assert outputs == ["2 + 2 = 5", "Try again.", "2 + 2 = 4", "Congratulations, correct!", "GOLD STAR"]
    # The teacher saw the whole conversation so far, the user's question first.
    assert seen[1][:4] == ["What is 2 + 2?", "2 + 2 = 5", "Try again.", "2 + 2 = 4"]


async def test_tools_http_and_mcp_go_through_the_callers_handlers() -> None:
    sent: list[Any] = []

    def get_weather(location: str, unit: str) -> dict[str, Any]:
        return {"location": location, "temp": 21, "unit": unit}

    async def http(request: HttpRequestInfo) -> HttpRequestResult:
        sent.append(request)
        return HttpRequestResult(status_code=200, body={"stars": 42})

    def mcp(invocation: MCPToolInvocation) -> MCPToolResult:
        sent.append(invocation)
        return MCPToolResult(content="docs about " + str(invocation.arguments["query"]))

    factory = WorkflowFactory(
        bindings={"get_weather": get_weather},
        http_request_handler=http,
        mcp_tool_handler=mcp,
        configuration={"API_HOST": "https://api.example.test"},
    )
    workflow = factory.create_workflow_from_yaml(
        """\
name: outside
actions:
  - kind: InvokeFunctionTool
    functionName: get_weather
    arguments:
      location: =inputs.city
      unit: F
    output:
      result: Local.weather
  - kind: HttpRequestAction
    method: get
    url: =Concatenate(Env.API_HOST, "/repos/", inputs.repo)
    headers:
      Accept: application/json
    response: Local.repo
  - kind: InvokeMcpTool
    serverUrl: https://mcp.example.test/mcp
    toolName: search
    arguments:
      query: =Local.weather.location
    output:
      result: Local.docs
  - kind: SendActivity
    activity:
      text: =Concat(Text(Local.weather.temp), Local.weather.unit, " / ", Text(Local.repo.stars), " / ", Local.docs)
"""
    )
    outputs = (await workflow.run({"city": "Oslo", "repo": "a/b"})).get_outputs()
    assert outputs == ["21F / 42 / docs about Oslo"]
    http_request, mcp_call = sent
    assert http_request == HttpRequestInfo("GET", "https://api.example.test/repos/a/b", {"Accept": "application/json"})
    assert mcp_call.tool_name == "search"


async def test_foreach_runs_the_body_per_item() -> None:
    workflow = WorkflowFactory().create_workflow_from_yaml(
        """\
name: loop
actions:
  - kind: Foreach
    items: =inputs.names
    value: Local.name
    index: Local.i
    actions:
      - kind: SendActivity
        activity:
          text: =Concat(Text(Local.i), ":", Local.name)
  - kind: SendActivity
    activity:
      text: done
"""
    )
    assert (await workflow.run({"names": ["a", "b", "c"]})).get_outputs() == ["0:a", "1:b", "2:c", "done"]


@pytest.mark.parametrize(
    ("yaml_text", "message"),
    [
        ("name: x\nactions:\n  - kind: Teleport\n", r"line 3: unknown action kind 'Teleport'"),
        ("name: x\nactions:\n  - kind: GotoAction\n    actionId: nowhere\n", r"line 4: GotoAction points at 'nowhere'"),
        ("name: x\nactions:\n  - kind: HttpRequestAction\n    url: http://x\n", r"line 3: .*http_request_handler"),
        ("name: x\nactions:\n  - kind: InvokeMcpTool\n    toolName: t\n", r"line 3: .*mcp_tool_handler"),
        ("name: x\nactions:\n  - kind: InvokeAzureAgent\n    agent:\n      name: Ghost\n", r"line 4: agent 'Ghost'"),
        ("name: x\nactions:\n  - kind: InvokeFunctionTool\n    functionName: rm\n", r"line 4: function 'rm'"),
        ("name: x\nactionz: []\n", r"line 2: unknown key 'actionz'"),
        (
            "name: x\nactions:\n  - kind: SetValue\n    path: Local.a\n    value: =Concat(1,\n",
            r"line 5: Unexpected .end of expression.",
        ),
        ("name: x\nactions:\n  - {kind: SendActivity, id: a}\n  - {kind: SendActivity, id: a}\n", "used twice"),
    ],
)
def test_build_errors_name_the_line(yaml_text: str, message: str) -> None:
    with pytest.raises(DeclarativeWorkflowError, match=message):
        WorkflowFactory().create_workflow_from_yaml(yaml_text)


async def test_env_reads_only_the_configuration(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SECRET_TOKEN", "from-the-environment")
    text = (
        'name: env\nactions:\n  - kind: SendActivity\n    activity:\n      text: =Concat("[", Env.SECRET_TOKEN, "]")\n'
    )
    assert (await WorkflowFactory().create_workflow_from_yaml(text).run({})).get_outputs() == ["[]"]
    configured = WorkflowFactory(configuration={"SECRET_TOKEN": "given"}).create_workflow_from_yaml(text)
    assert (await configured.run({})).get_outputs() == ["[given]"]


async def test_a_failing_action_is_named() -> None:
    def boom() -> None:
        raise RuntimeError("nope")

    workflow = WorkflowFactory(bindings={"boom": boom}).create_workflow_from_yaml(
        "name: f\nactions:\n  - kind: InvokeFunctionTool\n    id: explode\n    functionName: boom\n"
    )
    with pytest.raises(WorkflowRunError, match="Executor 'explode' failed") as info:
        await workflow.run({})
    cause = info.value.__cause__
    assert isinstance(cause, DeclarativeActionError)
    assert cause.action_id == "explode"
    assert "boom failed: RuntimeError: nope" in str(cause)
