"""The reference's feature-stage ids: which of its APIs it ships as experimental or release candidates.

agentnb marks none of its APIs with a stage (no ``__feature_stage__`` attribute, no stage warnings): what it
exports is supported. The enums exist so that code written for the reference that names a feature id, for
example to filter the reference's stage warnings, imports and runs unchanged.
"""

from __future__ import annotations

from enum import Enum

__all__ = ["ExperimentalFeature", "ReleaseCandidateFeature"]


class ExperimentalFeature(str, Enum):
    """The feature ids the reference marks experimental (a stage inventory; members come and go).

    Example:
        >>> ExperimentalFeature.SESSION_STORE.value
        'SESSION_STORE'
    """

    AGENT_HOOKS = "AGENT_HOOKS"
    COMPUTER_USE = "COMPUTER_USE"
    DECLARATIVE_AGENTS = "DECLARATIVE_AGENTS"
    EVALS = "EVALS"
    FILE_HISTORY = "FILE_HISTORY"
    FIDES = "FIDES"
    FOUNDRY_TOOLS = "FOUNDRY_TOOLS"
    FOUNDRY_PREVIEW_TOOLS = "FOUNDRY_PREVIEW_TOOLS"
    FUNCTIONAL_WORKFLOWS = "FUNCTIONAL_WORKFLOWS"
    HARNESS = "HARNESS"
    MCP_SKILLS = "MCP_SKILLS"
    PROGRESSIVE_TOOLS = "PROGRESSIVE_TOOLS"
    SESSION_STORE = "SESSION_STORE"
    TO_PROMPT_AGENT = "TO_PROMPT_AGENT"
    VECTOR_STORES = "VECTOR_STORES"


class ReleaseCandidateFeature(str, Enum):
    """The feature ids the reference marks release candidates (none at present, as in the reference)."""
