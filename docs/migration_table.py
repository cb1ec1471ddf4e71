"""Write the name tables of ``docs/migrating-from-agent-framework.md``.

Every public name of Agent Framework's core, orchestrations, openai and observability modules and of its
exceptions module gets a row: the agentnb name it maps to (the same name wherever agentnb has it), or what
to use instead. The reference's names are read from a checkout of its repository when one is given
(``--reference DIR``), and otherwise from the tables already in the document, so the document can be
brought up to date with agentnb's own exports without a network::

    python docs/migration_table.py                      # refresh the agentnb side
    python docs/migration_table.py --reference ../agent-framework   # take the reference's names anew

``tests/test_migration_doc.py`` fails when the committed document differs from what this script writes.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

DOC = Path(__file__).with_name("migrating-from-agent-framework.md")
BEGIN, END = "<!-- names:begin -->", "<!-- names:end -->"
XFAIL = DOC.parents[1] / "tests" / "parity" / "core" / "xfail.json"


@dataclass(frozen=True)
class Area:
    """One reference module: where its names come from and where agentnb keeps their counterparts."""

    title: str
    reference_module: str
    reference_file: str
    agentnb_modules: tuple[str, ...]


AREAS = (
    Area(
        "Core",
        "agent_framework",
        "python/packages/core/agent_framework/__init__.pyi",
        ("agentnb", "agentnb.workflows", "agentnb.mcp", "agentnb.exceptions", "agentnb.observability"),
    ),
    Area(
        "Orchestrations",
        "agent_framework.orchestrations",
        "python/packages/orchestrations/agent_framework_orchestrations/__init__.py",
        ("agentnb.orchestrations", "agentnb.workflows", "agentnb"),
    ),
    Area(
        "OpenAI",
        "agent_framework.openai",
        "python/packages/core/agent_framework/openai/__init__.pyi",
        ("agentnb.openai", "agentnb.exceptions"),
    ),
    Area(
        "Anthropic",
        "agent_framework.anthropic",
        "python/packages/anthropic/agent_framework_anthropic/__init__.py",
        ("agentnb.anthropic", "agentnb"),
    ),
    Area(
        "Observability",
        "agent_framework.observability",
        "python/packages/core/agent_framework/observability.py",
        ("agentnb.observability",),
    ),
    Area(
        "Exceptions",
        "agent_framework.exceptions",
        "python/packages/core/agent_framework/exceptions.py",
        ("agentnb.exceptions",),
    ),
    Area(
        "Declarative",
        "agent_framework.declarative",
        "python/packages/declarative/agent_framework_declarative/__init__.py",
        ("agentnb.declarative", "agentnb.exceptions"),
    ),
    Area(
        "A2A",
        "agent_framework.a2a",
        "python/packages/a2a/agent_framework_a2a/__init__.py",
        ("agentnb.a2a",),
    ),
    Area(
        "Shell tool",
        "agent_framework_tools.shell",
        "python/packages/tools/agent_framework_tools/shell/__init__.py",
        ("agentnb.harness", "agentnb.exceptions"),
    ),
)

# Reference names whose agentnb counterpart has another name or lives elsewhere: (agentnb name, note).
RENAMES: dict[str, tuple[str, str]] = {
    "RawAgent": ("agentnb.BaseAgent", "the agent without its middleware and telemetry layers"),
    "RawOpenAIChatClient": ("agentnb.openai.OpenAIChatClient", "one class; layers are built in"),
    "RawOpenAIChatCompletionClient": ("agentnb.openai.OpenAIChatCompletionClient", "one class; layers are built in"),
    "OpenAIContentFilterException": ("agentnb.exceptions.ContentFilterError", "renamed"),
    "OpenAIChatResponseContentsParser": (
        "agentnb.openai.OpenAIChatResponseContentsParser",
        "`OpenAIChatCompletionClient(response_parser=...)`; the client already reads `reasoning_content` and "
        "`reasoning` as reasoning text, so a parser that adds them again shows them twice",
    ),
    "OpenAIChatMessagePreparer": (
        "agentnb.openai.OpenAIChatMessagePreparer",
        "`OpenAIChatCompletionClient(message_preparer=...)`; agentnb sends no reasoning by default, so a preparer "
        "adds the provider's field to the assistant dict rather than replacing a reasoning text dict",
    ),
    "DEFAULT_MAX_ITERATIONS": (
        "agentnb.BaseChatClient",
        '`function_invocation_configuration["max_iterations"]` (or `max_iterations=`) on the client, default 40',
    ),
    # The runner's parts: the same supersteps `Workflow.run` runs, over explicit edge groups and executors.
    "Runner": (
        "agentnb.Runner",
        "`state` is a dict; a message whose sender is not one of its executors is an input; yields agentnb's events",
    ),
    "RunnerContext": (
        "agentnb.RunnerContext",
        "messages, events and checkpoint storage; a request is answered with `Runner.send_request_info_response`",
    ),
    "create_edge_runner": (
        "agentnb.create_edge_runner",
        "what a `Workflow` routes each group's messages through; `send_message` runs the receiving executors",
    ),
    # Reference exceptions with no class of their own in agentnb: the nearest class to catch.
    "ChatClientInvalidRequestException": ("agentnb.exceptions.ServiceResponseError", "catch this instead"),
    "ChatClientInvalidResponseException": ("agentnb.exceptions.ServiceResponseError", "catch this instead"),
    "AgentException": ("agentnb.exceptions.AgentnbError", "catch this instead"),
    "AgentInvalidAuthException": ("agentnb.exceptions.ServiceAuthenticationError", "catch this instead"),
    "AgentInvalidRequestException": ("agentnb.exceptions.ServiceResponseError", "catch this instead"),
    "AgentInvalidResponseException": ("agentnb.exceptions.ServiceResponseError", "catch this instead"),
    "AgentContentFilterException": ("agentnb.exceptions.ContentFilterError", "catch this instead"),
    "WorkflowConvergenceException": ("agentnb.exceptions.WorkflowRunError", "catch this instead"),
    "ContentError": ("agentnb.exceptions.ChatClientError", "catch this instead"),
    "AdditionItemMismatch": ("agentnb.exceptions.ChatClientError", "catch this instead"),
    "MiddlewareException": (
        "agentnb.exceptions.AgentnbError",
        "catch this instead; a middleware's own error propagates",
    ),
    "UserInputRequiredException": (
        "agentnb.exceptions.UserInputRequiredError",
        "renamed; raised by an agent used as a tool when it asks for input, with what it asked in `contents`",
    ),
    "A2AServiceSessionId": (
        "agentnb.a2a.A2AAgent",
        "the A2A context and task are kept in `session.state['a2a']`; `service_session_id` is the context id",
    ),
    "A2AAgentSession": ("agentnb.AgentSession", "a plain session holds the A2A ids (deprecated in the reference)"),
    "MCPTaskOptions": (
        "agentnb.mcp.MCPTaskOptions",
        "drives the MCP task lifecycle, as the core guide describes (a no-op shim in the reference's release)",
    ),
    "WorkflowState": ("agentnb.declarative.WorkflowFactory", "variables live in the workflow's shared state"),
    "AgentExternalInputRequest": (
        "agentnb.declarative.ExternalInputRequest",
        "an agent's `externalLoop` pauses with one whose `request_type` is `agent_external_input`",
    ),
    "AgentExternalInputResponse": ("agentnb.declarative.ExternalInputResponse", "or answer with plain text"),
    # Orchestration internals: agentnb has one class where the reference has a family.
    "AgentOrchestrationOutput": (
        "agentnb.orchestrations.GroupChatDecision",
        "the orchestrator agent's structured answer, with the same fields (terminate, reason, next_speaker, "
        "final_message)",
    ),
    "AgentBasedGroupChatOrchestrator": (
        "agentnb.orchestrations.GroupChatOrchestrator",
        "one orchestrator drives the chat from a selection function or an agent "
        "(`GroupChatBuilder(orchestrator_agent=...)`)",
    ),
    "BaseGroupChatOrchestrator": (
        "agentnb.orchestrations.GroupChatOrchestrator",
        "the one group-chat orchestrator (alias of `GroupChatManager`); subclass it",
    ),
    "MagenticAgentExecutor": (
        "agentnb.orchestrations.MagenticAgentExecutor",
        "an `AgentExecutor` that starts over on a `MagenticResetSignal`, for hand-built graphs; `MagenticBuilder`'s "
        "participants are given the whole conversation each round and need no reset",
    ),
    "HandoffAgentExecutor": (
        "agentnb.orchestrations.HandoffAgentExecutor",
        "the `AgentExecutor` each `HandoffBuilder` participant runs in, with the release's constructor; the builder "
        "keeps the conversation, termination and autonomous mode in its coordinator, while a hand-built graph of "
        "these executors routes by itself as the reference's does. Handoff tools are declaration-only (the turn ends "
        "at the call) instead of an intercepting middleware on a cloned agent",
    ),
    "HandoffBuilder": (
        "agentnb.orchestrations.HandoffBuilder",
        "the release's keywords and methods (`with_autonomous_mode(agents=, prompts=, turn_limits=)`, "
        "`enable_return_to_previous`, ...); participants go to the constructor (no `.participants()` method) and "
        "the start agent defaults to the first. The workflow's output is the final conversation, each reply an "
        '`intermediate` event; `output_from="all"` makes each reply an `output` as in the release',
    ),
    "MagenticResetSignal": (
        "agentnb.orchestrations.MagenticResetSignal",
        "handled by `MagenticAgentExecutor`; agentnb's Magentic orchestrator replans without sending it",
    ),
    "GroupChatRequestMessage": (
        "agentnb.orchestrations.GroupChatRequestMessage",
        "the envelope's shape, for custom orchestrators; agentnb's manager sends the participant the conversation",
    ),
    "OrchestrationState": (
        "agentnb.orchestrations.OrchestrationState",
        "the shared state shape (JSON-safe `to_dict`), for custom orchestrators; agentnb's orchestrators checkpoint "
        "their own state",
    ),
    "MagenticProgressLedgerItem": (
        "agentnb.orchestrations.MagenticProgressLedgerItem",
        "`MagenticProgressLedger` takes these for its fields and keeps the answers (their reasons become `reason`)",
    ),
    "MCPToolApprovalRequest": (
        "agentnb.declarative.ToolApprovalRequest",
        "InvokeMcpTool asks with the same request as InvokeFunctionTool",
    ),
    "DOCKER_DEFAULT_IMAGE": (
        "agentnb.harness.DOCKER_DEFAULT_IMAGE",
        "Debian's `bookworm-slim` from Docker Hub rather than an Azure Linux image",
    ),
    "DockerShellTool": (
        "agentnb.harness.DockerShellTool",
        "same isolation flags; `extra_run_args` refuses options that loosen them, `unsafe_extra_run_args` passes "
        "them as given; `never_require` needs `acknowledge_unsafe=True` once the isolation is loosened",
    ),
    "DefaultHttpRequestHandler": (
        "agentnb.declarative.DefaultHttpRequestHandler",
        "passed explicitly, never on by default; adds `allowed_urls=`; a JSON body arrives parsed (text in "
        "`text`); a transport failure raises `ServiceConnectionError` / `ServiceTimeoutError`",
    ),
    "DefaultMCPToolHandler": (
        "agentnb.declarative.DefaultMCPToolHandler",
        "passed explicitly, never on by default; adds `allowed_urls=`",
    ),
}

# Names tied to a Microsoft cloud service: agentnb has no counterpart on purpose. (pattern, note naming the service)
# Every other reference name has a counterpart; ``tests/test_migration_doc.py`` fails on one that does not.
MICROSOFT_CLOUD: tuple[tuple[str, str], ...] = (
    (
        r"Foundry",
        "tied to Microsoft Foundry (Claude hosted in Azure): point `agentnb.anthropic.AnthropicClient(base_url=...)` "
        "at the deployment's Messages-API endpoint",
    ),
)

OTHER = "not in agentnb"


def reference_names(checkout: Path) -> dict[str, list[str]]:
    """The public names of each reference module, read from a checkout's source (never imported)."""
    out: dict[str, list[str]] = {}
    for area in AREAS:
        tree = ast.parse((checkout / area.reference_file).read_text())
        names: list[str] | None = None
        for node in tree.body:
            if isinstance(node, ast.Assign):
                targets, value = node.targets, node.value
            elif isinstance(node, ast.AnnAssign) and node.value is not None:
                targets, value = [node.target], node.value
            else:
                continue
            if any(isinstance(target, ast.Name) and target.id == "__all__" for target in targets):
                names = list(ast.literal_eval(value))
        if names is None:  # the exceptions module has no __all__: its classes are its names
            names = [node.name for node in tree.body if isinstance(node, ast.ClassDef)]
        out[area.title] = sorted(dict.fromkeys(names))
    return out


