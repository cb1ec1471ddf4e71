"""Re-run one executor from the WorkflowView, in a real Jupyter kernel (nbclient), driven as a browser would."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator

import pytest

from tests.notebook.kernel_harness import KernelSession, text

pytestmark = pytest.mark.kernel

DEFINE = """
%load_ext agentnb
from agentnb.notebook import WorkflowView
from agentnb.workflows import WorkflowBuilder, WorkflowContext, executor

@executor(id="upper")
async def upper(text: str, ctx: WorkflowContext[str]) -> None:
    await ctx.send_message(text.upper())

@executor(id="exclaim")
async def exclaim(text: str, ctx: WorkflowContext[str, str]) -> None:
    await ctx.yield_output(text + "!")

view = WorkflowView(WorkflowBuilder(start_executor=upper, name="shout").add_edge(upper, exclaim).build())
view.run("hello")
"""


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[KernelSession]:
    session = KernelSession(tmp_path_factory.mktemp("rerun"))
    try:
        session.run(DEFINE)
        session.run("await view.wait()")
        yield session
    finally:
        session.close()


def _send(kernel: KernelSession, widget: str, data: dict[str, object]) -> None:
    """Send a widget message the way JupyterLab does (a comm message to the widget's model)."""
    [model_id] = text(kernel.run(f"print({widget}.model_id)")).split()
    kc = kernel.client.kc
    kc.shell_channel.send(kc.session.msg("comm_msg", {"comm_id": model_id, "data": data}))


def _click(kernel: KernelSession, widget: str) -> None:
    _send(kernel, widget, {"method": "custom", "content": {"event": "click"}})


def _type(kernel: KernelSession, widget: str, value: str) -> None:
    _send(kernel, widget, {"method": "update", "state": {"value": value}, "buffer_paths": []})


def _eval(kernel: KernelSession, expression: str) -> str:
    return text(kernel.run(f"print({expression})")).strip()


def _wait_for(kernel: KernelSession, condition: str, timeout: float = 20) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if _eval(kernel, f"bool({condition})") == "True":
            return
        time.sleep(0.2)
    raise AssertionError(f"{condition} stayed false for {timeout} s")


def test_clicking_rerun_beside_the_slider_shows_the_diff(kernel: KernelSession) -> None:
    assert _eval(kernel, "view.status, view.outputs") == "completed ['HELLO!']"
    kernel.run("n_checkpoints = len(await view.storage.list_checkpoints())")
    _send(kernel, "view.slider", {"method": "update", "state": {"value": 1}, "buffer_paths": []})
    _wait_for(kernel, "view.selected is not None and view.selected.step == 1")
    _wait_for(kernel, "view.rerun_executor.value == 'exclaim'")
    assert _eval(kernel, "view.rerun_input.value") == '"HELLO"'

    _click(kernel, "view.rerun_button")
    _wait_for(kernel, "view.rerun_result is not None")
    assert _eval(kernel, "view.rerun_result.is_unchanged") == "True"
    assert "same as the original" in _eval(kernel, "view.rerun_html.value")

    # Edit the input in the text box (as the browser syncs it), then click again.
    _type(kernel, "view.rerun_input", json.dumps("<b>bye</b>"))
    _wait_for(kernel, "view.rerun_input.value != view._rerun_prefill")
    _click(kernel, "view.rerun_button")
    _wait_for(kernel, "view.rerun_result is not None and view.rerun_result.edited")
    assert _eval(kernel, "view.rerun_result.outputs") == "['<b>bye</b>!']"
    shown = _eval(kernel, "view.rerun_html.value")
    assert "&lt;b&gt;bye&lt;/b&gt;!" in shown and "<b>bye" not in shown and "anb-rerun-changed" in shown
    assert _eval(kernel, "len(await view.storage.list_checkpoints()) == n_checkpoints") == "True"

    # A wrong type is refused with the executor's types; the result of the last good re-run is cleared.
    _type(kernel, "view.rerun_input", "[1, 2]")
    _wait_for(kernel, "view.rerun_input.value == '[1, 2]'")
    _click(kernel, "view.rerun_button")
    _wait_for(kernel, "view.rerun_result is None")
    refused = _eval(kernel, "view.rerun_html.value")
    assert "ExecutorInputError" in refused and "takes str" in refused


def test_choosing_another_executor_and_continuing_from_its_output(kernel: KernelSession) -> None:
    _send(kernel, "view.slider", {"method": "update", "state": {"value": 0}, "buffer_paths": []})
    _wait_for(kernel, "view.selected is not None and view.selected.step == 0")
    _wait_for(kernel, "view.rerun_executor.value == 'upper'")
    _send(kernel, "view.rerun_executor", {"method": "update", "state": {"index": 1}, "buffer_paths": []})
    _wait_for(kernel, "view.rerun_executor.value == 'exclaim'")
    assert _eval(kernel, "repr(view.rerun_input.value)") == "''"  # exclaim receives nothing at step 0
    _send(kernel, "view.rerun_executor", {"method": "update", "state": {"index": 0}, "buffer_paths": []})
    _wait_for(kernel, "view.rerun_executor.value == 'upper'")
    _type(kernel, "view.rerun_input", '"again"')
    _wait_for(kernel, "view.rerun_input.value == '\"again\"'")
    _click(kernel, "view.rerun_button")
    _wait_for(kernel, "view.rerun_result is not None and view.rerun_result.edited")
    assert _eval(kernel, "view.rerun_result.sent_by_edge()") == "{'upper → exclaim': ['AGAIN']}"
    _click(kernel, "view.continue_button")
    _wait_for(kernel, "view.outputs == ['HELLO!', 'AGAIN!'] and view.status == 'completed'")
