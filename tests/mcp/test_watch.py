"""Outside edits the system's watch queue could not hold, with the real pyright and a real
`tether serve`: the serve process is stopped while more changes land than
`fs.inotify.max_queued_events` allows, so the kernel drops events for real. Once it runs on,
every broken module is still told, and a folder whose creation was lost is watched."""

import asyncio
import os
import pathlib
import signal
import subprocess
import time

from conftest import session, text

BUDGETS = "[lsp]\nrequest_timeout_s = 120\ninit_timeout_s = 120\n"
USE = "from core import target\n\n\ndef use_{n}(a: int) -> int:\n    return target({arg})\n"


def serve_pid(root):
    out = subprocess.run(["pgrep", "-f", f"serve --root {root}"], capture_output=True, text=True)
    pids = out.stdout.split()
    assert pids, "tether serve not found"
    return int(pids[0])


async def wait_for(s, tool, args, needle, limit):
    """Calls `tool` until its text holds `needle` or `limit` seconds pass: every text seen."""
    seen, began = "", time.monotonic()
    while time.monotonic() - began < limit:
        out = text(await s.call_tool(tool, args))
        seen += out + "\n"
        if needle in out:
            return seen
        await asyncio.sleep(0.5)
    return seen


def test_changes_the_system_dropped_while_tether_was_stopped_are_found_on_disk(workspace):
    (workspace / "pyproject.toml").write_text('[project]\nname = "w"\n')
    (workspace / "core.py").write_text("def target(x: int) -> int:\n    return x\n")
    (workspace / "pkg").mkdir()
    (workspace / "bulk").mkdir()
    for n in range(3):
        (workspace / "pkg" / f"m{n}.py").write_text(USE.format(n=n, arg="a"))
    cfg = workspace.parent / (workspace.name + "-cfg")
    cfg.mkdir()
    (cfg / "tether.toml").write_text(BUDGETS)
    queue = int(pathlib.Path("/proc/sys/fs/inotify/max_queued_events").read_text())

    async def main():
        async with session(workspace, extra_args=["--no-host"], env={"TETHER_LOG": os.environ.get("TETHER_LOG", "warn")}) as s:
            await s.call_tool("write", {"path": "core.py", "content": "def target(x: int) -> int:\n    return x + 1\n"})
            status = await wait_for(s, "lsp", {"action": "status"}, ": ready,", 120)
            assert ": ready," in status, status
            pid = serve_pid(workspace)
            os.kill(pid, signal.SIGSTOP)
            try:
                # Each new file raises three events (created, modified, closed): together
                # more than the queue holds, so what comes after them is dropped.
                bulk = workspace / "bulk"
                for n in range(queue // 2):
                    (bulk / f"n{n}.txt").write_text("x\n")
                for n in range(3):
                    (workspace / "pkg" / f"m{n}.py").write_text(USE.format(n=n, arg="str(a)"))
                fresh = workspace / "fresh"
                fresh.mkdir()
                (fresh / "late.py").write_text("from core import target\n\nV: str = target(1)\n")
                # Long enough that the changes lie well before the burst tether sees.
                time.sleep(4)
            finally:
                os.kill(pid, signal.SIGCONT)
            told = await wait_for(s, "read", {"path": "core.py", "limit": 1}, "(not a tether write)", 90)
            assert "the system dropped change events" in told, told
            for name in ["fresh/late.py", "pkg/m0.py", "pkg/m1.py"]:
                assert name in told, told
            assert "pkg/m0.py, pkg/m1.py, 1 more" in told or "pkg/m2.py: 1 new problem" in told, told
            # The folder whose creation was lost is watched now: a change in it is seen.
            (fresh / "late.py").write_text("from core import target\n\nV: str = target(1)\nW: int = V\n")
            again = await wait_for(s, "read", {"path": "core.py", "limit": 1}, "(not a tether write)", 60)
            assert "an outside change to fresh/late.py" in again, again

    asyncio.run(asyncio.wait_for(main(), timeout=300))