def names_in_document(text: str) -> dict[str, list[str]]:
    """The reference names already listed in the document's tables, by area."""
    out: dict[str, list[str]] = {}
    area = None
    for line in text.splitlines():
        if line.startswith("### "):
            title = line[4:].split(" (")[0].strip()
            area = title if any(a.title == title for a in AREAS) else None
            if area:
                out[area] = []
        elif area and (match := re.match(r"\| `([A-Za-z_][A-Za-z0-9_]*)` \|", line)):
            out[area].append(match.group(1))
    return out


def _lookup(path: str) -> object | None:
    module, _, name = path.rpartition(".")
    try:
        return getattr(importlib.import_module(module), name, None)
    except ImportError:
        return None


def counterpart(name: str, area: Area) -> tuple[str | None, str]:
    """The agentnb dotted name for a reference name (or None) and a note."""
    if name in RENAMES and _lookup(RENAMES[name][0]) is not None:
        return RENAMES[name]
    for module in area.agentnb_modules:
        path = f"{module}.{name}"
        found = _lookup(path)
        if found is not None and (not name.startswith("_") or name == "__version__"):
            real = getattr(found, "__name__", name)
            return path, (f"alias of `{real}`" if isinstance(found, type) and real != name else "")
    for pattern, note in MICROSOFT_CLOUD:
        if re.search(pattern, name):
            return None, note
    return None, OTHER


