"""Demo workflows the DevUI ships with: a typed pipeline, a human review, and a fan-out / fan-in graph.

They need no model at all, so they behave the same offline and online. Each executor pauses briefly so a
run can be watched on the graph.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from pydantic import BaseModel, Field
from typing_extensions import Never

from agentnb.workflows import (
    Case,
    Default,
    Executor,
    WorkflowBuilder,
    WorkflowContext,
    executor,
    handler,
    response_handler,
)

__all__ = [
    "Greeting",
    "ReviewDecision",
    "ReviewRequest",
    "fan_out_workflow",
    "review_workflow",
    "text_pipeline_workflow",
]

# A short pause per executor keeps the demo's live graph readable; real executors take their own time.
PAUSE = 0.25


class Greeting(BaseModel):
    """The input of the greeting pipeline (the DevUI turns it into a form)."""

    name: str = Field(default="Ada", description="Who to greet")
    punctuation: Literal["!", "?", "."] = "!"
    times: int = Field(default=2, ge=1, le=5, description="How often to repeat the punctuation")


@executor(id="prepare")
async def prepare(greeting: Greeting, ctx: WorkflowContext[str]) -> None:
    """Store the styling in shared state and pass the greeting on."""
    await asyncio.sleep(PAUSE)
    ctx.set_state("punctuation", greeting.punctuation)
    ctx.set_state("times", greeting.times)
    await ctx.send_message(f"hello {greeting.name}")


@executor(id="shout")
async def shout(text: str, ctx: WorkflowContext[str]) -> None:
    """Upper-case the text."""
    await asyncio.sleep(PAUSE)
    await ctx.send_message(text.upper())


@executor(id="decorate")
async def decorate(text: str, ctx: WorkflowContext[Never, str]) -> None:
    """Add the punctuation from shared state and yield the result."""
    await asyncio.sleep(PAUSE)
    mark = ctx.get_state("punctuation", "!")
    await ctx.yield_output(text + mark * int(ctx.get_state("times", 1)))


def text_pipeline_workflow() -> Any:
    """prepare -> shout -> decorate: a three-step chain with a pydantic input and shared state."""
    return (
        WorkflowBuilder(
            start_executor=prepare,
            name="greeting-pipeline",
            description="Greets someone loudly: a typed input form, shared state, three supersteps.",
        )
        .add_chain([prepare, shout, decorate])
        .build()
    )


class ReviewRequest(BaseModel):
    """What the reviewer is asked."""

    draft: str
    question: str = "Publish this draft?"


class ReviewDecision(BaseModel):
    """The reviewer's answer (the DevUI shows it as a form)."""

    approved: bool = True
    comment: str = ""


@executor(id="write_draft")
async def write_draft(topic: str, ctx: WorkflowContext[str]) -> None:
    """Write a (very) short draft about the topic."""
    await asyncio.sleep(PAUSE)
    await ctx.send_message(f"A short note about {topic.strip() or 'nothing'}.")


class Reviewer(Executor):
    """Ask a human to approve the draft; publish or reject depending on the answer."""

    @handler
    async def review(self, draft: str, ctx: WorkflowContext[Never, str]) -> None:
        await ctx.request_info(request_data=ReviewRequest(draft=draft), response_type=ReviewDecision)

    @response_handler
    async def decided(self, request: ReviewRequest, decision: ReviewDecision, ctx: WorkflowContext[Never, str]) -> None:
        verdict = "published" if decision.approved else "rejected"
        note = f" ({decision.comment})" if decision.comment else ""
        await ctx.yield_output(f"{verdict}: {request.draft}{note}")


def review_workflow() -> Any:
    """write_draft -> reviewer, where the reviewer waits for a human decision (request_info)."""
    reviewer = Reviewer("reviewer")
    return (
        WorkflowBuilder(
            start_executor=write_draft,
            name="human-review",
            description="Drafts a note and waits for your approval before publishing it.",
        )
        .add_edge(write_draft, reviewer)
        .build()
    )


@executor(id="split")
async def split(text: str, ctx: WorkflowContext[str]) -> None:
    """Send the text to every analyzer."""
    await asyncio.sleep(PAUSE)
    await ctx.send_message(text)


@executor(id="count_words")
async def count_words(text: str, ctx: WorkflowContext[dict[str, Any]]) -> None:
    """Count words."""
    await asyncio.sleep(PAUSE)
    await ctx.send_message({"words": len(text.split())})


@executor(id="count_letters")
async def count_letters(text: str, ctx: WorkflowContext[dict[str, Any]]) -> None:
    """Count letters."""
    await asyncio.sleep(PAUSE)
    await ctx.send_message({"letters": sum(ch.isalpha() for ch in text)})


@executor(id="find_questions")
async def find_questions(text: str, ctx: WorkflowContext[dict[str, Any]]) -> None:
    """Count questions."""
    await asyncio.sleep(PAUSE)
    await ctx.send_message({"questions": text.count("?")})


@executor(id="join")
async def join(parts: list[dict[str, Any]], ctx: WorkflowContext[dict[str, Any]]) -> None:
    """Merge the analyzers' findings (fan-in: runs once all three have sent)."""
    merged: dict[str, Any] = {}
    for part in parts:
        merged.update(part)
    await ctx.send_message(merged)


@executor(id="long_report")
async def long_report(stats: dict[str, Any], ctx: WorkflowContext[Never, str]) -> None:
    """Report on a long text."""
    await ctx.yield_output(f"long text: {stats}")


@executor(id="short_report")
async def short_report(stats: dict[str, Any], ctx: WorkflowContext[Never, str]) -> None:
    """Report on a short text."""
    await ctx.yield_output(f"short text: {stats}")


def is_long(stats: dict[str, Any]) -> bool:
    """Route texts of more than eight words to the long report."""
    return stats.get("words", 0) > 8


def fan_out_workflow() -> Any:
    """split -> three analyzers -> join (fan-in) -> long or short report (switch-case)."""
    analyzers = [count_words, count_letters, find_questions]
    return (
        WorkflowBuilder(
            start_executor=split,
            name="text-stats",
            description="Fans a text out to three analyzers, joins them and routes on the word count.",
        )
        .add_fan_out_edges(split, analyzers)
        .add_fan_in_edges(analyzers, join)
        .add_switch_case_edge_group(join, [Case(is_long, long_report), Default(short_report)])
        .build()
    )
