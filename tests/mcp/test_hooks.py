"""`tether hook claude|codex` with the real agent CLIs (Claude Code, Codex, as installed by
scripts/test): each CLI runs tether as its PreToolUse/PostToolUse command hook, its model (the
local stand-in, model_stub.py) edits a.py with the CLI's own edit tool so that it brings a pyright
error, and the model's next request carries tether's report of that new problem, in the form the
CLI gives hook context: Claude Code a `<system-reminder>` after the tool result, Codex a developer
message. The hook attaches to a warm `tether host` of the test's own (its own runtime, config and
state folders), which the test stops at the end; nothing of it may be left running."""

import json
import os
import pathlib
import re
import shlex
import subprocess
import tempfile
import time

import pytest

from conftest import ROOT, TETHER
from model_stub import ANSWER, ModelStub
from test_worker_clis import cli, environment

VENV_BIN = ROOT / "target" / "test-venv" / "bin"
OLD = "    return x"
NEW = "    return x\n\ny: str = f(1)"
EDITED = "def f(x: int) -> int:\n    return x\n\ny: str = f(1)\n"
TIMEOUT = 120


@pytest.fixture
def place():
    """A workspace with a pyright project, a home for the CLI, and the folders that make the
    test's tether host its own."""
    with tempfile.TemporaryDirectory() as outer:
        outer = pathlib.Path(outer).resolve()
        dirs = {name: outer / name for name in ("ws", "home", "cfg", "state", "run")}
        for d in dirs.values():
            d.mkdir()
        (dirs["ws"] / "pyproject.toml").write_text('[project]\nname = "w"\nversion = "0"\n')
        (dirs["ws"] / "a.py").write_text("def f(x: int) -> int:\n    return x\n")
        yield dirs
        # Whatever happened, no host of this workspace outlives the test.
        for pid in host_pids(dirs["ws"]):
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass


def host_pids(ws):
    """The tether host processes serving `ws`."""
    found = subprocess.run(["pgrep", "-u", str(os.getuid()), "-f", f"tether host --root {re.escape(str(ws))}$"],
                           capture_output=True, text=True).stdout.split()
    return [int(p) for p in found]


def hook_env(name, stub, place):
    """The CLI's environment, which its hook subprocess inherits: the stand-in, pyright first
    on PATH, tether's folders the test's own, and the warm host not turned off."""
    env = environment(name, stub, place["home"])
    env["PATH"] = f"{VENV_BIN}:{env['PATH']}"
    env.update(XDG_RUNTIME_DIR=str(place["run"]), TETHER_CONFIG_DIR=str(place["cfg"]),
               TETHER_STATE_DIR=str(place["state"]))
    env.pop("TETHER_HOST", None)
    return env


def stop_host(env, ws):
    """Stops the workspace's host with the env the hook had; what went wrong, if anything
    (none or several hosts, --stop not finding it, one left running). A host is keyed by PATH
    among others, and Codex runs its hooks with its own vendored tools' folder (`codex-path`,
    with rg) put first on PATH, so the PATH the host got is taken from the host itself."""
    pids = host_pids(ws)
    if len(pids) != 1:
        return f"expected the one tether host the hook started for {ws}, found {pids}"
    environ = dict(line.split("=", 1) for line in
                   pathlib.Path(f"/proc/{pids[0]}/environ").read_text().split("\0") if "=" in line)
    rebuilt = " (the tether binary was rebuilt during the test: a host is keyed by it)" \
        if os.readlink(f"/proc/{pids[0]}/exe").endswith(" (deleted)") else ""
    done = subprocess.run([TETHER, "host", "--stop", "--root", str(ws)], capture_output=True, text=True,
                          timeout=TIMEOUT, env=dict(env, PATH=environ["PATH"]), cwd=ws)
    deadline = time.monotonic() + 20
    while host_pids(ws) and time.monotonic() < deadline:
        time.sleep(0.2)
    if host_pids(ws):
        return f"a tether host of {ws} is left after --stop: {done.stdout}{done.stderr}{rebuilt}"
    if done.returncode != 0 or f"(pid {pids[0]})" not in done.stdout:
        return f"--stop did not stop the hook's host (pid {pids[0]}): {done}{rebuilt}"
    return ""


