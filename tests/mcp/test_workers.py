"""Vibe mode through a real MCP client: `tether serve --vibe` lists the worker tools and runs a
scripted worker to its result; without the flag they are absent; no worker outlives the
client."""

import asyncio
import json
import os
import subprocess

from conftest import TETHER, session, text
from test_debug_processes import gone_within, killed_while, left

WORKER = 'brief=$(cat)\necho "worker in {root}"\necho "did: $brief"\n'


def configure(workspace):
    script = workspace.parent / "worker.sh"
    script.write_text(WORKER.format(root=workspace) + 'case "$brief" in hang*) sleep 300;; esac\n'
                      'case "$brief" in spread*) sh -c "sleep 300; true" x "$1" & sh -c "sleep 300; true" y "$1" & '
                      'wait;; esac\n'
                      # Twice removed into a session of its own: no group kill reaches it.
                      'case "$brief" in daemon*) setsid sh -c \'sh -c "sleep 300; true" x "$1" '
                      '>/dev/null 2>&1 &\' x "$1"; sleep 300;; esac\n')
    cfg = workspace.parent / (workspace.name + "-cfg")
    cfg.mkdir(exist_ok=True)
    (cfg / "tether.toml").write_text(f'[workers.fast]\ncommand = ["sh", "{script}", "{workspace}"]\n')


def commands(workspace):
    """The command lines of the processes that name the workspace, tether itself aside."""
    out = subprocess.run(["pgrep", "-af", str(workspace)], capture_output=True, text=True).stdout
    ours = set(left(workspace))
    return [cmd for pid, _, cmd in (line.partition(" ") for line in out.splitlines())
            if int(pid) in ours]


async def running(workspace, ready):
    """The command lines running for the workspace once `ready(them)` holds; waits at most 60 s,
    which only a loaded machine starting shells could ever need."""
    for _ in range(600):
        if ready(commands(workspace)):
            break
        await asyncio.sleep(0.1)
    return commands(workspace)


def test_serve_vibe_runs_a_worker_to_its_result(workspace):
    configure(workspace)

    async def main():
        async with session(workspace) as s:
            names = [t.name for t in (await s.list_tools()).tools]
            assert not [n for n in names if n.startswith("vibe_")], names
        async with session(workspace, extra_args=["--vibe"]) as s:
            names = [t.name for t in (await s.list_tools()).tools]
            assert {"vibe_spawn", "vibe_wait", "vibe_send", "vibe_kill", "vibe_list"} <= set(names), names
            r = await s.call_tool("vibe_spawn", {"brief": "tidy the readme", "label": "readme"})
            assert not r.is_error and text(r).startswith("w1 spawned (fast)"), text(r)
            r = await s.call_tool("vibe_wait", {"worker_id": "w1", "timeout_seconds": 30})
            assert "completed" in text(r) and "did: tidy the readme" in text(r), text(r)
            # One left running when the client goes away.
            await s.call_tool("vibe_spawn", {"brief": "hang around", "label": "stays"})
            cmds = await running(workspace, lambda cmds: len(cmds) >= 1)
            assert cmds, "the hanging worker should be running"

    asyncio.run(asyncio.wait_for(main(), timeout=120))
    assert gone_within(workspace, 10), f"a worker outlived the client: {left(workspace)}"


def test_a_surface_passed_down_in_the_environment_cannot_be_widened(workspace):
    env = dict(os.environ, TETHER_SURFACE="plan", TETHER_CONFIG_DIR=str(workspace.parent / "cfg"))
    done = subprocess.run([TETHER, "tools", "--surface", "agent", "--json", "--root", str(workspace)],
                          capture_output=True, text=True, env=env, timeout=60)
    names = [t["name"] for t in json.loads(done.stdout)]
    assert "read" in names and "write" not in names and "eval" not in names, names


