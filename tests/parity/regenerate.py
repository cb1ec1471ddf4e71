"""Regenerate the ported reference samples in ``samples/`` from the originals, and check the ports offline.

Each port is the reference's own sample with only its import lines and its model client changed: the
``agent_framework`` imports become ``agentnb`` imports and the provider's client becomes :func:`parity_model.model`
(an ``agentnb.local`` scripted model). ``manifest.json`` records, for every port, the hash of the original and
the lines that differ, so ``--check`` proves without network that everything else is byte-identical.

Samples written for an API the reference has since changed get one more kind of edit, the smallest that
moves them to the released API, each listed in :data:`LIFECYCLE` with its reason and recorded in the
manifest (``lifecycle``): the functional-workflow samples predate ``@workflow`` returning a definition that
is built before it runs, so each gets one line binding its definition's name to ``definition.build(...)``
before ``main`` (and a storage passed to ``@workflow`` moves to that ``build``). ``--check`` accepts a
changed line only if it is an import, the model client, or one of those recorded lines.

Samples newer than :data:`REFERENCE_TAG` come from a later snapshot, named in their manifest entry
(``source``); ``--add SNAPSHOT COMMIT REL...`` ports just those without touching the others.

Usage:
    python tests/parity/regenerate.py SNAPSHOT   # SNAPSHOT: a checkout of the reference at REFERENCE_TAG
    python tests/parity/regenerate.py --add SNAPSHOT COMMIT REL...   # port REL... from a later snapshot
    python tests/parity/regenerate.py --check    # verify the committed ports against manifest.json

Where the snapshot comes from is up to you, e.g.
``git clone --branch python-1.13.0 https://github.com/microsoft/agent-framework``.
"""

from __future__ import annotations

import difflib
import hashlib
import json
import re
import sys
from pathlib import Path

HERE = Path(__file__).parent
PORTS = HERE / "samples"
MANIFEST = HERE / "manifest.json"
REFERENCE_TAG = "python-1.13.0"

# Import lines every sample gets, in this order (first match wins), applied to lines that start a statement.
# Indented imports (under ``if TYPE_CHECKING:``) keep their indentation.
IMPORTS: list[tuple[str, str]] = [
    (r"^(\s*)from agent_framework\.orchestrations import", r"\1from agentnb.orchestrations import"),
    (r"^(\s*)from agent_framework\.observability import", r"\1from agentnb.observability import"),
    (r"^(\s*)from agent_framework\.mcp import", r"\1from agentnb.mcp import"),
    (r"^(\s*)from agent_framework\.declarative import", r"\1from agentnb.declarative import"),
    (r"^(\s*)from agent_framework_declarative import", r"\1from agentnb.declarative import"),
    (r"^(\s*)from agent_framework\.a2a import", r"\1from agentnb.a2a import"),
    (r"^(\s*)from agent_framework_a2a import", r"\1from agentnb.a2a import"),
    (r"^(\s*)from agent_framework import", r"\1from agentnb import"),
]

# Provider packages whose ``*Client`` classes become ``model()``; their import line becomes the model's import.
_PROVIDER_IMPORT = re.compile(
    r"^from agent_framework\.(?:openai|foundry|azure|anthropic|ollama) import (?P<names>[^\n(]+)\n", re.M
)
# The provider's credentials are part of its client: they come from the model's module too (as stand-ins).
_CREDENTIAL_IMPORT = re.compile(r"^from azure\.identity(?:\.aio)? import ", re.M)
_CALL_ARGS = r"\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)"  # a call's parentheses, nested up to three deep