def run_cli(args, env, ws, brief):
    done = subprocess.run(args, input=brief, capture_output=True, text=True, env=env, cwd=ws,
                          timeout=TIMEOUT)
    assert done.returncode == 0, f"{args[0]} failed ({done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    return done


def host_log(place):
    logs = sorted((place["run"] / "tether").glob("host-*.log"))
    return "\n".join(p.read_text(errors="replace")[-3000:] for p in logs) or "(no host log)"


def report_in(text):
    return "a.py: 1 new problem" in text and "reportAssignmentType" in text


def run_claude(place, env, hooks):
    """Claude Code, with `hooks` as its user settings' hooks, asked to edit a.py; its output and
    what stopping the test's host found wrong."""
    ws = place["ws"]
    (place["home"] / ".claude").mkdir()
    (place["home"] / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    try:
        done = run_cli([cli("claude"), "-p", "--output-format", "stream-json", "--verbose", "--model", "haiku",
                        "--permission-mode", "acceptEdits"], env, ws, f"EDIT-PROBE {ws / 'a.py'}")
    finally:
        stopped = stop_host(env, ws)
    return done, stopped


def test_claude_code_goes_on_past_an_event_tether_cannot_read_and_its_stop_event(place):
    """A hook event tether cannot read is a non-blocking error (Claude Code shows it to the user,
    not to the model), and a Stop or Notification event gets nothing its schema lacks: the turn
    ends normally, and tether's own report still reaches the model."""
    stub = ModelStub(edit=(OLD, NEW))
    ws = place["ws"]
    env = hook_env("claude", stub, place)
    try:
        hook = f"{shlex.quote(TETHER)} hook claude"
        garbled = f"printf 'not an event' | {hook}"
        command = lambda c: {"type": "command", "command": c, "timeout": 90}
        edits = "Edit|Write|MultiEdit"
        done, stopped = run_claude(place, env, {
            "PreToolUse": [{"matcher": edits, "hooks": [command(hook)]}],
            "PostToolUse": [{"matcher": edits, "hooks": [command(hook), command(garbled)]}],
            "Stop": [{"hooks": [command(hook)]}],
            "Notification": [{"hooks": [command(hook)]}],
        })
        assert (ws / "a.py").read_text() == EDITED, "the model's Edit never landed: it proves nothing below"
        assert ANSWER in done.stdout, done.stdout[-3000:]
        asked = json.dumps(stub.requests)
        assert "nothing was checked" not in asked and "blocking error" not in asked, \
            "tether's unreadable event reached the model as a blocking error"
        assert report_in(asked), f"tether's own report did not reach the model\nhost log:\n{host_log(place)}"
        assert not stopped, stopped
    finally:
        stub.close()


def test_claude_code_hands_tethers_report_on_its_own_edit_to_the_model(place):
    stub = ModelStub(edit=(OLD, NEW))
    ws = place["ws"]
    env = hook_env("claude", stub, place)
    try:
        hook = f"{shlex.quote(TETHER)} hook claude"
        group = [{"matcher": "Edit|Write|MultiEdit", "hooks": [{"type": "command", "command": hook, "timeout": 90}]}]
        done, stopped = run_claude(place, env, {"PreToolUse": group, "PostToolUse": group})
        assert (ws / "a.py").read_text() == EDITED, "the model's Edit never landed: it proves nothing below"
        assert ANSWER in done.stdout, done.stdout[-3000:]
        # The Read's result, then the Edit's: the request after the Edit has both, and the
        # Edit's result is in its last message, with the hook's context after it.
        after = [body for path, body in stub.requests
                 if path.endswith("/messages") and ModelStub.results(body, "tool_result") >= 2]
        assert after, "no request after the Edit carried its result"
        last = after[0]["messages"][-1]
        blocks = last["content"] if isinstance(last["content"], list) else []
        kinds = [b.get("type") for b in blocks]
        assert "tool_result" in kinds, f"the last message is not the Edit's result: {last}"
        told = [b.get("text", "") for b in blocks[kinds.index("tool_result") + 1:] if b.get("type") == "text"]
        reminder = "<system-reminder>\nPostToolUse:Edit hook additional context: tether: edit #"
        assert any(t.startswith(reminder) and report_in(t) for t in told), \
            f"the request after the Edit lacks tether's report: {last}\nhost log:\n{host_log(place)}"
        assert not stopped, stopped
    finally:
        stub.close()


CODEX_EDITS = "^(apply_patch|Edit|Write)$"


def codex_table(event, matcher, command):
    """One hook table of Codex's config.toml."""
    match = f'matcher = "{matcher}"\n' if matcher else ""
    return (f'[[hooks.{event}]]\n{match}[[hooks.{event}.hooks]]\n'
            f'type = "command"\ncommand = {json.dumps(command)}\ntimeout = 90\n')


def run_codex(place, env, tables):
    """Codex, with `tables` added to its config, asked to patch a.py; its output and what
    stopping the test's host found wrong."""
    ws = place["ws"]
    config = place["home"] / ".codex" / "config.toml"
    config.write_text(config.read_text() + tables)
    try:
        done = run_cli([cli("codex"), "exec", "--json", "--skip-git-repo-check", "-c",
                        'sandbox_mode="workspace-write"', "--dangerously-bypass-hook-trust"],
                       env, ws, f"EDIT-PROBE {ws / 'a.py'}")
    finally:
        stopped = stop_host(env, ws)
    return done, stopped


def test_codex_hands_tethers_report_on_its_own_patch_to_the_model(place):
    stub = ModelStub(edit=(OLD, NEW))
    ws = place["ws"]
    env = hook_env("codex", stub, place)
    try:
        hook = f"{shlex.quote(TETHER)} hook codex"
        done, stopped = run_codex(place, env, codex_table("PreToolUse", CODEX_EDITS, hook)
                                  + codex_table("PostToolUse", CODEX_EDITS, hook))
        assert (ws / "a.py").read_text() == EDITED, "the model's apply_patch never landed: it proves nothing below"
        assert ANSWER in done.stdout, done.stdout[-3000:]
        bodies = [body for path, body in stub.requests if path.endswith("/responses")]
        after = [b for b in bodies if ModelStub.results(b, "custom_tool_call_output")]
        assert after, "no request after the patch carried its result"
        developer = [
            c.get("text", "")
            for item in after[0]["input"] if isinstance(item, dict)
            and item.get("type") == "message" and item.get("role") == "developer"
            for c in item.get("content") or [] if isinstance(c, dict)
        ]
        assert any(t.startswith("tether: edit #") and report_in(t) for t in developer), \
            f"no developer message with tether's report after the patch: {[t[:300] for t in developer]}\nhost log:\n{host_log(place)}"
        assert not stopped, stopped
    finally:
        stub.close()


def test_codex_goes_on_past_an_event_tether_cannot_read_and_its_stop_event(place):
    """As with Claude Code: an unreadable event is a non-blocking error that never reaches the
    model, a Stop event gets nothing its schema lacks, and tether's own report still arrives."""
    stub = ModelStub(edit=(OLD, NEW))
    ws = place["ws"]
    env = hook_env("codex", stub, place)
    try:
        hook = f"{shlex.quote(TETHER)} hook codex"
        garbled = f"printf 'not an event' | {hook}"
        done, stopped = run_codex(place, env, codex_table("PreToolUse", CODEX_EDITS, hook)
                                  + codex_table("PostToolUse", CODEX_EDITS, hook)
                                  + codex_table("PostToolUse", CODEX_EDITS, garbled)
                                  + codex_table("Stop", None, hook))
        assert (ws / "a.py").read_text() == EDITED, "the model's apply_patch never landed: it proves nothing below"
        assert ANSWER in done.stdout, done.stdout[-3000:]
        asked = json.dumps(stub.requests)
        assert "nothing was checked" not in asked, "tether's unreadable event reached the model"
        assert report_in(asked), f"tether's own report did not reach the model\nhost log:\n{host_log(place)}"
        assert not stopped, stopped
    finally:
        stub.close()
