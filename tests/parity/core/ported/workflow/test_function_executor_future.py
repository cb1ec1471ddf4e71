# Copyright (c) Microsoft. All rights reserved.

from __future__ import annotations

from typing import Any

import pytest

from agentnb import WorkflowContext, executor
from agentnb.workflows import FunctionExecutor


class TestFunctionExecutorFutureAnnotations:
    """Test suite for FunctionExecutor with from __future__ import annotations."""



    def test_handler_unresolvable_annotation_raises(self):
        """Test that an unresolvable forward-reference annotation raises ValueError.

        When get_type_hints fails (e.g. NameError for NonExistentType), the code falls back
        to raw string annotations. The ctx parameter's raw string annotation is then not
        recognised as a valid WorkflowContext type, so a ValueError is still raised.
        """
        with pytest.raises(ValueError):
            FunctionExecutor(
                _func_with_bad_annotation,  # pyright: ignore[reportUnknownArgumentType]
                id="bad",
            )


async def _func_with_bad_annotation(message: NonExistentType, ctx: WorkflowContext[int]) -> None:  # type: ignore[name-defined]  # ty: ignore[unresolved-reference]  # noqa: F821
    pass
