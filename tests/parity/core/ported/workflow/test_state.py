# Copyright (c) Microsoft. All rights reserved.

"""Unit tests for the State class superstep caching behavior."""

import pytest



class TestStateBasicOperations:
    """Tests for basic State get/set/has/delete operations."""









class TestSuperstepCaching:
    """Tests for superstep caching semantics - pending vs committed state."""







class TestDeleteWithSuperstepCaching:
    """Tests for delete behavior with superstep caching."""







class TestFailureScenarios:
    """Tests simulating failure scenarios - pending changes should not leak to committed."""





class TestExportImport:
    """Tests for state serialization (export/import)."""



