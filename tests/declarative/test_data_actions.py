"""The declarative actions that reshape variables and steer loops, checked through a run of each workflow.

The last action of each workflow hands the variables to a bound function, so the test reads what the run
actually left in its state.
"""

from __future__ import annotations

from typing import Any

import pytest

from agentnb.declarative import DeclarativeActionError, DeclarativeWorkflowError, WorkflowFactory
from agentnb.exceptions import WorkflowRunError


async def _run(actions: str, inputs: Any = None, **captured: str) -> dict[str, Any]:
    """Run ``actions`` then capture the given variables (name -> expression) as the run left them."""
    seen: dict[str, Any] = {}

    def capture(**values: Any) -> None:
        seen.update(values)

    arguments = "".join(f"      {name}: {expr}\n" for name, expr in captured.items())
    capture_action = f"  - kind: InvokeFunctionTool\n    functionName: capture\n    arguments:\n{arguments}"
    text = f"name: t\nactions:\n{actions}{capture_action}"
    workflow = WorkflowFactory(bindings={"capture": capture}).create_workflow_from_yaml(text)
    await workflow.run(inputs if inputs is not None else {})
    return seen


async def test_set_multiple_variables_assigns_in_order_and_later_ones_see_earlier() -> None:
    seen = await _run(
        """\
  - kind: SetMultipleVariables
    assignments:
      - variable: Local.a
        value: =1 + 1
      - variable: {path: Local.b}
        value: =Local.a * 10
      - path: Workflow.Outputs.c
        value: plain text
""",
        a="=Local.a",
        b="=Local.b",
        c="=Workflow.Outputs.c",
    )
    assert seen == {"a": 2, "b": 20, "c": "plain text"}


async def test_reset_and_clear_all_variables() -> None:
    seen = await _run(
        """\
  - kind: SetMultipleVariables
    assignments:
      - {variable: Local.keep, value: 1}
      - {variable: Local.drop, value: 2}
      - {variable: Workflow.Outputs.kept, value: 3}
  - kind: ResetVariable
    variable: Local.drop
  - kind: SetMultipleVariables
    assignments:
      - {variable: Workflow.Outputs.dropBlank, value: =IsBlank(Local.drop)}
      - {variable: Workflow.Outputs.keepBefore, value: =Local.keep}
  - kind: ClearAllVariables
""",
        {"name": "Ann"},
        keep="=Local.keep",
        blank="=Workflow.Outputs.dropBlank",
        before="=Workflow.Outputs.keepBefore",
        kept="=Workflow.Outputs.kept",
        name="=inputs.name",
    )
    # ResetVariable blanks one variable; ClearAllVariables empties Local only, so outputs and inputs stay.
    assert seen == {"keep": None, "blank": True, "before": 1, "kept": 3, "name": "Ann"}


@pytest.mark.parametrize(
    ("value", "value_type", "expected"),
    [
        ("'{\"a\": 1}'", "object", {"a": 1}),
        ("'[1, 2]'", "array", [1, 2]),
        ("'not json'", "array", ["not json"]),
        ("'42'", "number", 42),
        ("'4.5'", "number", 4.5),
        ("'YES'", "boolean", True),
        ("=7", "string", "7"),
    ],
)
async def test_parse_value_converts_to_the_value_type(value: str, value_type: str, expected: Any) -> None:
    seen = await _run(
        f"  - kind: ParseValue\n    variable: Local.out\n    value: {value}\n    valueType: {value_type}\n",
        out="=Local.out",
    )
    assert seen == {"out": expected}


async def test_parse_value_refuses_an_unknown_type() -> None:
    with pytest.raises(WorkflowRunError) as info:
        await _run("  - kind: ParseValue\n    id: p\n    variable: Local.x\n    value: '1'\n    valueType: tensor\n")
    assert isinstance(info.value.__cause__, DeclarativeActionError)
    assert "unknown valueType 'tensor'" in str(info.value.__cause__)