# The ported samples, as paths under python/samples/ of the reference.
SAMPLES: list[str] = [
    "01-get-started/01_hello_agent.py",
    "01-get-started/02_add_tools.py",
    "01-get-started/03_multi_turn.py",
    "01-get-started/04_memory.py",
    "01-get-started/07_first_graph_workflow.py",
    "02-agents/tools/function_tool_with_max_exceptions.py",
    "02-agents/tools/function_tool_with_max_invocations.py",
    "02-agents/tools/function_tool_recover_from_failures.py",
    "02-agents/tools/function_tool_with_kwargs.py",
    "02-agents/tools/function_tool_with_explicit_schema.py",
    "02-agents/tools/tool_in_class.py",
    "02-agents/tools/function_tool_with_session_injection.py",
    "02-agents/middleware/function_based_middleware.py",
    "02-agents/middleware/class_based_middleware.py",
    "02-agents/middleware/decorator_middleware.py",
    "02-agents/middleware/exception_handling_with_middleware.py",
    "02-agents/middleware/middleware_termination.py",
    "02-agents/middleware/shared_state_middleware.py",
    "02-agents/middleware/session_behavior_middleware.py",
    "02-agents/middleware/chat_middleware.py",
    "02-agents/middleware/agent_and_run_level_middleware.py",
    "02-agents/chat_client/require_per_service_call_history_persistence.py",
    "02-agents/context_providers/simple_context_provider.py",
    "02-agents/conversations/custom_history_provider.py",
    "02-agents/conversations/suspend_resume_session.py",
    "02-agents/conversations/file_history_provider.py",
    "03-workflows/parallelism/fan_out_fan_in_edges.py",
    "03-workflows/agents/custom_agent_executors.py",
    "03-workflows/orchestrations/sequential_agents.py",
    "03-workflows/orchestrations/group_chat_simple_selector.py",
    "03-workflows/orchestrations/concurrent_custom_aggregator.py",
    "03-workflows/_start-here/step1_executors_and_edges.py",
    "03-workflows/control-flow/sequential_executors.py",
    "03-workflows/control-flow/sequential_streaming.py",
    "03-workflows/control-flow/workflow_cancellation.py",
    "03-workflows/control-flow/intermediate_vs_terminal_outputs.py",
    "03-workflows/checkpoint/checkpoint_with_resume.py",
    "03-workflows/composition/sub_workflow_basics.py",
    "03-workflows/parallelism/aggregate_results_of_different_types.py",
    "03-workflows/observability/executor_io_observation.py",
    "03-workflows/orchestrations/magentic_human_plan_review.py",
    "03-workflows/human-in-the-loop/group_chat_request_info.py",
    "02-agents/tools/function_tool_from_dict_with_dependency_injection.py",
    "03-workflows/agents/azure_chat_agents_streaming.py",
    "03-workflows/agents/sequential_workflow_as_agent.py",
    "03-workflows/orchestrations/concurrent_agents.py",
    "03-workflows/orchestrations/sequential_custom_executors.py",
    "03-workflows/visualization/concurrent_with_visualization.py",
    "02-agents/tools/function_invocation_configuration.py",
    "02-agents/response_stream.py",
    "02-agents/tools/function_tool_with_approval.py",
    "03-workflows/composition/sub_workflow_request_interception.py",
    "01-get-started/05_functional_workflow_with_agents.py",
    "01-get-started/06_functional_workflow_basics.py",
    "03-workflows/functional/agent_integration.py",
    "03-workflows/functional/basic_pipeline.py",
    "03-workflows/functional/basic_streaming_pipeline.py",
    "03-workflows/functional/hitl_review.py",
    "03-workflows/functional/naive_group_chat.py",
    "03-workflows/functional/parallel_pipeline.py",
    "03-workflows/functional/steps_and_checkpointing.py",
    "02-agents/chat_client/custom_chat_client.py",
    "02-agents/providers/anthropic/anthropic_basic.py",
    "02-agents/context_providers/todo_provider.py",
    "02-agents/context_providers/file_memory_provider.py",
    "02-agents/context_providers/agent_mode_provider.py",
    "02-agents/middleware/agent_loop_middleware_todos.py",
    "02-agents/middleware/agent_loop_middleware_refinement.py",
    "02-agents/middleware/agent_loop_middleware_judge.py",
    "02-agents/middleware/agent_loop_middleware_report.py",
    "02-agents/middleware/message_injection_middleware.py",
    "02-agents/compaction/basics.py",
    "02-agents/compaction/custom.py",
    "02-agents/compaction/agent_client_overrides.py",
    "02-agents/compaction/compaction_provider.py",
    "02-agents/compaction/summarization.py",
    "02-agents/compaction/advanced.py",
    "02-agents/compaction/tiktoken_tokenizer.py",
    "02-agents/skills/file_based_skill/file_based_skill.py",
    "02-agents/skills/code_defined_skill/code_defined_skill.py",
    "02-agents/skills/class_based_skill/class_based_skill.py",
    "02-agents/skills/script_approval/script_approval.py",
    "02-agents/skills/skills_auto_approval/skills_auto_approval.py",
    "02-agents/skills/skill_filtering/skill_filtering.py",
    "02-agents/skills/mixed_skills/mixed_skills.py",
    "03-workflows/declarative/simple_workflow/main.py",
    "03-workflows/declarative/conditional_workflow/main.py",
    "03-workflows/declarative/human_in_loop/main.py",
    "03-workflows/declarative/invoke_function_tool/main.py",
    "03-workflows/declarative/function_tools/main.py",
    "02-agents/a2a/agent_with_a2a.py",
    "02-agents/a2a/a2a_protocol_selection.py",
    "02-agents/a2a/a2a_stream_reconnection.py",
    "02-agents/evaluation/evaluate_agent.py",
    "02-agents/evaluation/evaluate_multimodal.py",
    "02-agents/evaluation/evaluate_with_expected.py",
    "03-workflows/evaluation/evaluate_workflow.py",
    "03-workflows/tool-approval/sequential_builder_tool_approval.py",
    "03-workflows/tool-approval/concurrent_builder_tool_approval.py",
    "03-workflows/control-flow/simple_loop.py",
    "02-agents/harness/harness_research.py",
    "02-agents/harness/harness_data_processing.py",
    "02-agents/background_responses.py",
    "03-workflows/orchestrations/handoff_autonomous.py",
]

