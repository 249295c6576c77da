"""A long call's progress reaches a real MCP client: through a host command line that adds a
slow tool to tether's own front ends (crates/cli/examples/host_cli.rs), and from `eval` and
`debug` while they wait (real python3 from target/test-venv, the debugpy `tether install` put
in its folder, real `tether serve`). Reports are counted, never timed."""

import asyncio
import os
import pathlib

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import ROOT, session, text
from test_debug_processes import project

HOST = os.environ.get(
    "TETHER_HOST_BIN", str(ROOT / "target" / "debug" / "examples" / "host_cli")
)


async def _call_wait(root, steps, with_progress):
    params = StdioServerParameters(
        command=HOST,
        args=["serve", "--root", str(root)],
        env={
            "TETHER_CONFIG_DIR": str(root.parent / "cfg"),
            "TETHER_STATE_DIR": str(root.parent / "state"),
            "PATH": os.environ.get("PATH", ""),
        },
    )
    seen = []

    async def on_progress(progress, total, message):
        seen.append((progress, message))

    async with stdio_client(params) as streams:
        async with ClientSession(*streams) as s:
            await s.initialize()
            result = await s.call_tool(
                "wait",
                {"steps": steps},
                progress_callback=on_progress if with_progress else None,
            )
    return text(result), seen


def test_a_long_call_reports_progress_to_the_client(workspace):
    out, seen = anyio.run(_call_wait, workspace, 4, True)
    assert out.startswith("waited 4 steps"), out
    # Each report counts up and says what the call waits for.
    assert [p for p, _ in seen] == [1, 2, 3, 4], seen
    assert seen[-1][1] == "step 4 of 4", seen


def test_a_call_without_a_progress_token_gets_no_progress(workspace):
    out, seen = anyio.run(_call_wait, workspace, 2, False)
    assert out.startswith("waited 2 steps"), out
    assert seen == []


async def _progress_of(s, tool, args, heard=None):
    """Calls `tool` with a progress token; its result's text and the (progress, message) pairs
    that arrived before the result. The file `heard`, when given, is created at the first report,
    so the code the call runs can wait for it instead of sleeping long enough."""
    seen = []

    async def on_progress(progress, total, message):
        seen.append((progress, message))
        if heard is not None:
            heard.touch()

    r = await s.call_tool(tool, args, progress_callback=on_progress)
    assert not r.is_error, text(r)
    return text(r), list(seen)


def _watching():
    """A message handler that counts every progress notification, for any token, and the list
    it counts into."""
    heard = []

    async def handler(message):
        if getattr(message, "method", "") == "notifications/progress":
            heard.append(message.params.progress_token)

    return handler, heard


def _increasing(seen):
    values = [p for p, _ in seen]
    return all(a < b for a, b in zip(values, values[1:]))


def test_an_eval_cell_that_sleeps_reports_progress_and_stops_with_its_result(workspace):
    project(workspace)
    handler, heard = _watching()

    async def main():
        async with session(workspace, message_handler=handler) as s:
            # Start the kernel first, so the progress below is the cell's own.
            await _progress_of(s, "eval", {"code": "1", "description": "start the kernel"})
            before = len(heard)
            # The cell waits until the client has heard a report (it is silent meanwhile).
            mark = workspace.parent / "heard"
            code = f"import os, time\nwhile not os.path.exists({str(mark)!r}):\n    time.sleep(0.05)\n" \
                   "print('slept')"
            out, seen = await _progress_of(s, "eval", {"code": code, "description": "sleep"}, mark)
            assert out.endswith("slept"), out
            assert len(seen) >= 1, seen
            assert all(m.startswith("cell running (") for _, m in seen), seen
            assert _increasing(seen), seen
            after = len(heard)
            # A second long cell without a token: no report of the first call may come now.
            r = await s.call_tool(
                "eval", {"code": "time.sleep(3)\nprint('again')", "description": "sleep again"}
            )
            assert text(r).endswith("again"), text(r)
            return before, after, len(heard)

    before, after, total = asyncio.run(asyncio.wait_for(main(), timeout=180))
    assert after - before >= 1, (before, after)
    assert total == after, f"progress arrived after the call ended: {heard}"


# Between its two breakpoints (lines 5 and 6) it waits until the client has heard a report.
DEBUGGEE = """import os, time


def main():
    settle()
    x = 1
    return x


def settle():
    while not os.path.exists(MARK):
        time.sleep(0.05)


main()
"""


def test_a_debug_continue_reports_progress_until_the_program_stops(workspace):
    project(workspace)
    mark = workspace.parent / "heard"
    (workspace / "app.py").write_text(DEBUGGEE.replace("MARK", repr(str(mark))))
    handler, heard = _watching()

    async def main():
        async with session(workspace, message_handler=handler) as s:
            await s.call_tool("debug", {"action": "breakpoints", "file": "app.py", "lines": [5, 6]})
            out, _ = await _progress_of(s, "debug", {"action": "launch", "program": "app.py"})
            assert "stopped: breakpoint" in out and "> 5:" in out, out
            out, seen = await _progress_of(s, "debug", {"action": "continue"}, mark)
            assert "stopped: breakpoint" in out and "> 6:" in out, out
            assert len(seen) >= 1, seen
            assert all(m.startswith("waiting for the program to stop (") for _, m in seen), seen
            assert _increasing(seen), seen
            after = len(heard)
            # Nothing of the finished calls comes later, while the next call runs.
            r = await s.call_tool("eval", {"code": "import time\ntime.sleep(3)", "description": "wait"})
            assert not r.is_error, text(r)
            await s.call_tool("debug", {"action": "terminate"})
            return after, len(heard)

    after, total = asyncio.run(asyncio.wait_for(main(), timeout=180))
    assert total == after, f"progress arrived after the call ended: {heard}"


def test_a_cell_waiting_on_a_bridged_call_says_so_and_the_numbers_keep_increasing(workspace):
    # The host's `wait` reports progress of its own from inside the cell's call: one token, two
    # calls reporting, and the client still sees the numbers increase.
    out, seen = anyio.run(_eval_wait, workspace)
    assert "waited 25 steps" in out, out
    assert any(m.startswith("step ") for _, m in seen), seen
    assert any("waiting on its `wait` call" in m for _, m in seen), seen
    assert _increasing(seen), seen


async def _eval_wait(root):
    params = StdioServerParameters(
        command=HOST,
        args=["serve", "--root", str(root)],
        env={
            "TETHER_CONFIG_DIR": str(root.parent / "cfg"),
            "TETHER_STATE_DIR": str(root.parent / "state"),
            "PATH": os.environ.get("PATH", ""),
        },
    )
    async with stdio_client(params) as streams:
        async with ClientSession(*streams) as s:
            await s.initialize()
            return await _progress_of(
                s, "eval", {"code": "print(tool('wait', {'steps': 25}))", "description": "wait"}
            )
