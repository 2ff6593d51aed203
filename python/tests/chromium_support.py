"""Headless Chromium driven over the DevTools protocol on a pipe (no network port, no extra
package): open a page, collect console errors, failed requests and the images' load state,
take a screenshot.

Chromium started with `--remote-debugging-pipe` reads protocol messages from its fd 3 and
writes to its fd 4, each a JSON object ended by a NUL byte. Debian's `/usr/bin/chromium` is a
shell script that execs the browser, which keeps both descriptors.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

CANDIDATES = ("/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome")

# Every image decoded with a size, as [complete, naturalWidth, naturalHeight] per image.
_IMAGES_JS = (
    "JSON.stringify(Array.from(document.images).map(i => [i.complete, i.naturalWidth, "
    "i.naturalHeight]))"
)


def find_chromium() -> str | None:
    given = os.environ.get("AQMLAB_CHROMIUM")
    for name in (given, *CANDIDATES) if given else CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


@dataclass
class PageReport:
    """What loading a page produced."""

    images: list[list[Any]] = field(default_factory=list)  # [complete, width, height]
    console_errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)  # every URL the page asked for
    failed_requests: list[str] = field(default_factory=list)
    screenshot_png: bytes = b""


class Chromium:
    """One headless browser; `open(path)` loads a file and reports on it."""

    def __init__(self, binary: str, timeout_s: float = 60.0) -> None:
        self.timeout_s = timeout_s
        self._profile = tempfile.TemporaryDirectory(prefix="aqmlab-chromium-")
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()
        # Copies at 10 and above, so that placing them at 3 and 4 in the child cannot
        # overwrite one with the other. Every descriptor Python opens is close-on-exec, so the
        # browser inherits only these two (dup2 clears the flag on its copies).
        a = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD_CLOEXEC, 10)
        b = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(to_browser_r)
        os.close(from_browser_w)

        def pipes_at_3_and_4() -> None:
            os.dup2(a, 3)
            os.dup2(b, 4)

        args = [
            binary,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--no-default-browser-check",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--hide-scrollbars",
            "--remote-debugging-pipe",
            f"--user-data-dir={self._profile.name}",
            "about:blank",
        ]
        self._proc = subprocess.Popen(
            args,
            preexec_fn=pipes_at_3_and_4,
            close_fds=False,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        os.close(a)
        os.close(b)
        self._buffer = b""
        self._next_id = 0
        self._events: list[dict[str, Any]] = []

    # -- protocol ---------------------------------------------------------------------------
    def _read_message(self, deadline: float) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._from_browser], [], [], left)[0]:
                raise TimeoutError(f"no answer from Chromium in {self.timeout_s:g} s")
            chunk = os.read(self._from_browser, 1 << 16)
            if not chunk:
                raise RuntimeError(f"Chromium closed the pipe (exit {self._proc.poll()})")
            self._buffer += chunk
        raw, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(raw)

    def send(self, method: str, params: dict | None = None, session: str | None = None) -> dict:
        """Sends a command, returns its result; events arriving meanwhile are kept."""
        self._next_id += 1
        msg: dict[str, Any] = {"id": self._next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self._to_browser, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout_s
        while True:
            reply = self._read_message(deadline)
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self._events.append(reply)

    def wait_event(self, method: str, session: str) -> dict:
        deadline = time.monotonic() + self.timeout_s
        seen = 0
        while True:
            for e in self._events[seen:]:
                if e.get("method") == method and e.get("sessionId") == session:
                    return e
            seen = len(self._events)
            self._events.append(self._read_message(deadline))

    # -- pages ------------------------------------------------------------------------------
    def open(self, path: Path, width: int = 1280, height: int = 900) -> PageReport:
        """Loads `path` in a new tab of `width`×`height` CSS pixels, waits for the load event,
        and reports images, console errors, requests and a viewport screenshot."""
        target = self.send("Target.createTarget", {"url": "about:blank"})["targetId"]
        session = self.send("Target.attachToTarget", {"targetId": target, "flatten": True})[
            "sessionId"
        ]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.send(f"{domain}.enable", session=session)
        self.send(
            "Emulation.setDeviceMetricsOverride",
            {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False},
            session=session,
        )
        start = len(self._events)
        self.send("Page.navigate", {"url": path.resolve().as_uri()}, session=session)
        self.wait_event("Page.loadEventFired", session)
        images = self.send(
            "Runtime.evaluate", {"expression": _IMAGES_JS, "returnByValue": True}, session=session
        )["result"]["value"]
        shot = self.send("Page.captureScreenshot", {"format": "png"}, session=session)
        report = PageReport(
            images=json.loads(images), screenshot_png=base64.b64decode(shot["data"])
        )
        for e in self._events[start:]:
            if e.get("sessionId") != session:
                continue
            _classify(e, report)
        self.send("Target.closeTarget", {"targetId": target})
        return report

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.send("Browser.close")
        for fd in (self._to_browser, self._from_browser):
            with contextlib.suppress(OSError):
                os.close(fd)
        try:
            self._proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._profile.cleanup()


def _classify(event: dict[str, Any], report: PageReport) -> None:
    method, params = event.get("method"), event.get("params", {})
    if method == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
        report.console_errors.append(" ".join(str(a.get("value")) for a in params["args"]))
    elif method == "Runtime.exceptionThrown":
        report.console_errors.append(params["exceptionDetails"].get("text", "exception"))
    elif method == "Log.entryAdded" and params["entry"].get("level") == "error":
        report.console_errors.append(params["entry"].get("text", ""))
    elif method == "Network.requestWillBeSent":
        report.requests.append(params["request"]["url"])
    elif method == "Network.loadingFailed":
        report.failed_requests.append(params.get("errorText", "failed"))


def png_size(data: bytes) -> tuple[int, int]:
    """Width and height from a PNG's IHDR chunk."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