# Files the ported samples read or import (skill folders, a shared script runner): ported the same way (which
# leaves files without ``agent_framework`` imports byte-identical) and checked the same way, but not run alone.
SUPPORT: list[str] = [
    "02-agents/skills/subprocess_script_runner.py",
    "02-agents/skills/file_based_skill/skills/unit-converter/SKILL.md",
    "02-agents/skills/file_based_skill/skills/unit-converter/references/CONVERSION_TABLES.md",
    "02-agents/skills/file_based_skill/skills/unit-converter/scripts/convert.py",
    "02-agents/skills/mixed_skills/skills/unit-converter/SKILL.md",
    "02-agents/skills/mixed_skills/skills/unit-converter/references/CONVERSION_TABLES.md",
    "02-agents/skills/mixed_skills/skills/unit-converter/scripts/convert.py",
    "02-agents/skills/skill_filtering/skills/length-converter/SKILL.md",
    "02-agents/skills/skill_filtering/skills/length-converter/scripts/convert.py",
    "02-agents/skills/skill_filtering/skills/volume-converter/SKILL.md",
    "02-agents/skills/skill_filtering/skills/volume-converter/scripts/convert.py",
]

# Data files the ported samples read next to themselves (workflow definitions), copied unchanged.
DATA: list[str] = [
    "03-workflows/declarative/simple_workflow/workflow.yaml",
    "03-workflows/declarative/conditional_workflow/workflow.yaml",
    "03-workflows/declarative/human_in_loop/workflow.yaml",
    "03-workflows/declarative/invoke_function_tool/workflow.yaml",
    "03-workflows/declarative/function_tools/workflow.yaml",
    "02-agents/harness/working/sales.csv",
]