def test_a_sigkill_of_tether_takes_what_its_workers_started(workspace):
    configure(workspace)

    async def prepare(s):
        r = await s.call_tool("vibe_spawn", {"brief": "spread out", "label": "children"})
        assert not r.is_error, r
        cmds = await running(workspace, lambda cmds: len(cmds) >= 3)
        assert len(cmds) >= 3, f"the worker and its children should run: {cmds}"

    killed_while(workspace, prepare, extra_args=["--vibe"])


def test_a_sigkill_of_tether_takes_a_daemon_a_worker_started(workspace):
    configure(workspace)

    async def prepare(s):
        r = await s.call_tool("vibe_spawn", {"brief": "daemon please", "label": "daemon"})
        assert not r.is_error, r
        # The daemon itself, not the short-lived shell that starts it (which also names the root).
        def daemon(cmds):
            return any(c.startswith("sh -c sleep 300; true x ") for c in cmds)

        cmds = await running(workspace, daemon)
        assert daemon(cmds), f"the worker and its daemon should run: {cmds}"

    killed_while(workspace, prepare, extra_args=["--vibe"])


def git(workspace, *args):
    """Runs git in the workspace as a test's user; what it printed."""
    done = subprocess.run(["git", "-C", str(workspace), "-c", "user.name=t", "-c", "user.email=t@t", *args],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done
    return done.stdout


def test_a_sigkill_of_tether_while_git_makes_a_worktree_leaves_nothing_in_the_next_run_s_way(workspace):
    # `slow.txt` goes through a smudge filter that holds the first checkout (at most 60 s), so
    # the first run's `git worktree add` is cut off half done, its worktree locked.
    outer = workspace.parent
    for name, body in [("README", "hi\n"), (".gitattributes", "slow.txt filter=slow\n"), ("slow.txt", "slow\n")]:
        (workspace / name).write_text(body)
    git(workspace, "init", "-q")
    git(workspace, "add", ".")
    git(workspace, "commit", "-q", "-m", "first")
    (outer / "filter.sh").write_text(
        f'if mkdir {outer}/once 2>/dev/null; then touch {outer}/held; i=0; '
        f'until [ $i -ge 1200 ]; do sleep 0.05; i=$((i+1)); done; fi\ncat\n')
    git(workspace, "config", "filter.slow.smudge", f"sh {outer}/filter.sh")
    git(workspace, "config", "filter.slow.clean", "cat")
    script = outer / "worker.sh"
    script.write_text('brief=$(cat)\necho "$brief" > made.txt\necho "made it"\n')
    cfg = outer / (workspace.name + "-cfg")
    cfg.mkdir(exist_ok=True)
    (cfg / "tether.toml").write_text(
        f'[workers]\nisolation = "worktree"\n[workers.fast]\ncommand = ["sh", "{script}"]\n')

    async def prepare(s):
        r = await s.call_tool("vibe_spawn", {"brief": "held", "label": "held"})
        assert not r.is_error, r
        for _ in range(600):
            if (outer / "held").exists():
                break
            await asyncio.sleep(0.1)
        assert (outer / "held").exists(), "the first checkout was never held"

    killed_while(workspace, prepare, extra_args=["--vibe"])
    listed = git(workspace, "worktree", "list", "--porcelain")
    assert listed.count("locked initializing") == 1, listed

    async def again():
        async with session(workspace, extra_args=["--vibe"]) as s:
            await s.call_tool("vibe_spawn", {"brief": "the change", "label": "next"})
            r = await s.call_tool("vibe_wait", {"worker_id": "w1", "timeout_seconds": 60})
            assert "completed" in text(r), text(r)

    asyncio.run(asyncio.wait_for(again(), timeout=120))
    listed = git(workspace, "worktree", "list", "--porcelain")
    assert "initializing" not in listed, listed
    branches = git(workspace, "branch", "--list", "--format=%(refname:short)", "tether/*").split()
    assert len(branches) == 1, branches
    trees = [p for p in (workspace / ".tether/worktrees").iterdir() if p.is_dir()]
    assert [p.name for p in trees] == [branches[0].removeprefix("tether/")], trees
    assert (trees[0] / "made.txt").read_text() == "the change\n"
