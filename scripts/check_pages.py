#!/usr/bin/env python3
"""Render every page of the built book in headless Chromium and fail on what a reader would see.

    .venv/bin/python scripts/check_pages.py [--html _build/html] [--out _build/pages] [PAGE ...]

Each content page of ``_build/html`` (or only the pages whose path contains one of the PAGE
strings) is loaded in Debian's ``chromium`` (``apt-get install -y chromium``) at a 1280 px wide
window, with every request to the network blocked, so formulas render only if MathJax is served by
the built book. After MathJax has typeset the page, :data:`repro.bookcheck.PAGE_PROBE` measures, in
the article column:

* ``overflow``: an element that reaches beyond the right edge of the column;
* ``scroll``: an element whose content is wider than its box (a code line, an output line, a
  table or an equation that the reader has to scroll or does not see; a formula counts with its
  MathJax box, not with the few pixels its glyphs reach past it);
* ``shrunk-image``: an image shown below its natural width, with the size at which text drawn at
  9 pt appears;
* ``raw-tex``: a ``$`` or a TeX command left in the rendered text;
* ``tex-error``: a formula MathJax could not typeset (its error message in place of the formula);
* ``code-box``: the code and output boxes do not hold 80 monospace characters at 9 pt or more
  (``book/_static/dpdro.css`` makes them);
* ``empty-cell``: a table cell that shows nothing (no text, or text in an icon font);
* ``network``: a request the page tried to send to the network.

A screenshot of every page is written to ``OUT/<page>.png`` (the whole page, 1280 px wide) for a
person to look at. Prints one line per violation and a count per page; exits 1 if there is any.
The browser is driven over the DevTools protocol (``websocket-client``); nothing else is needed.
"""

from __future__ import annotations

import argparse
import base64
import collections
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import websocket

from repro.bookcheck import PAGE_PROBE, Violation, content_pages
from repro.paths import ROOT

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--hide-scrollbars",
    "--remote-debugging-port=0",
]
WINDOW = (1280, 900)
MAX_SHOT_PX = 30000  # Chromium's limit on the height of one capture