# Files of our own under ``samples/`` that stand in for a part of the reference the ports import but that
# cannot run here (an interactive terminal app): each path, and why it is a stand-in rather than a port.
# ``--check`` makes sure they exist and are not also listed as ported files.
STAND_INS: dict[str, str] = {
    "02-agents/harness/console/__init__.py": (
        "The harness samples run the reference's Textual console (about 30 files, interactive); this is a "
        "non-interactive stand-in with its entry points that reads the user's lines with input() and prints "
        "what the console's observers show."
    ),
}

_BUILD_REASON = (
    "The sample runs the @workflow definition itself; in the released API (core guide: functional workflow "
    "definition/build lifecycle) a definition has no run() and is built first, so the name is bound to the built "
    "workflow before main() runs it."
)
_STORAGE_REASON = (
    "The sample passes checkpoint_storage to @workflow; in the released API storage is caller state and goes to "
    "build(checkpoint_storage=...), so the decorator keeps no arguments and the storage moves to the build line."
)


def _build_before_main(*lines: str) -> tuple[str, str, str]:
    """Insert ``lines`` (one per definition) at module level just before ``async def main``."""
    block = "".join(f"{line}\n" for line in lines)
    return (r"^(async def main\(\)(?: -> None)?:)", block + "\n\n" + r"\1", _BUILD_REASON)


# Lifecycle edits per sample: (regex over the port, replacement, reason); each applies exactly once.
_OUTPUT_SHAPE_REASON = (
    "The sample reads the workflow's output as a list of messages, a shape the orchestrations no longer yield: "
    "the released builders yield the last participant's AgentResponseUpdate items when streamed (Sequential) and "
    "one AgentResponse from the default aggregator (Concurrent), and the reference fails this sample unchanged "
    "with TypeError ('... object is not iterable'). The one edited line reads the released shape."
)

LIFECYCLE: dict[str, list[tuple[str, str, str]]] = {
    "03-workflows/tool-approval/sequential_builder_tool_approval.py": [
        (
            r"^(\s+)outputs = cast\(list\[Message\], event\.data\)$",
            r"\1outputs = cast(list[Message], [event.data])",
            _OUTPUT_SHAPE_REASON,
        )
    ],
    "03-workflows/tool-approval/concurrent_builder_tool_approval.py": [
        (
            r"^(\s+)_print_output\(event\)$",
            r'\1_print_output(WorkflowEvent("output", event.data.messages))',
            _OUTPUT_SHAPE_REASON,
        )
    ],
    "01-get-started/05_functional_workflow_with_agents.py": [
        _build_before_main("poem_workflow = poem_workflow.build()")
    ],
    "01-get-started/06_functional_workflow_basics.py": [_build_before_main("text_workflow = text_workflow.build()")],
    "03-workflows/functional/agent_integration.py": [
        _build_before_main("simple_pipeline = simple_pipeline.build()", "cached_pipeline = cached_pipeline.build()")
    ],
    "03-workflows/functional/basic_pipeline.py": [_build_before_main("data_pipeline = data_pipeline.build()")],
    "03-workflows/functional/basic_streaming_pipeline.py": [
        _build_before_main("data_pipeline = data_pipeline.build()")
    ],
    "03-workflows/functional/hitl_review.py": [_build_before_main("review_pipeline = review_pipeline.build()")],
    "03-workflows/functional/naive_group_chat.py": [_build_before_main("group_chat = group_chat.build()")],
    "03-workflows/functional/parallel_pipeline.py": [
        _build_before_main("research_pipeline = research_pipeline.build()")
    ],
    "03-workflows/functional/steps_and_checkpointing.py": [
        (r"^@workflow\(checkpoint_storage=storage\)$", "@workflow", _STORAGE_REASON),
        _build_before_main("data_pipeline = data_pipeline.build(checkpoint_storage=storage)"),
    ],
}


def _rewrite_imports(line: str) -> str:
    for pattern, replacement in IMPORTS:
        if re.match(pattern, line):
            return re.sub(pattern, replacement, line, count=1)
    return line