def agentnb_only(mapped: set[str]) -> list[str]:
    """Public names of agentnb's top-level package that the tables do not show under that name."""
    import agentnb

    shown = {path.rsplit(".", 1)[1] for path in mapped}
    return [name for name in agentnb.__all__ if name not in shown]


def render(names: dict[str, list[str]]) -> str:
    """The tables, between the document's markers."""
    lines = [BEGIN, ""]
    mapped: set[str] = set()
    totals = [0, 0]
    for area in AREAS:
        rows = names.get(area.title, [])
        lines += [f"### {area.title} (`{area.reference_module}`)", "", "| Agent Framework | agentnb | note |"]
        lines.append("| --- | --- | --- |")
        for name in rows:
            path, note = counterpart(name, area)
            totals[0] += 1
            if path:
                totals[1] += 1
                mapped.add(path)
            lines.append(f"| `{name}` | {f'`{path}`' if path else '—'} | {note} |")
        lines.append("")
    only = agentnb_only(mapped)
    lines += [
        "### agentnb's own names",
        "",
        "Public names of `agentnb` that no reference name maps to (notebook, store, tracing and extras):",
        "",
        ", ".join(f"`{name}`" for name in only) + ".",
        "",
        f"{totals[1]} of the reference's {totals[0]} names have an agentnb counterpart.",
        "",
        *unit_test_differences(),
        END,
    ]
    return "\n".join(lines)


