"""Helpers for the DevUI browser tests: a real `panel serve devui` subprocess on a free port."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
# The README's screenshots are refreshed only on request, so a test run leaves the work tree clean.
DOCS = (
    REPO / "docs"
    if os.environ.get("AGENTNB_UPDATE_SCREENSHOTS")
    else Path(os.environ.get("TMPDIR", "/tmp")) / "agentnb-screenshots"
)
DOCS.mkdir(parents=True, exist_ok=True)
# The time budgets, with headroom for a shared CI machine (AGENTNB_BUDGET_SCALE=1 checks them exactly).
BUDGET_SCALE = float(os.environ.get("AGENTNB_BUDGET_SCALE", "4"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"panel serve exited early with status {proc.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"panel serve did not listen on port {port} within {timeout} s")


class DevUIServer:
    """A `panel serve devui` subprocess; always stopped by the fixture that made it."""

    def __init__(
        self,
        home: Path,
        *,
        args: list[str] | None = None,
        env: dict[str, str] | None = None,
        options: list[str] | None = None,
    ) -> None:
        self.port = free_port()
        self.home = home
        self.url = f"http://127.0.0.1:{self.port}/devui"
        full_env = {k: v for k, v in os.environ.items() if not k.startswith("OPENAI_")}
        full_env.update({"AGENTNB_HOME": str(home), "PYTHONPATH": str(REPO)})
        full_env.update(env or {})
        command = [
            sys.executable, "-m", "panel", "serve", "devui",
            "--port", str(self.port), "--address", "127.0.0.1",
            "--allow-websocket-origin", f"127.0.0.1:{self.port}",
        ]  # fmt: skip
        command += options or []  # more of panel serve's own options, e.g. --plugins
        if args:
            command += ["--args", *args]
        self.log = home / "panel.log"
        self._log_file = self.log.open("wb")
        self.proc = subprocess.Popen(
            command, cwd=REPO, env=full_env, stdout=self._log_file, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            wait_for_port(self.port, self.proc)
        except BaseException:
            self.stop()
            raise

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self._log_file.close()

    def output(self) -> str:
        return self.log.read_text(errors="replace")


class LauncherServer(DevUIServer):
    """A `python -m agentnb.devui` subprocess (the launcher: page plus API) on a free port."""

    def __init__(self, home: Path, *, args: list[str] | None = None, env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.home = home
        self.url = f"http://127.0.0.1:{self.port}/"
        full_env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "AGENTNB_DEVUI_"))}
        full_env.update({"AGENTNB_HOME": str(home), "PYTHONPATH": str(REPO)})
        full_env.update(env or {})
        command = [sys.executable, "-m", "agentnb.devui", "--port", str(self.port), *(args or [])]
        self.log = home / "launcher.log"
        self._log_file = self.log.open("wb")
        self.proc = subprocess.Popen(
            command, cwd=home, env=full_env, stdout=self._log_file, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            wait_for_port(self.port, self.proc)
        except BaseException:
            self.stop()
            raise


def is_local_url(url: str) -> bool:
    """Tell whether the browser may fetch ``url``: loopback and in-page schemes only."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    if parts.scheme in {"data", "blob", "about", "chrome", "chrome-extension"}:
        return True
    return parts.hostname in {"127.0.0.1", "localhost", "::1"}


WAIT = 45_000  # ms; generous because the test machine is shared and often busy

# Text of an element including its shadow roots (Panel components render inside them; innerText does not).
DEEP_TEXT = """
el => {
  const parts = [];
  const walk = n => {
    if (n.nodeType === 3) parts.push(n.textContent);
    if (n.shadowRoot) walk(n.shadowRoot);
    n.childNodes.forEach(walk);
  };
  walk(el);
  return parts.join(' ').replace(/\\s+/g, ' ');
}
"""


def text(locator: Any) -> str:
    return locator.evaluate(DEEP_TEXT)


def send_chat(page: Any, entity_name: str, message: str) -> None:
    """Type into the chat of ``entity_name`` and send; retried while a freshly shown view is still wiring up."""
    box = page.locator(f".anb-chat-input textarea[placeholder*='{entity_name}']")
    sent = page.locator(".anb-msg.anb-user", has_text=message)
    before = sent.count()
    for _attempt in range(3):
        box.fill(message)
        box.press("Enter")
        try:
            sent.nth(before).wait_for(timeout=8000)
            return
        except Exception:
            continue
    raise AssertionError(f"the chat with {entity_name} did not take the message {message!r}")


def refuse_outside(context: Any, outside: list[str], fetched: list[str] | None = None) -> None:
    """Abort every request of a browser context to a non-loopback address, recording it in ``outside``.

    ``fetched`` (when given) records every URL the pages asked for, local or not.
    """

    def guard(route: Any) -> None:
        url = route.request.url
        if fetched is not None:
            fetched.append(url)
        if is_local_url(url):
            route.continue_()
        else:
            outside.append(url)
            route.abort()

    context.route("**/*", guard)


def wait_for_dark_theme(page: Any) -> None:
    """Wait for the page's one reload into ``?theme=dark`` (the DevUI follows a browser that prefers dark).

    The reload can start while the first page is still loading; Playwright reports that aborted navigation as
    an error of the wait itself, so the wait starts again until the dark page has loaded.
    """
    from playwright.sync_api import Error as PlaywrightError

    deadline = time.monotonic() + WAIT / 1000
    while True:
        try:
            page.wait_for_url("**theme=dark**", timeout=WAIT)
            return
        except PlaywrightError as exc:
            if "ERR_ABORTED" not in str(exc) or time.monotonic() > deadline:
                raise


@contextmanager
def dark_page(browser: Any, url: str) -> Iterator[Any]:
    """A page of ``url`` in a browser whose system theme is dark (the DevUI follows it), closed afterwards."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000}, color_scheme="dark")
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    try:
        page.goto(url)
        wait_for_dark_theme(page)
        page.get_by_text("agentnb DevUI").first.wait_for(timeout=WAIT)
        yield page
    finally:
        context.close()
    assert not errors, f"JavaScript errors on the page: {errors}"
