"""Shared helpers: start `tether serve` and talk to it with the official MCP Python SDK."""

import asyncio
import contextlib
import os
import pathlib
import signal
import subprocess
import tempfile

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = pathlib.Path(__file__).resolve().parents[2]
TETHER = os.environ.get("TETHER_BIN", str(ROOT / "target" / "debug" / "tether"))


@contextlib.asynccontextmanager
async def session(
    root, surface="agent", elicitation_callback=None, extra_args=(), env=None, message_handler=None
):
    """An initialized MCP client session over a fresh `tether serve` process; with an
    elicitation callback, the client declares that it can show forms. `env` adds variables
    (and may set PATH); `message_handler` hears every server notification."""
    cfg = pathlib.Path(root).parent / (pathlib.Path(root).name + "-cfg")
    params = StdioServerParameters(
        command=TETHER,
        args=["serve", "--root", str(root), "--surface", surface, *extra_args],
        env={"TETHER_CONFIG_DIR": str(cfg), "PATH": os.environ.get("PATH", ""), **(env or {})},
    )
    async with stdio_client(params) as streams:
        async with ClientSession(
            *streams, elicitation_callback=elicitation_callback, message_handler=message_handler
        ) as s:
            info = await s.initialize()
            s.server_name = info.server_info.name
            yield s


def calls(workspace, script, surface="agent", timeout=60):
    """Runs (tool, args) pairs in one server session; returns (is_error, text) per call."""

    async def main():
        async with session(workspace, surface) as s:
            out = []
            for name, args in script:
                r = await s.call_tool(name, args)
                out.append((bool(r.is_error), text(r)))
            return out

    return asyncio.run(asyncio.wait_for(main(), timeout=timeout))


def kill_serve(root):
    """Kills the `tether serve` of workspace `root` with SIGKILL: no chance to clean up."""
    serve = subprocess.run(
        ["pgrep", "-f", f"serve --root {root}"], capture_output=True, text=True
    ).stdout.split()
    assert serve, "tether serve not found"
    os.kill(int(serve[0]), signal.SIGKILL)


def text(result):
    """All text content of a tool result, joined."""
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


@pytest.fixture
def workspace():
    with tempfile.TemporaryDirectory() as outer:
        root = pathlib.Path(outer) / "ws"
        root.mkdir()
        yield root