def unit_test_differences() -> list[str]:
    """The reference's unit tests that still fail on agentnb, grouped by the kind of difference."""
    if not XFAIL.exists():
        return []
    reasons: dict[str, str] = json.loads(XFAIL.read_text(encoding="utf-8"))
    groups: dict[str, Counter[str]] = {}
    for reason in reasons.values():
        kind, _, rest = reason.partition("`")
        groups.setdefault(kind.strip() or reason, Counter())[rest.split("`")[0] if rest else ""] += 1
    lines = [
        "### The reference's unit tests",
        "",
        "`tests/parity/core` runs the reference's core unit tests, ported by public names "
        "(`tests/parity/port_core_tests.py`; `EXCLUDED.md` there lists the tests left out and why). "
        f"{len(reasons)} of them fail on agentnb and are marked `xfail(strict=True)`, by kind of difference:",
        "",
        "| difference | tests | names (tests) |",
        "| --- | --- | --- |",
    ]
    for kind, names in sorted(groups.items(), key=lambda item: (-item[1].total(), item[0])):
        shown = [f"`{name}` ({count})" for name, count in names.most_common(12) if name]
        more = len([name for name in names if name]) - len(shown)
        lines.append(f"| {kind} | {names.total()} | {', '.join(shown)}{f', and {more} more' if more > 0 else ''} |")
    return [*lines, ""]


def updated(text: str, names: dict[str, list[str]]) -> str:
    """The document with its tables written anew."""
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    return head + render(names) + tail


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", type=Path, help="a checkout of microsoft/agent-framework")
    args = parser.parse_args(argv)
    text = DOC.read_text()
    names = reference_names(args.reference) if args.reference else names_in_document(text)
    DOC.write_text(updated(text, names))
    print(f"wrote {DOC.name}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
