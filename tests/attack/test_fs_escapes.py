"""Attacks on the write door through the real `tether` binary: a hostile workspace (crafted
journal, `.tether` symlink, config symlink, FIFOs), a folder swapped for a symlink while calls
run, a second process writing the same file, the trust list written through a tool, and a huge
file read with bounded memory."""

import json
import os
import pathlib
import re
import resource
import shutil
import subprocess
import tempfile
import threading
import time

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
TETHER = os.environ.get("TETHER_BIN", str(ROOT / "target" / "debug" / "tether"))


# `tether call` attaches to a warm host per workspace by default, and these attacks go through
# it; the hosts live in one runtime folder for the module, all stopped when it ends.
RUNTIME = tempfile.mkdtemp(prefix="tether-attack-run-")


@pytest.fixture(scope="module", autouse=True)
def hosts_stopped():
    yield
    env = {"PATH": os.environ.get("PATH", ""), "XDG_RUNTIME_DIR": RUNTIME}
    done = subprocess.run([TETHER, "host", "--stop", "--all"], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    shutil.rmtree(RUNTIME, ignore_errors=True)


def env_for(base, **extra):
    """A clean environment whose config and state folders live under `base`."""
    env = {
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(base / "home"),
        "TETHER_CONFIG_DIR": str(base / "cfg"),
        "TETHER_STATE_DIR": str(base / "state"),
        "XDG_RUNTIME_DIR": RUNTIME,
    }
    env.update(extra)
    return {k: v for k, v in env.items() if v is not None}


def tether(args, env, stdin=None, timeout=120):
    return subprocess.run(
        [TETHER, *args], input=stdin, capture_output=True, text=True, env=env, timeout=timeout
    )


def calls(root, env, lines, timeout=300):
    """Runs `tether call --stdin` with one JSON call per line; returns the parsed results (the
    notices line the run may end with, what it was told of changes made outside, is not one)."""
    text = "".join(json.dumps({"tool": t, "args": a}) + "\n" for t, a in lines)
    out = tether(["call", "--stdin", "--root", str(root)], env, stdin=text, timeout=timeout)
    parsed = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    return [r for r in parsed if "notices" not in r]


@pytest.fixture
def scene(tmp_path):
    root = tmp_path / "ws"
    outside = tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (outside / "victim.txt").write_text("precious")
    (root / "a.txt").write_text("alpha\n")
    return tmp_path, root, outside


def test_a_crafted_journal_in_a_fresh_clone_is_never_acted_on(scene):
    base, root, outside = scene
    env = env_for(base)
    # What an attacker commits: a "committed" journal, whose cleanup deletes its "backup",
    # which names a file outside the workspace.
    (root / ".tether").mkdir()
    journal = {
        "version": 1, "run_id": "r1-dead", "txn_id": 1, "state": "committed",
        "entries": [{"target": str(root / "a.txt"), "temp": None,
                     "backup": str(outside / "victim.txt"), "new_hash": None}],
        "created_dirs": [],
    }
    (root / ".tether" / "journal-r1-dead.json").write_text(json.dumps(journal))
    (root / ".tether" / "run-r1-dead.lock").write_text("")
    for args in (["doctor", "--root", str(root)], ["tools", "--root", str(root)]):
        tether(args, env)
    out = tether(["call", "read", '{"path": "a.txt"}', "--root", str(root)], env)
    assert (outside / "victim.txt").read_text() == "precious"
    assert sorted(p.name for p in outside.iterdir()) == ["victim.txt"]
    assert not (root / ".tether" / "journal-r1-dead.json").exists()
    assert (root / ".tether" / "journal-r1-dead.json.ignored").exists()
    assert "alpha" in out.stdout


def test_the_first_run_says_it_set_a_shipped_journal_aside(scene):
    base, root, outside = scene
    env = env_for(base)
    (root / ".tether").mkdir()
    (root / ".tether" / "journal-rX.json").write_text("{}")
    out = tether(["call", "read", '{"path": "a.txt"}', "--root", str(root)], env)
    assert "did not act on the journal" in out.stdout, out.stdout


def test_a_tether_symlink_stops_the_run_with_a_clear_error(scene):
    base, root, outside = scene
    env = env_for(base)
    (root / ".tether").symlink_to(outside)
    out = tether(["call", "write", '{"path": "x.txt", "content": "hi"}', "--root", str(root)], env)
    assert out.returncode != 0
    assert ".tether" in out.stderr and "symlink" in out.stderr, out.stderr
    assert sorted(p.name for p in outside.iterdir()) == ["victim.txt"]
    assert not (root / "x.txt").exists()


def test_a_folder_flipped_to_a_symlink_never_leads_outside(scene):
    base, root, outside = scene
    env = env_for(base)
    d = root / "d"
    d.mkdir()
    (d / "secret.txt").write_text("inside\n")
    (outside / "secret.txt").write_text("OUTSIDE\n")
    (d / "secret.py").write_text('secret = "inside"\n')
    (outside / "secret.py").write_text('secret = "OUTSIDE"\n')
    stop = threading.Event()

    def flip():
        parked = root / "d.real"
        while not stop.is_set():
            try:
                d.rename(parked)
            except OSError:
                continue
            try:
                d.symlink_to(outside)
                time.sleep(0.0002)
                d.unlink()
            except OSError:
                pass
            try:
                parked.rename(d)
            except OSError:
                parked.rename(root / f"d.{time.monotonic_ns()}")
                # A write made a fresh `d` meanwhile: the flip carries on with it, and it gets a
                # secret too, so reads of d/secret.txt can still be caught mid-call.
                try:
                    (d / "secret.txt").write_text("inside\n")
                except OSError:
                    pass
            time.sleep(0.0005)

    def caught(tool):
        """How many `tool` calls the flip caught between their path check and its use."""
        return sum(1 for r in results if r["tool"] == tool and not r["ok"]
                   and "a symlink appeared on the path while it was used" in r["text"])

    flipper = threading.Thread(target=flip)
    flipper.start()
    results, batches = [], 0
    try:
        # However the threads and processes are scheduled, go on until the flip has landed
        # mid-call often enough (a run where it never did would prove nothing); the bound only
        # ends a run in which the flipper never gets to run.
        while (caught("write") < 10 or caught("read") < 2) and batches < 40:
            lines = []
            for i in range(300):
                lines.append(("write", {"path": f"d/f{batches}-{i}.txt", "content": "x\n"}))
                lines.append(("read", {"path": "d/secret.txt"}))
                if i % 3 == 0:
                    lines.append(("ast_grep", {"pattern": "secret = $X", "path": "d",
                                               "language": "python"}))
            batch = calls(root, env, lines)
            assert len(batch) == 700, batch[-3:]
            results += batch
            batches += 1
    finally:
        stop.set()
        flipper.join()
    assert caught("write") >= 10 and caught("read") >= 2, (
        f"the flip landed between check and use of {caught('write')} writes and "
        f"{caught('read')} reads in {batches} batches of 700 calls")
    print(f"{batches} batches: caught mid-call {caught('write')} writes, {caught('read')} reads")
    assert sorted(p.name for p in outside.iterdir()) == ["secret.py", "secret.txt", "victim.txt"]
    assert not any("OUTSIDE" in r["text"] for r in results)
    inside = [p for p in root.iterdir() if p.name.startswith("d")]
    names = [q.name for p in inside if p.is_dir() and not p.is_symlink() for q in p.iterdir()]
    written = sum(1 for r in results if r["tool"] == "write" and r["ok"])
    assert sum(1 for n in names if n.startswith("f")) == written
    assert not [n for n in names if n.startswith(".tether")]


def test_a_staged_edit_never_follows_a_symlink_swapped_in_before_accept(scene):
    base, root, outside = scene
    env = env_for(base)
    (root / "pkg").mkdir()
    (root / "pkg" / "m.py").write_text("x = old()\n")
    (outside / "m.py").write_text("x = old()\n")
    proc = subprocess.Popen(
        [TETHER, "call", "--stdin", "--root", str(root)], stdin=subprocess.PIPE,
        stdout=subprocess.PIPE, text=True, env=env,
    )
    try:
        proc.stdin.write(json.dumps({"tool": "ast_edit", "args": {
            "pattern": "old()", "rewrite": "new()", "path": "pkg", "language": "python"}}) + "\n")
        proc.stdin.flush()
        staged = json.loads(proc.stdout.readline())
        assert staged["ok"], staged
        change = re.search(r"edit_\d+", staged["text"]).group(0)
        (root / "pkg").rename(root / "pkg.real")
        (root / "pkg").symlink_to(outside)
        proc.stdin.write(json.dumps({"tool": "resolve", "args": {
            "edit_id": change, "action": "accept"}}) + "\n")
        proc.stdin.close()
        accepted = json.loads(proc.stdout.readline())
    finally:
        proc.wait(timeout=60)
    assert not accepted["ok"], accepted
    assert (outside / "m.py").read_text() == "x = old()\n"
    assert (root / "pkg.real" / "m.py").read_text() == "x = old()\n"


def test_two_processes_editing_one_file_lose_no_confirmed_edit(scene):
    base, root, outside = scene
    env = env_for(base)
    n = 200
    tokens = {p: [f"<{p}{i:03}>" for i in range(n)] for p in "ab"}
    (root / "shared.txt").write_text("\n".join(tokens["a"] + tokens["b"]) + "\n")

    def one(p):
        lines = [("edit", {"path": "shared.txt", "old_string": t, "new_string": t.upper()})
                 for t in tokens[p]]
        return calls(root, env, lines)

    results = {}
    workers = [threading.Thread(target=lambda p=p: results.__setitem__(p, one(p))) for p in "ab"]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    end = (root / "shared.txt").read_text()
    confirmed = [t.upper() for p in "ab" for t, r in zip(tokens[p], results[p]) if r["ok"]]
    lost = [t for t in confirmed if t not in end]
    assert not lost, f"{len(lost)} confirmed edits lost, e.g. {lost[:5]}"
    assert len(confirmed) > n  # both made progress


def test_the_trust_list_and_user_config_cannot_be_written_through_a_tool(tmp_path):
    home = tmp_path / "home"
    (home / ".config" / "tether").mkdir(parents=True)
    env = env_for(tmp_path, HOME=str(home), TETHER_CONFIG_DIR=None, XDG_CONFIG_HOME=None)
    trust = f'[[workspace]]\nroot = "{home}"\nconfig = "none"\n'
    out = tether(["call", "write", json.dumps({"path": ".config/tether/trusted.toml",
                                               "content": trust}), "--root", str(home)], env)
    assert out.returncode != 0
    assert "no tool may write" in out.stdout, out.stdout
    assert not (home / ".config" / "tether" / "trusted.toml").exists()
    # Even planted by other means, a trust list inside the workspace trusts nothing.
    (home / ".config" / "tether" / "trusted.toml").write_text(trust)
    (home / "tether.toml").write_text('[files]\nread_roots = ["/"]\n')
    out = tether(["call", "read", '{"path": "/etc/hostname"}', "--root", str(home)], env)
    assert out.returncode != 0, out.stdout
    assert "not readable here" in out.stdout, out.stdout


def test_a_workspace_config_symlink_is_refused_without_echoing_its_target(scene):
    base, root, outside = scene
    (root / "tether.toml").symlink_to("/etc/passwd")
    out = tether(["call", "read", '{"path": "a.txt"}', "--root", str(root)], env_for(base))
    assert out.returncode != 0
    assert "regular file" in out.stderr, out.stderr
    assert "root:" not in out.stderr + out.stdout


def test_a_fifo_is_refused_at_once(scene):
    base, root, outside = scene
    os.mkfifo(root / "pipe")
    env = env_for(base)
    for tool, args in (("write", {"path": "pipe", "content": "x"}), ("read", {"path": "pipe"})):
        out = tether(["call", tool, json.dumps(args), "--root", str(root)], env, timeout=30)
        assert out.returncode != 0
        assert "FIFO" in out.stdout, out.stdout


def test_a_500_mb_sparse_file_is_read_in_bounded_memory(scene):
    base, root, outside = scene
    big = root / "big.log"
    with open(big, "wb") as f:
        f.write(b"first line\n" * 1000)
        f.truncate(500 << 20)
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    out = tether(["call", "read", '{"path": "big.log"}', "--root", str(root)], env_for(base))
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    assert out.returncode == 0, out.stdout + out.stderr
    assert "(lines 1-" in out.stdout and "of at least" in out.stdout, out.stdout[:200]
    # Loading the file would need 500 MB at least; streaming needs a few.
    assert max(peak_kib, before) < 200 * 1024, f"peak RSS {peak_kib} KiB"


def test_set_id_bits_never_reach_new_content_owned_by_someone_else(scene):
    base, root, outside = scene
    tool = root / "tool.sh"
    tool.write_text("echo v1\n")
    as_root = os.geteuid() == 0
    if as_root:
        os.chown(tool, 65534, 65534)
    os.chmod(tool, 0o4755)
    out = tether(["call", "write", '{"path": "tool.sh", "content": "echo v2\\n"}',
                  "--root", str(root)], env_for(base))
    assert out.returncode == 0, out.stdout + out.stderr
    st = tool.stat()
    assert tool.read_text() == "echo v2\n"
    if as_root:
        assert (st.st_uid, st.st_gid) == (65534, 65534), "owner kept"
    # Same owner as before, so the bits may stay; a different owner would have lost them.
    assert st.st_mode & 0o7777 == 0o4755