class Browser:
    """One headless Chromium with one page, driven over a flattened DevTools session."""

    def __init__(self, exe: str, profile: Path, timeout: float = 60.0):
        self.proc = subprocess.Popen(
            [exe, *FLAGS, f"--user-data-dir={profile}", "about:blank"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            self._connect(profile, timeout)
        except BaseException:
            self.proc.kill()
            self.proc.wait()
            raise

    def _connect(self, profile: Path, timeout: float) -> None:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + timeout
        while not port_file.exists() or len(port_file.read_text().split()) < 2:
            if time.monotonic() > deadline or self.proc.poll() is not None:
                raise RuntimeError("chromium did not start (is the chromium package installed?)")
            time.sleep(0.1)
        port, path = port_file.read_text().split()[:2]
        self.ws = websocket.create_connection(
            f"ws://127.0.0.1:{port}{path}", timeout=timeout, suppress_origin=True
        )
        self.next_id = 0
        self.events: list[dict] = []
        target = self.call("Target.createTarget", url="about:blank")["targetId"]
        self.session = self.call("Target.attachToTarget", targetId=target, flatten=True)[
            "sessionId"
        ]
        for method in ("Page.enable", "Network.enable", "Runtime.enable"):
            self.call(method, session=True)
        self.call("Network.setBlockedURLs", session=True, urls=["http://*", "https://*", "ws*://*"])
        self.call(
            "Emulation.setDeviceMetricsOverride",
            session=True,
            width=WINDOW[0],
            height=WINDOW[1],
            deviceScaleFactor=1,
            mobile=False,
        )

    def call(self, method: str, session: bool = False, **params):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = self.session
        self.ws.send(json.dumps(msg))
        while True:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method: str, timeout: float = 60.0) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            for k, e in enumerate(self.events):
                if e.get("method") == method:
                    return self.events.pop(k)
            self.events.append(json.loads(self.ws.recv()))
        raise TimeoutError(method)

    def open(self, url: str) -> list[str]:
        """Load ``url``; return the network requests that were blocked."""
        self.events.clear()
        self.call("Page.navigate", session=True, url=url)
        self.wait_for("Page.loadEventFired")
        blocked = [
            e
            for e in self.events
            if e.get("method") == "Network.loadingFailed" and e["params"].get("blockedReason")
        ]
        requests = {
            e["params"]["requestId"]: e["params"]["request"]["url"]
            for e in self.events
            if e.get("method") == "Network.requestWillBeSent"
        }
        return [requests.get(e["params"]["requestId"], "?") for e in blocked]

    def evaluate(self, expression: str):
        r = self.call(
            "Runtime.evaluate",
            session=True,
            expression=expression,
            awaitPromise=True,
            returnByValue=True,
            timeout=120000,
        )
        if "exceptionDetails" in r:
            raise RuntimeError(r["exceptionDetails"].get("text", "page script failed"))
        return r["result"].get("value")

    def screenshot(self, path: Path) -> None:
        height = self.call("Page.getLayoutMetrics", session=True)["cssContentSize"]["height"]
        clip = dict(x=0, y=0, width=WINDOW[0], height=min(int(height) + 1, MAX_SHOT_PX), scale=1)
        data = self.call(
            "Page.captureScreenshot",
            session=True,
            format="png",
            captureBeyondViewport=True,
            clip=clip,
        )["data"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(base64.b64decode(data))

    def close(self) -> None:
        try:
            self.ws.close()
        finally:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def check_pages(html: Path, out: Path | None, only: list[str], exe: str) -> list[Violation]:
    pages = [p for p in content_pages(html) if not only or any(s in str(p) for s in only)]
    found: list[Violation] = []
    with tempfile.TemporaryDirectory(
        prefix="dpdro-chromium-", ignore_cleanup_errors=True
    ) as profile:
        browser = Browser(exe, Path(profile))
        try:
            for page in pages:
                rel = page.relative_to(html).as_posix()
                blocked = browser.open(page.resolve().as_uri())
                found += [Violation(rel, "network", url) for url in blocked]
                for v in browser.evaluate(PAGE_PROBE):
                    # a slice of MathJax text may cut a surrogate pair
                    detail = v["detail"].encode("utf-8", "replace").decode("utf-8")
                    found.append(Violation(rel, v["kind"], detail))
                if out is not None:
                    browser.screenshot(out / rel.replace("/", "__").replace(".html", ".png"))
        finally:
            browser.close()
    return found


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument(
        "pages", nargs="*", help="check only the pages whose path contains one of these"
    )
    ap.add_argument("--html", default=str(ROOT / "_build" / "html"))
    ap.add_argument(
        "--out", default=str(ROOT / "_build" / "pages"), help="folder for the screenshots"
    )
    ap.add_argument("--no-screenshots", action="store_true")
    ap.add_argument(
        "--chromium", default=shutil.which("chromium") or shutil.which("chromium-browser")
    )
    args = ap.parse_args(argv)
    html = Path(args.html)
    if not (html / "index.html").exists():
        print(f"no built book at {html} (python3 tasks.py book)", file=sys.stderr)
        return 2
    if not args.chromium:
        print("chromium not found (apt-get install -y chromium)", file=sys.stderr)
        return 2
    found = check_pages(
        html, None if args.no_screenshots else Path(args.out), args.pages, args.chromium
    )
    for v in found:
        print(v)
    counts = collections.Counter((v.where, v.kind) for v in found)
    for (where, kind), n in sorted(counts.items()):
        print(f"{n:5d}  {kind:14s} {where}")
    print(
        f"{len(found)} violations" + ("" if args.no_screenshots else f"; screenshots in {args.out}")
    )
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
