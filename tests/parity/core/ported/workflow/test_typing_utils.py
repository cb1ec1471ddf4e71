# Copyright (c) Microsoft. All rights reserved.

from dataclasses import dataclass
from typing import Any, Generic, Optional, TypeVar, Union

import pytest

from agentnb import WorkflowEvent

# region: normalize_type_to_list tests














# endregion: normalize_type_to_list tests


# region: resolve_type_annotation tests


















# endregion: resolve_type_annotation tests










































# region: try_coerce_to_type tests
















# endregion: try_coerce_to_type tests
