"""Drive the distribution's Chromium headless over the DevTools protocol (tests, benchmark).

A page is opened with the network emulated offline; every console error, uncaught
exception, failed load and non-file:// request is collected, so a caller can assert the
report works from file:// alone.  Needs ``websocket-client`` (a test dependency).
"""

from __future__ import annotations

import base64
import json
import os
import re
import shutil
import subprocess
import tempfile
import time
import urllib.request

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome", "chrome")


def find_chromium():
    """Path of a Chromium binary, or None."""
    for n in CHROMIUM_NAMES:
        p = shutil.which(n)
        if p:
            return p
    return None


def why_no_browser():
    """None when a headless browser can be driven here, else the reason (for a skip)."""
    if find_chromium() is None:
        return "no Chromium found (apt-get install -y chromium chromium-driver)"
    try:
        import websocket  # noqa: F401
    except ImportError:
        return "websocket-client not installed (pip install websocket-client)"
    return None


class Browser:
    """One headless Chromium with one page; ``call`` sends a CDP command and waits."""

    def __init__(self, width=1600, height=1000):
        import websocket
        self.profile = tempfile.mkdtemp(prefix="lp-chromium-")
        self.proc = subprocess.Popen(
            [find_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
             "--disable-background-networking", "--disable-component-update", "--no-first-run",
             "--disable-extensions", "--disable-sync", "--hide-scrollbars", "--mute-audio",
             "--allow-file-access-from-files", f"--user-data-dir={self.profile}",
             "--remote-debugging-port=0", f"--window-size={width},{height}", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        port = None
        deadline = time.monotonic() + 30
        while port is None and time.monotonic() < deadline:
            line = self.proc.stderr.readline()
            if not line and self.proc.poll() is not None:
                raise RuntimeError("chromium exited before DevTools started")
            m = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
            if m:
                port = int(m.group(1))
        if port is None:
            self.close()
            raise RuntimeError("chromium did not start DevTools")
        pages = []
        while not pages and time.monotonic() < deadline:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list") as r:
                pages = [p for p in json.load(r) if p.get("type") == "page"]
        self.ws = websocket.create_connection(pages[0]["webSocketDebuggerUrl"], timeout=60,
                                              suppress_origin=True)
        self._id = 0
        self.events = []
        self.errors = []  # console errors, exceptions, failed loads
        self.requests = []  # every URL the page asked for
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable")
        self.call("Network.emulateNetworkConditions", offline=True, latency=0,
                  downloadThroughput=-1, uploadThroughput=-1)
        self.call("Emulation.setDeviceMetricsOverride", width=width, height=height,
                  deviceScaleFactor=1, mobile=False)

    def _note(self, msg):
        method, p = msg.get("method"), msg.get("params", {})
        if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            self.errors.append("console: " + " ".join(str(a.get("value", a.get("description")))
                                                    for a in p.get("args", [])))
        elif method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            self.errors.append("exception: " + str(d.get("exception", {}).get("description")
                                                   or d.get("text")))
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            e = p["entry"]
            self.errors.append(f"log: {e.get('text')} {e.get('url', '')}")
        elif method == "Network.requestWillBeSent":
            self.requests.append(p.get("request", {}).get("url", ""))
        elif method == "Network.loadingFailed":
            self.errors.append(f"load failed: {p.get('errorText')}")
        self.events.append(method)

    def call(self, method, **params):
        self._id += 1
        my = self._id
        self.ws.send(json.dumps({"id": my, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == my:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self._note(msg)

    def pump(self, seconds):
        """Read events for a while (lets loads and frames happen)."""
        end = time.monotonic() + seconds
        self.ws.settimeout(0.05)
        try:
            while time.monotonic() < end:
                try:
                    self._note(json.loads(self.ws.recv()))
                except Exception:
                    pass
        finally:
            self.ws.settimeout(60)

    def evaluate(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError(f"evaluate {expr!r}: {r['exceptionDetails']}")
        return r.get("result", {}).get("value")

    def open(self, path, ready="window.LP_firstPaint", timeout=60):
        """Navigate to a local file and wait until ``ready`` is truthy."""
        self.call("Page.navigate", url="file://" + os.path.abspath(path))
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                if self.evaluate(f"!!({ready})"):
                    return
            except RuntimeError:
                pass  # the page is between documents
            self.pump(0.05)
        raise TimeoutError(f"{path}: {ready} not reached in {timeout} s")

    def wait_frames(self, timeout=10):
        """Wait until no tile is loading and a frame was drawn after it."""
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            if self.evaluate("Object.keys(PENDING).length === 0 && !view.drawQueued"):
                self.evaluate("new Promise(r => requestAnimationFrame(() => r(1)))")
                return
            self.pump(0.02)
        raise TimeoutError("tiles still loading")

    def wheel(self, x, y, delta_y):
        self.call("Input.dispatchMouseEvent", type="mouseWheel", x=x, y=y, deltaX=0,
                  deltaY=delta_y)

    def key(self, key, code=None, modifiers=0):
        """Press and release ``key`` (``modifiers``: CDP's bits, Alt 1, Ctrl 2, Meta 4,
        Shift 8)."""
        for t in ("keyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", type=t, key=key, code=code or key,
                      modifiers=modifiers,
                      windowsVirtualKeyCode={"ArrowLeft": 37, "ArrowRight": 39, "ArrowUp": 38,
                                             "ArrowDown": 40, "0": 48}.get(key, 0))

    def drag(self, x0, y0, x1, y1, steps=5):
        self.call("Input.dispatchMouseEvent", type="mousePressed", x=x0, y=y0, button="left",
                  clickCount=1)
        for k in range(1, steps + 1):
            self.call("Input.dispatchMouseEvent", type="mouseMoved", x=x0 + (x1 - x0) * k / steps,
                      y=y0 + (y1 - y0) * k / steps, button="left")
        self.call("Input.dispatchMouseEvent", type="mouseReleased", x=x1, y=y1, button="left",
                  clickCount=1)

    def screenshot(self, out, clip=None):
        params = {"format": "png"}
        if clip:
            params["clip"] = dict(clip, scale=1)
        data = self.call("Page.captureScreenshot", **params)["data"]
        with open(out, "wb") as f:
            f.write(base64.b64decode(data))
        return out

    def close(self):
        try:
            self.ws.close()
        except Exception:
            pass
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