async def test_edit_table_adds_inserts_updates_removes_and_clears() -> None:
    seen = await _run(
        """\
  - {kind: EditTable, table: Local.items, operation: add, value: a}
  - {kind: EditTable, table: Local.items, operation: add, value: c}
  - {kind: EditTable, table: Local.items, operation: insert, value: b, index: 1}
  - {kind: EditTable, table: Local.items, operation: set, value: C, index: 2}
  - {kind: SetValue, path: Local.full, value: =Local.items}
  - {kind: EditTable, table: Local.items, operation: remove, value: a}
  - {kind: EditTable, table: Local.items, operation: remove, index: 9}
  - {kind: SetValue, path: Local.afterRemove, value: =Local.items}
  - {kind: EditTable, table: Local.gone, operation: add, value: x}
  - {kind: EditTable, table: Local.gone, operation: clear}
""",
        full="=Local.full",
        after="=Local.afterRemove",
        gone="=Local.gone",
    )
    assert seen == {"full": ["a", "b", "C"], "after": ["b", "C"], "gone": []}


async def test_edit_table_v2_matches_records_by_key() -> None:
    seen = await _run(
        """\
  - kind: EditTableV2
    table: Local.people
    operation: addOrUpdate
    key: id
    item: "={id: 1, name: \\"Ann\\"}"
  - kind: EditTableV2
    table: Local.people
    operation: addOrUpdate
    key: id
    item: "={id: 2, name: \\"Bo\\"}"
  - kind: EditTableV2
    table: Local.people
    operation: addOrUpdate
    key: id
    item: "={id: 1, name: \\"Annie\\"}"
  - {kind: SetValue, path: Local.both, value: =Local.people}
  - kind: EditTableV2
    table: Local.people
    operation: remove
    key: id
    item: "={id: 2}"
""",
        both="=Local.both",
        left="=Local.people",
    )
    assert seen["both"] == [{"id": 1, "name": "Annie"}, {"id": 2, "name": "Bo"}]
    assert seen["left"] == [{"id": 1, "name": "Annie"}]


async def test_edit_table_refuses_an_unknown_operation() -> None:
    with pytest.raises(WorkflowRunError) as info:
        await _run("  - {kind: EditTable, id: e, table: Local.t, operation: shuffle}\n")
    cause = info.value.__cause__
    assert isinstance(cause, DeclarativeActionError)
    assert cause.action_id == "e"
    assert "unknown operation 'shuffle'" in str(cause)


async def test_create_conversation_records_a_new_conversation() -> None:
    seen = await _run(
        "  - kind: CreateConversation\n    conversationId: Local.conv\n",
        conv="=Local.conv",
        record="=System.conversations",
    )
    conversation_id = seen["conv"]
    assert isinstance(conversation_id, str) and len(conversation_id) == 36
    assert seen["record"] == {conversation_id: {"id": conversation_id, "messages": []}}


async def test_break_and_continue_steer_the_enclosing_foreach() -> None:
    workflow = WorkflowFactory().create_workflow_from_yaml(
        """\
name: loop
actions:
  - kind: Foreach
    id: each
    items: =inputs.numbers
    value: Local.n
    actions:
      - kind: If
        condition: =Local.n = 0
        then:
          - kind: ContinueLoop
      - kind: If
        condition: =Local.n < 0
        then:
          - kind: BreakLoop
            id: stop
      - kind: SendActivity
        activity:
          text: =Text(Local.n)
  - kind: SendActivity
    activity:
      text: after
"""
    )
    assert set(workflow.executors) >= {"each", "stop"}
    outputs = (await workflow.run({"numbers": [1, 0, 2, -1, 3]})).get_outputs()
    assert outputs == ["1", "2", "after"]
    # The loop starts afresh on the next run: a break leaves no position behind.
    assert (await workflow.run({"numbers": [5]})).get_outputs() == ["5", "after"]


def test_loop_control_outside_a_loop_names_the_line() -> None:
    with pytest.raises(DeclarativeWorkflowError, match=r"line 4: BreakLoop can only be used inside a Foreach"):
        WorkflowFactory().create_workflow_from_yaml("name: x\nactions:\n  - kind: SendActivity\n  - kind: BreakLoop\n")
