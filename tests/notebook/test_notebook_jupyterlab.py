"""End to end: JupyterLab in headless Chromium runs a cell, a person clicks Approve, the answer shows.

Two cells that wait for approval: an ``%%agent`` cell, and a plain ``r = await agent.run(...)`` whose
response is displayed. Saves the screenshots the README shows (docs/notebook-approval.png,
docs/notebook-approved.png, docs/notebook-response-approval.png, docs/notebook-response-approved.png) when
AGENTNB_UPDATE_SCREENSHOTS is set.
"""

from __future__ import annotations

import json
import os
import queue
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

from tests.notebook.kernel_harness import REPO, kernel_env

pytestmark = [pytest.mark.browser, pytest.mark.kernel, pytest.mark.slow]

CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]

# The README's screenshots are refreshed on request (AGENTNB_UPDATE_SCREENSHOTS=1), as the DevUI tests do, so
# a test run leaves the work tree clean.
SHOTS = (
    REPO / "docs"
    if os.environ.get("AGENTNB_UPDATE_SCREENSHOTS")
    else Path(os.environ.get("TMPDIR", "/tmp")) / "agentnb-screenshots"
)
SETUP = [
    "%load_ext agentnb",
    '''from agentnb import Agent, tool
from agentnb.local import ToolCallingChatClient

@tool(approval_mode="always_require")
def delete_file(path: str) -> str:
    """Delete a file from the workspace."""
    return f"Deleted {path}."

ops = Agent(ToolCallingChatClient(), "You tidy up files.", name="ops", tools=[delete_file])''',
]
# (the cell that asks, the screenshot of the card waiting for a click, the one of the resumed run)
CASES = {
    "magic": ("%%agent ops\nPlease delete the old draft called Notes", "notebook-approval", "notebook-approved"),
    "response": (
        "session = ops.create_session()\n"
        "r = await ops.run('Please delete the old draft called Notes', session=session)\nr",
        "notebook-response-approval",
        "notebook-response-approved",
    ),
}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class JupyterLab:
    """A JupyterLab server on a free loopback port, with its own config, data and workspace folders."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.case = ""
        self.port = _free_port()
        self.token = secrets.token_hex(16)
        config = root / ".jupyter-config"
        (config / "labconfig").mkdir(parents=True)
        # No news or update checks: they would reach for the network and pop up over the notebook.
        (config / "labconfig" / "page_config.json").write_text(
            json.dumps(
                {
                    "disabledExtensions": {
                        "@jupyterlab/apputils-extension:announcements": True,
                        "@jupyterlab/lsp-extension": True,
                    }
                }
            )
        )
        # Start the notebook's kernel without asking (otherwise JupyterLab may show a kernel picker).
        tracker = root / ".settings" / "@jupyterlab" / "notebook-extension" / "tracker.jupyterlab-settings"
        tracker.parent.mkdir(parents=True)
        tracker.write_text(json.dumps({"autoStartDefaultKernel": True}))
        kernel_env()
        env = {
            **os.environ,
            "JUPYTER_CONFIG_DIR": str(config),
            "JUPYTERLAB_WORKSPACES_DIR": str(root / ".workspaces"),
            "JUPYTER_RUNTIME_DIR": str(root / ".runtime"),
        }
        self.log = root / "jupyterlab.log"
        self._log_file = self.log.open("wb")
        # Server extensions the test does not use are switched off: each costs seconds at start-up.
        unused = {"jupyter_lsp": False, "jupyter_server_terminals": False, "panel.io.jupyter_server_extension": False}
        command = [
            sys.executable, "-m", "jupyter", "lab", "--no-browser", f"--port={self.port}", "--ip=127.0.0.1",
            f"--IdentityProvider.token={self.token}", f"--ServerApp.root_dir={root}", "--ServerApp.port_retries=0",
            f"--ServerApp.jpserver_extensions={unused!r}",
            "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
            "--LabApp.expose_app_in_browser=True", f"--LabApp.user_settings_dir={root / '.settings'}",
        ]  # fmt: skip
        if os.geteuid() == 0:
            command.append("--allow-root")  # CI machines run as root
        self.proc = subprocess.Popen(
            command, cwd=root, env=env, stdout=self._log_file, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            self._wait_ready()
        except BaseException:
            self.stop()
            raise

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _wait_ready(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited early:\n{self.log.read_text(errors='replace')}")
            try:
                with urllib.request.urlopen(f"{self.url}/api/status?token={self.token}", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.3)
        raise TimeoutError(f"jupyter lab did not answer within {timeout} s:\n{self.log.read_text(errors='replace')}")

    def _api(self, path: str, body: dict[str, object] | None = None) -> dict[str, object]:
        request = urllib.request.Request(
            f"{self.url}{path}?token={self.token}",
            data=None if body is None else json.dumps(body).encode(),
            method="GET" if body is None else "POST",
            headers={"Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            return json.loads(response.read())

    def start_kernel_for(self, path: str, timeout: float = 90) -> None:
        """Start the notebook's session and wait until its kernel is idle.

        The page then attaches to a ready kernel: connecting while the server is still starting the kernel
        fails once (HTTP 500 on the channels socket), and the widget manager can miss the widgets' comms.
        """
        session = self._api(
            "/api/sessions", {"path": path, "name": path, "type": "notebook", "kernel": {"name": "python3"}}
        )
        kernel_id = session["kernel"]["id"]  # type: ignore[index]
        from jupyter_client import BlockingKernelClient

        connection_file = self.root / ".runtime" / f"kernel-{kernel_id}.json"
        deadline = time.monotonic() + timeout
        while not connection_file.exists():
            if time.monotonic() > deadline:
                raise TimeoutError(f"No connection file for kernel {kernel_id} after {timeout} s.")
            time.sleep(0.2)
        client = BlockingKernelClient(connection_file=str(connection_file))
        client.load_connection_file()
        client.start_channels()
        try:
            # kernel_info is answered once the kernel's shell is up (wait_for_ready needs a KernelManager).
            client.kernel_info()
            while True:
                try:
                    reply = client.get_shell_msg(timeout=max(0.5, deadline - time.monotonic()))
                except queue.Empty:
                    raise TimeoutError(f"Kernel {kernel_id} did not answer kernel_info within {timeout} s.") from None
                if reply["msg_type"] == "kernel_info_reply":
                    break
        finally:
            client.stop_channels()

    def stop(self) -> None:
        if self.proc.poll() is None:
            # The whole process group: the server and the kernels it started.
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self._log_file.close()


@pytest.fixture(params=sorted(CASES))
def lab(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[JupyterLab]:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.cells = [nbformat.v4.new_code_cell(source) for source in [*SETUP, CASES[request.param][0]]]
    nbformat.write(nb, tmp_path / "approval.ipynb")
    server = JupyterLab(tmp_path)
    server.case = request.param
    try:
        server.start_kernel_for("approval.ipynb")
        yield server
    finally:
        server.stop()


@pytest.mark.timeout(300)  # JupyterLab's front end alone takes tens of seconds to load on a busy 2-core machine
def test_approve_in_jupyterlab(lab: JupyterLab) -> None:
    from playwright.sync_api import expect, sync_playwright

    _cell, waiting_name, answered_name = CASES[lab.case]
    screenshot, answered = SHOTS / f"{waiting_name}.png", SHOTS / f"{answered_name}.png"

    executable = shutil.which("chromium")
    if executable is None:
        pytest.fail("Debian's chromium is not installed (apt-get install chromium); .ci/run installs it.")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            # Should JupyterLab still ask which kernel to use, accept its preselected choice (python3).
            page.add_locator_handler(
                page.locator(".jp-Dialog", has_text="Select Kernel"),
                lambda dialog: dialog.locator("button.jp-mod-accept").click(),
            )
            page.goto(f"{lab.url}/lab/tree/approval.ipynb?token={lab.token}")
            # Run every cell through JupyterLab's own command once the page has a live kernel connection. A
            # command fired too early is dropped silently, and on a busy machine JupyterLab sometimes swaps the
            # kernel under the first run; so run all cells again until the approval card shows (the cells are
            # safe to repeat: each run asks anew).
            page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=90_000)
            approve = page.locator(".jupyter-widgets button", has_text="Approve").last
            for attempt in range(4):
                expect(page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']")).to_be_visible(
                    timeout=60_000
                )
                page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")
                try:
                    expect(approve).to_be_visible(timeout=45_000)
                    break
                except AssertionError:
                    if attempt == 3:
                        raise
            card = page.locator(".jp-OutputArea-output", has_text="approval needed")
            expect(card.first).to_contain_text("delete_file")
            expect(card.first).to_contain_text("Notes")
            page.locator(".jupyter-widgets input[placeholder='Reason (optional)']").fill("Old draft, safe to remove")
            screenshot.parent.mkdir(parents=True, exist_ok=True)
            page.locator(".jp-NotebookPanel").screenshot(path=str(screenshot))
            approve.click()

            if lab.case == "response":
                # JupyterLab names its cells, so the meter line shows under the cell (headless runners omit it);
                # after the click it counts the continuation's model call too, not only the one before the card.
                expect(page.locator(".jp-OutputArea-output .anb-meter", has_text="2 model calls").first).to_be_visible(
                    timeout=30_000
                )
            answer = page.locator(".jp-OutputArea-output", has_text="Deleted Notes.")
            expect(answer.last).to_be_visible(timeout=30_000)
            expect(page.locator(".jupyter-widgets .anb-badge", has_text="done").first).to_be_visible(timeout=30_000)
            # Scroll the answer into view and keep the picture for the README.
            answer.last.scroll_into_view_if_needed()
            page.locator(".jp-NotebookPanel").screenshot(path=str(answered))
        except BaseException:
            page.screenshot(path=str(lab.root / "failure.png"))  # kept with the server log for debugging
            raise
        finally:
            browser.close()
    assert screenshot.stat().st_size > 10_000 and answered.stat().st_size > 10_000
