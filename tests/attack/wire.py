"""Drives the real `tether serve` over raw stdio lines, so a test can send bytes no MCP client
library would produce and check that every request still gets its answer. The fixtures live
here rather than in a conftest.py, so this suite and tests/mcp can run in one pytest call."""

import json
import os
import pathlib
import subprocess
import tempfile
import threading
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TETHER = os.environ.get("TETHER_BIN", str(ROOT / "target" / "debug" / "tether"))


class RawServer:
    """One `tether serve` process; stdout lines are collected by a thread, as parsed JSON."""

    def __init__(self, root):
        self.root = pathlib.Path(root)
        cfg = self.root.parent / (self.root.name + "-cfg")
        state = self.root.parent / (self.root.name + "-state")
        self.stderr = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(
            [TETHER, "serve", "--root", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env={
                "TETHER_CONFIG_DIR": str(cfg),
                "TETHER_STATE_DIR": str(state),
                "PATH": os.environ.get("PATH", ""),
            },
        )
        self.replies = []
        self.garbled = []
        self.batches = []
        self.cond = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for raw in self.proc.stdout:
            try:
                msg = json.loads(raw)
            except ValueError:
                msg = None
            with self.cond:
                if isinstance(msg, dict):
                    self.replies.append(msg)
                elif isinstance(msg, list):
                    self.batches.append(msg)
                    self.replies.extend(m for m in msg if isinstance(m, dict))
                else:
                    self.garbled.append(raw)
                self.cond.notify_all()
        with self.cond:
            self.cond.notify_all()

    def send_raw(self, data):
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, *messages):
        """Writes the messages back-to-back in one write, without waiting for any reply."""
        self.send_raw(b"".join(json.dumps(m).encode() + b"\n" for m in messages))

    def request(self, id, method, params=None):
        msg = {"jsonrpc": "2.0", "id": id, "method": method}
        if params is not None:
            msg["params"] = params
        return msg

    def call(self, id, tool, args):
        return self.request(id, "tools/call", {"name": tool, "arguments": args})

    def reply(self, id, timeout=20):
        """The reply whose id is `id`; fails with what did arrive when none comes in time."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for msg in self.replies:
                    if "method" not in msg and msg.get("id") == id and type(msg.get("id")) is type(id):
                        return msg
                left = deadline - time.monotonic()
                if left <= 0 or (self.proc.poll() is not None and not self.reader.is_alive()):
                    raise AssertionError(
                        f"no reply with id {id!r} within {timeout} s; exit code "
                        f"{self.proc.poll()}; last replies: {self.last_replies()}; "
                        f"stderr: {self.stderr_tail()}"
                    )
                self.cond.wait(min(left, 0.5))

    def last_replies(self, n=5):
        return [json.dumps(r)[:300] for r in self.replies[-n:]]

    def stderr_tail(self):
        self.stderr.seek(0)
        return self.stderr.read()[-2000:].decode(errors="replace")

    def initialize(self):
        self.send(
            self.request(
                "init",
                "initialize",
                {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "attack", "version": "0"},
                },
            )
        )
        assert "result" in self.reply("init"), self.last_replies()
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def assert_alive(self, tag):
        """A ping still gets its answer."""
        self.send(self.request(f"ping-{tag}", "ping"))
        assert self.reply(f"ping-{tag}").get("result") == {}, f"server stopped answering after {tag}"

    def close(self):
        if self.proc.stdin and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
        self.reader.join(timeout=5)
        self.stderr.close()


def tool_text(reply):
    """All text of a tools/call result."""
    return "\n".join(c.get("text", "") for c in reply["result"]["content"])


@pytest.fixture
def workspace():
    """A fresh, empty workspace root."""
    with tempfile.TemporaryDirectory() as outer:
        root = pathlib.Path(outer) / "ws"
        root.mkdir()
        yield root


@pytest.fixture
def server(workspace):
    """A raw `tether serve` over `workspace`, closed after the test."""
    s = RawServer(workspace)
    try:
        yield s
    finally:
        s.close()
