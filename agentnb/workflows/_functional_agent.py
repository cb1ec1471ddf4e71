"""``FunctionalWorkflow.as_agent()``: a functional workflow behind the agent interface.

The same adapter as the graph's :class:`~agentnb.workflows.WorkflowAgent` (outputs become the answer,
``intermediate`` events reasoning, ``request_info`` a ``function_approval_request`` answered on the next run);
only the input differs: the agent's messages become whatever the workflow function's input parameter takes
(``list[Message]``, a ``Message`` or their text; text when the parameter has no annotation).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

from .._types import Message
from ._typing_utils import describe, matches
from ._workflow_agent import WorkflowAgent

if TYPE_CHECKING:
    from ._functional import FunctionalWorkflow
    from ._workflow import Workflow

__all__ = ["FunctionalWorkflowAgent"]


class FunctionalWorkflowAgent(WorkflowAgent):
    """An agent that runs a functional workflow for each turn (create it with ``workflow.as_agent()``).

    Example:
        >>> from agentnb.workflows import workflow
        >>> @workflow
        ... async def echo(text: str) -> str:
        ...     return f"echo: {text}"
        >>> agent = echo.build().as_agent(name="echoer")
        >>> (await agent.run("hi")).text  # doctest: +SKIP
        'echo: hi'
    """

    def __init__(
        self,
        workflow: FunctionalWorkflow,
        *,
        name: str | None = None,
        description: str | None = None,
        id: str | None = None,
    ) -> None:
        # The graph adapter only runs the workflow and reads its pending requests, which a functional
        # workflow has too; choosing the input is the one part that differs (see _input_for).
        super().__init__(
            cast("Workflow", workflow),
            name=name,
            description=description if description is not None else workflow.description,
            id=id or f"functional_workflow:{workflow.name}",
        )
        self.functional_workflow = workflow

    def _check_input(self, workflow: Workflow) -> None:
        # A functional workflow's input is checked per run, against its function's parameter (see _input_for).
        return

    def _input_for(self, messages: list[Message]) -> Any:
        input_type = self.functional_workflow.definition.input_type
        text = "\n".join(m.text for m in messages)
        if input_type is Any:
            return text
        candidates: list[Any] = [messages]
        if len(messages) == 1:
            candidates.append(messages[0])
        candidates.append(text)
        for candidate in candidates:
            if matches(candidate, input_type):
                return candidate
        raise TypeError(
            f"Workflow {self.functional_workflow.name!r} takes {describe(input_type)}, which is none of "
            "list[Message], Message or str, so it cannot run as an agent."
        )