def port(original: str) -> str:
    """The port of one original: its model client replaced, then its ``agent_framework`` imports rewritten."""
    text = original
    clients: list[str] = []
    others: list[str] = []  # the provider's other names (options, tokens): imported from agentnb's provider
    for match in _PROVIDER_IMPORT.finditer(original):
        names = [n.strip() for n in match.group("names").split(",")]
        provider = match.group(0).split()[1].rsplit(".", 1)[1]
        if provider != "openai" and any(not n.endswith("Client") for n in names):
            raise SystemExit(f"provider import with more than clients, port it by hand: {match.group(0)!r}")
        clients.extend(n for n in names if n.endswith("Client"))
        others.extend(f"from agentnb.openai import {n}\n" for n in names if not n.endswith("Client"))
    for name in clients:
        text = re.sub(rf"\b{name}{_CALL_ARGS}", "model()", text)
    # A client class still named after its calls are replaced (a type annotation) comes from the model's module.
    body = _PROVIDER_IMPORT.sub("", text)
    named = [name for name in clients if re.search(rf"(?::|->)\s*{name}\b", body)]
    own = "".join(others)
    text = _PROVIDER_IMPORT.sub(f"from parity_model import {', '.join(['model', *named])}\n{own}", text, count=1)
    text = _PROVIDER_IMPORT.sub("", text)
    text = _CREDENTIAL_IMPORT.sub("from parity_model import ", text)
    return "".join(_rewrite_imports(line) for line in text.splitlines(keepends=True))


def apply_lifecycle(rel: str, ported: str) -> tuple[str, list[dict[str, str]]]:
    """``ported`` with the sample's lifecycle edits, and the record of each (the lines it wrote, its reason)."""
    records: list[dict[str, str]] = []
    for pattern, replacement, reason in LIFECYCLE.get(rel, []):
        ported, count = re.subn(pattern, replacement, ported, count=1, flags=re.M)
        if count != 1:
            raise SystemExit(f"{rel}: lifecycle edit {pattern!r} matched nothing; port it by hand")
        written = re.sub(r"\\1", "", replacement).strip("\n")
        records.extend({"line": line, "reason": reason} for line in written.splitlines() if line.strip())
    return ported, records


def hunks(original: str, ported: str) -> list[dict[str, object]]:
    """The differing line ranges, as (start, end) in the port and the original's lines there."""
    a, b = original.splitlines(keepends=True), ported.splitlines(keepends=True)
    out: list[dict[str, object]] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if tag != "equal":
            out.append({"port": [j1, j2], "original": a[i1:i2]})
    return out


def restore(ported: str, changes: list[dict[str, object]]) -> str:
    """Undo :func:`port` with the recorded hunks (the inverse used by ``--check`` and the tests)."""
    lines = ported.splitlines(keepends=True)
    for change in reversed(changes):
        start, end = change["port"]  # type: ignore[misc]
        lines[start:end] = change["original"]  # type: ignore[assignment]
    return "".join(lines)


def sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _port_one(snapshot: Path, rel: str) -> dict[str, object]:
    original = (snapshot / "python" / "samples" / rel).read_text(encoding="utf-8")
    ported, lifecycle = apply_lifecycle(rel, port(original))
    target = PORTS / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(ported, encoding="utf-8")
    entry: dict[str, object] = {"sha256": sha256(original), "hunks": hunks(original, ported)}
    if lifecycle:
        entry["lifecycle"] = lifecycle
    return entry


def regenerate(snapshot: Path) -> None:
    manifest: dict[str, object] = {
        "reference": "microsoft/agent-framework",
        "tag": REFERENCE_TAG,
        "samples": {},
        "support": {},
    }
    for rel in [*SAMPLES, *SUPPORT]:
        samples: dict[str, object] = manifest["support" if rel in SUPPORT else "samples"]  # type: ignore[assignment]
        samples[rel] = _port_one(snapshot, rel)
    data: dict[str, str] = {}
    for rel in DATA:
        text = (snapshot / "python" / "samples" / rel).read_text(encoding="utf-8")
        (PORTS / rel).parent.mkdir(parents=True, exist_ok=True)
        (PORTS / rel).write_text(text, encoding="utf-8")
        data[rel] = sha256(text)
    manifest["data"] = data
    MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {len(SAMPLES)} ports, {len(SUPPORT)} support files, {len(DATA)} data files and {MANIFEST.name}")


