"""The collector pause: reentrant, shared by threads, and back to how it was after the last one leaves."""

from __future__ import annotations

import gc
import threading

from agentnb._gc import gc_paused


def test_nested_pauses_turn_the_collector_back_on_only_after_the_outer_one() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_pause_leaves_a_collector_that_was_off_off() -> None:
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_an_exception_inside_still_turns_the_collector_back_on() -> None:
    try:
        with gc_paused():
            raise ValueError("boom")
    except ValueError:
        pass
    assert gc.isenabled()


def test_threads_pausing_at_once_leave_the_collector_on() -> None:
    inside = threading.Barrier(4)

    def work() -> None:
        with gc_paused():
            inside.wait(timeout=10)
            assert not gc.isenabled()

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=10)
    assert gc.isenabled()
