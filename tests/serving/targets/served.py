"""An agent and a workflow for ``agentnb serve`` to load from a file (offline models)."""

from agentnb import Agent, tool
from agentnb.local import ScriptedChatClient
from agentnb.workflows import WorkflowBuilder, WorkflowContext, executor


@tool
def add(a: int, b: int) -> int:
    """Add two numbers."""
    return a + b


agent = Agent(
    ScriptedChatClient([ScriptedChatClient.call("add", a=2, b=3), "2 + 3 = 5"] * 10),
    name="Adder",
    description="Adds numbers.",
    tools=[add],
)


@executor(id="shout")
async def shout(text: str, ctx: WorkflowContext[str, str]) -> None:
    await ctx.yield_output(text.upper())


workflow = WorkflowBuilder(start_executor=shout, name="Shouter").build()
