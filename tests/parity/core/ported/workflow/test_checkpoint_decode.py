# Copyright (c) Microsoft. All rights reserved.

from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any, cast

import pytest

from agentnb.exceptions import WorkflowCheckpointException


@dataclass
class SampleRequest:
    """Sample request message for testing checkpoint encoding/decoding."""

    request_id: str
    prompt: str


@dataclass
class SampleResponse:
    """Sample response message for testing checkpoint encoding/decoding."""

    data: str
    original_request: SampleRequest
    request_id: str


# --- Tests for round-trip encode/decode ---














# --- Tests for decode primitives ---








# --- Tests for decode collections ---






# --- Tests for type verification ---




class NotADataclass:  # noqa: B903
    """A regular class that is not a dataclass."""

    def __init__(self, value: str) -> None:
        self.value = value










