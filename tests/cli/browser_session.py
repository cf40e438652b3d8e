#!/usr/bin/env python3
"""browser_session.py BROWSER PROFILE KIND URL OUT [KIND URL OUT]... — pages in one Chromium.

One browser process (start-up is most of a page's cost) driven over the DevTools protocol on
a pipe (--remote-debugging-pipe: JSON messages ending in a NUL byte, commands on fd 3, replies
on fd 4; Python's standard library only). Each TASK opens its URL in a fresh tab, waits for
the load event (the page's script has run), then by KIND:
  dom    writes the doctype and document.documentElement.outerHTML to OUT (as --dump-dom
         prints them);
  shot   writes a PNG screenshot of the 1400x2000 viewport to OUT (as --screenshot with
         --window-size=1400,2000 takes it: the same pixels, the same default encoding).
The flags are those of a single headless run in tests/cli/report_browser.sh: no sandbox,
no GPU, the network features off, a profile of its own. Exit 0 when every task wrote its
file; 1 with one line naming the task and the browser's error otherwise; 2 on bad usage.
Every wait is bounded (180 s in all).
"""
import base64
import json
import os
import select
import subprocess
import sys
import time

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
         "--disable-component-update", "--disable-sync", "--no-first-run",
         "--disable-default-apps", "--hide-scrollbars", "--window-size=1400,2000",
         "--remote-debugging-pipe"]
DEADLINE = time.monotonic() + 180
# what --dump-dom prints: the doctype on a line of its own, then the document's HTML
DUMP_DOM = ("(document.doctype ? new XMLSerializer().serializeToString(document.doctype) + '\\n'"
            " : '') + document.documentElement.outerHTML")


class Browser:
    """One Chromium on a DevTools pipe: send commands, read replies and events."""

    def __init__(self, path, profile):
        cmd_r, self.cmd_w = os.pipe()
        self.rep_r, rep_w = os.pipe()

        def wire():  # the child's fd 3 reads our commands, fd 4 writes its replies
            a, b = os.dup(cmd_r), os.dup(rep_w)
            os.dup2(a, 3)
            os.dup2(b, 4)

        self.proc = subprocess.Popen([path, *FLAGS, f"--user-data-dir={profile}"],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=open(os.path.join(profile, "chrome.err"), "wb"),
                                     close_fds=False, preexec_fn=wire)
        os.close(cmd_r)
        os.close(rep_w)
        self.buf, self.next_id, self.events = b"", 0, []

    def _message(self):
        """The next message from the browser (bounded by the deadline)."""
        while b"\0" not in self.buf:
            left = DEADLINE - time.monotonic()
            if left <= 0 or not select.select([self.rep_r], [], [], left)[0]:
                raise RuntimeError("no reply from the browser within 180 s")
            chunk = os.read(self.rep_r, 1 << 20)
            if not chunk:
                raise RuntimeError("the browser closed its pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def call(self, method, session=None, **params):
        """Send one command; return its result (events that come first are kept)."""
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params}
        if session:
            msg["sessionId"] = session
        os.write(self.cmd_w, json.dumps(msg).encode() + b"\0")
        while True:
            m = self._message()
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error'].get('message')}")
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method, session):
        """Wait for an event of SESSION (one that came already counts)."""
        while True:
            for i, m in enumerate(self.events):
                if m.get("method") == method and m.get("sessionId") == session:
                    del self.events[i]
                    return m
            self.events.append(self._message())

    def close(self):
        try:
            self.call("Browser.close")
        except RuntimeError:
            pass
        try:
            self.proc.wait(timeout=max(1.0, DEADLINE - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def run_task(b, kind, url, out):
    """Open URL in a fresh tab, wait for its load, write the DOM or the screenshot to OUT."""
    target = b.call("Target.createTarget", url="about:blank")["targetId"]
    s = b.call("Target.attachToTarget", targetId=target, flatten=True)["sessionId"]
    b.call("Page.enable", s)
    if kind == "shot":  # the viewport itself 1400x2000, as the window of a --screenshot run
        b.call("Emulation.setDeviceMetricsOverride", s, width=1400, height=2000,
               deviceScaleFactor=1, mobile=False)
    nav = b.call("Page.navigate", s, url=url)
    if nav.get("errorText"):
        raise RuntimeError(f"navigate: {nav['errorText']}")
    b.wait_event("Page.loadEventFired", s)
    if kind == "dom":
        r = b.call("Runtime.evaluate", s, expression=DUMP_DOM, returnByValue=True)
        with open(out, "w", encoding="utf-8") as f:
            f.write(r["result"]["value"] + "\n")
    else:
        r = b.call("Page.captureScreenshot", s, format="png")
        with open(out, "wb") as f:
            f.write(base64.b64decode(r["data"]))
    b.call("Target.closeTarget", targetId=target)


def main(argv):
    tasks = [argv[i:i + 3] for i in range(3, len(argv), 3)]
    if len(argv) < 6 or any(len(t) != 3 or t[0] not in ("dom", "shot") for t in tasks):
        print("usage: browser_session.py BROWSER PROFILE {dom|shot} URL OUT...", file=sys.stderr)
        return 2
    b = Browser(argv[1], argv[2])
    try:
        for kind, url, out in tasks:
            try:
                run_task(b, kind, url, out)
            except (RuntimeError, KeyError, OSError) as e:
                print(f"browser_session: {kind} {url}: {e}")
                return 1
    finally:
        b.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