def add(snapshot: Path, commit: str, rels: list[str]) -> None:
    """Port ``rels`` from a later snapshot (``commit``), keeping every other entry of the manifest as it is."""
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    for rel in rels:
        if rel not in SAMPLES:
            raise SystemExit(f"{rel} is not in SAMPLES; list it there first")
        manifest["samples"][rel] = {**_port_one(snapshot, rel), "source": commit}
    manifest["samples"] = {rel: manifest["samples"][rel] for rel in SAMPLES if rel in manifest["samples"]}
    MANIFEST.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    print(f"ported {len(rels)} samples from {commit}")


def _recorded_lines(rel: str) -> list[tuple[str, str]]:
    """The (reason, line) pairs the sample's lifecycle edits write."""
    out: list[tuple[str, str]] = []
    for _pattern, replacement, reason in LIFECYCLE.get(rel, []):
        written = re.sub(r"\\1", "", replacement).strip("\n")
        out.extend((reason, line) for line in written.splitlines() if line.strip())
    return out


def check() -> list[str]:
    """Problems with the committed ports (empty when each one restores to its original's hash)."""
    manifest = json.loads(MANIFEST.read_text(encoding="utf-8"))
    problems = []
    for rel, entry in [*manifest["samples"].items(), *manifest.get("support", {}).items()]:
        ported = (PORTS / rel).read_text(encoding="utf-8")
        if sha256(restore(ported, entry["hunks"])) != entry["sha256"]:
            problems.append(f"{rel}: does not restore to the original")
        recorded = {edit["line"] for edit in entry.get("lifecycle", [])}
        if recorded != {edit[1] for edit in _recorded_lines(rel)}:
            problems.append(f"{rel}: the manifest's lifecycle edits differ from LIFECYCLE; regenerate it")
        for change in entry["hunks"]:
            start, end = change["port"]
            for line in ported.splitlines()[start:end]:
                if line.strip() in recorded:
                    continue
                if not re.match(r"\s*(from \S+ import|import )|.*\bmodel\(", line) and line.strip():
                    problems.append(f"{rel}: changed line is neither an import nor the model client: {line!r}")
    for rel, digest in manifest.get("data", {}).items():
        if sha256((PORTS / rel).read_text(encoding="utf-8")) != digest:
            problems.append(f"{rel}: differs from the reference's file")
    if set(manifest.get("data", {})) != set(DATA):
        problems.append("manifest.json and DATA list different data files; run regenerate.py SNAPSHOT")
    for rel in STAND_INS:
        if not (PORTS / rel).is_file():
            problems.append(f"{rel}: the stand-in is missing")
        if rel in {*SAMPLES, *SUPPORT, *DATA}:
            problems.append(f"{rel}: listed both as a stand-in and as a file taken from the reference")
    if set(manifest["samples"]) != set(SAMPLES):
        problems.append("manifest.json and SAMPLES list different samples; run regenerate.py SNAPSHOT")
    if set(manifest.get("support", {})) != set(SUPPORT):
        problems.append("manifest.json and SUPPORT list different files; run regenerate.py SNAPSHOT")
    return problems


if __name__ == "__main__":
    if len(sys.argv) >= 5 and sys.argv[1] == "--add":
        add(Path(sys.argv[2]), sys.argv[3], sys.argv[4:])
        raise SystemExit(0)
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    if sys.argv[1] == "--check":
        found = check()
        print("\n".join(found) or "all ports match their originals")
        raise SystemExit(1 if found else 0)
    regenerate(Path(sys.argv[1]))
