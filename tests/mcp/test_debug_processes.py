"""No debug adapter or debuggee outlives its run: not after `terminate`, not after the client
disconnects, not after tether itself is killed with SIGKILL, also while the debuggee runs
(real debugpy, through MCP)."""

import asyncio
import os
import time

from conftest import ROOT, kill_serve, session, text

APP = "def main():\n    x = 1\n    return x\n\n\nmain()\n"


def project(root):
    (root / "pyproject.toml").write_text('[project]\nname = "d"\nversion = "0.1"\n')
    (root / "app.py").write_text(APP)
    venv = ROOT / "target" / "test-venv"
    assert (venv / "bin" / "python").exists(), "run scripts/test: it makes target/test-venv"
    (root / ".venv").symlink_to(venv)


def left(root):
    """Pids of processes whose command line names this workspace, or of debugpy's whose
    working folder is in it (tether's own adapter runs from tether's folder), tether itself
    aside."""
    root = os.path.realpath(root)
    pids = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                cmd = f.read().replace(b"\0", b" ").decode(errors="replace")
            cwd = os.readlink(f"/proc/{entry}/cwd")
        except OSError:
            continue
        if " serve --root " in cmd:
            continue
        inside = cwd == root or cwd.startswith(root + "/")
        if root in cmd or (inside and "debugpy" in cmd):
            pids.append(int(entry))
    return pids


def gone_within(root, seconds):
    end = time.time() + seconds
    while time.time() < end:
        if not left(root):
            return True
        time.sleep(0.1)
    return False


async def stopped_session(s):
    await s.call_tool("debug", {"action": "breakpoints", "file": "app.py", "lines": [3]})
    r = await s.call_tool("debug", {"action": "launch", "program": "app.py"})
    assert "stopped: breakpoint" in text(r), text(r)


def test_terminate_and_a_disconnect_leave_nothing_behind(workspace):
    project(workspace)

    async def main():
        async with session(workspace) as s:
            await stopped_session(s)
            assert left(workspace), "the session should be running"
            r = await s.call_tool("debug", {"action": "terminate"})
            assert "terminated the session" in text(r)
            assert gone_within(workspace, 10), f"left after terminate: {left(workspace)}"
            await stopped_session(s)
        # The client went away with a session stopped at a breakpoint.

    asyncio.run(asyncio.wait_for(main(), timeout=120))
    assert gone_within(workspace, 10), f"left after the client disconnected: {left(workspace)}"


def test_a_sigkill_of_tether_leaves_nothing_behind(workspace):
    project(workspace)
    killed_while(workspace, stopped_session)


def test_a_sigkill_of_tether_takes_a_running_debuggee(workspace):
    # Running, not stopped: it has no reason to notice its adapter is gone, and debugpy's
    # launcher put it in a group of its own.
    project(workspace)
    (workspace / "app.py").write_text("import time\nwhile True:\n    time.sleep(0.1)\n")

    async def prepare(s):
        r = await s.call_tool("debug", {"action": "launch", "program": "app.py"})
        assert not r.is_error, text(r)
        for _ in range(50):
            if [p for p in left(workspace) if "app.py" in open(f"/proc/{p}/cmdline").read()]:
                break
            await asyncio.sleep(0.1)
        else:
            raise AssertionError(f"the debuggee should run: {left(workspace)}")
        await asyncio.sleep(1)  # connected to its adapter and running its loop

    killed_while(workspace, prepare)


async def running_debuggee(s, workspace):
    """Launches a debuggee that loops forever, and waits until it runs."""
    r = await s.call_tool("debug", {"action": "launch", "program": "app.py"})
    assert not r.is_error, text(r)
    for _ in range(300):
        if [p for p in left(workspace) if "app.py" in open(f"/proc/{p}/cmdline").read()]:
            return
        await asyncio.sleep(0.1)
    raise AssertionError(f"the debuggee should run: {left(workspace)}")


def test_a_running_debuggee_goes_with_terminate_and_with_the_run(workspace):
    # debugpy's launcher puts a running debuggee in a group of its own: a kill of the
    # adapter's group alone would leave it.
    project(workspace)
    (workspace / "app.py").write_text("import time\nwhile True:\n    time.sleep(0.1)\n")

    async def main():
        async with session(workspace) as s:
            await running_debuggee(s, workspace)
            r = await s.call_tool("debug", {"action": "terminate"})
            assert not r.is_error, text(r)
            assert gone_within(workspace, 30), f"left after terminate: {left(workspace)}"
            await running_debuggee(s, workspace)
        # The client went away while the debuggee ran: the run ends, and it goes too.

    asyncio.run(asyncio.wait_for(main(), timeout=120))
    assert gone_within(workspace, 30), f"left after the run ended: {left(workspace)}"


def killed_while(workspace, prepare, extra_args=()):
    """Runs `prepare(session)` once, then kills its `tether serve` with SIGKILL; nothing started
    for the workspace may be left. The client's own errors at its server's death are expected,
    but only after the kill: an error before it fails the test."""
    killed = []

    async def main():
        async with session(workspace, extra_args=extra_args) as s:
            await prepare(s)
            kill_serve(workspace)
            killed.append(True)

    try:
        asyncio.run(asyncio.wait_for(main(), timeout=120))
    except BaseException:  # the client sees its server die
        if not killed:
            raise
    assert killed, "the scenario never reached the kill"
    assert gone_within(workspace, 10), f"left after SIGKILL: {left(workspace)}"
