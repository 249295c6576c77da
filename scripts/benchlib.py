"""What the benchmarks share: an MCP client over `tether serve`, the memory of a process tree,
a process's own CPU time, a minimal LSP client for the raw servers, and medians."""

import json
import os
import statistics
import subprocess
import threading
import time

def median(xs):
    return statistics.median(xs) if xs else float("nan")


def ticks_ms(pid):
    """The CPU time `pid` has used (user and system, every thread including those that ended,
    not its children), in ms, at the tick's 10 ms grain: summed over many calls, it loses
    nothing to threads that came and went."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def status_kib(pid, field):
    """A `/proc/PID/status` figure such as VmRSS or VmHWM, in KiB."""
    with open(f"/proc/{pid}/status") as f:
        return next((int(l.split()[1]) for l in f if l.startswith(field + ":")), 0)


def _stat(pid):
    """`/proc/PID/stat` as the process's name and the fields after it; None once it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            head, tail = f.read().rsplit(")", 1)
    except (OSError, ValueError):
        return None
    return head.split("(", 1)[1], tail.split()


def descendants(pids):
    """These processes and all their live descendants, each once."""
    children = {}
    for entry in os.listdir("/proc"):
        stat = _stat(entry) if entry.isdigit() else None
        if stat:
            children.setdefault(int(stat[1][1]), []).append(int(entry))
    seen, todo = set(), list(pids)
    while todo:
        p = todo.pop()
        if p not in seen:
            seen.add(p)
            todo.extend(children.get(p, []))
    return seen


def tree_by_name(pids, field="VmRSS:", source="status"):
    """The RSS (or, with field="Pss:" and source="smaps_rollup", the proportional share) of
    these processes and all their descendants, each counted once, per process name (comm),
    in KiB."""
    out = {}
    for p in descendants(pids):
        stat = _stat(p)
        try:
            with open(f"/proc/{p}/{source}") as f:
                kib = next((int(l.split()[1]) for l in f if l.startswith(field)), 0)
        except (OSError, ValueError, IndexError):
            continue
        if stat:
            out[stat[0]] = out.get(stat[0], 0) + kib
    return out


def tree_rss_kib(pids, field="VmRSS:", source="status"):
    """tree_by_name's figures summed over the names."""
    return sum(tree_by_name(pids, field, source).values())


class Mcp:
    """One `tether serve` session, spoken to as an MCP client would."""

    def __init__(self, tether, env, root, host):
        self.p = subprocess.Popen([tether, "serve", "--host" if host else "--no-host"], cwd=root, env=env,
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.n = 0
        self.request("initialize", {"protocolVersion": "2025-06-18", "capabilities": {},
                                    "clientInfo": {"name": "bench", "version": "0"}})
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
        self.p.stdin.flush()

    def request(self, method, params):
        self.n += 1
        self.p.stdin.write(json.dumps({"jsonrpc": "2.0", "id": self.n, "method": method, "params": params}) + "\n")
        self.p.stdin.flush()
        while True:
            line = self.p.stdout.readline()
            assert line, "serve closed"
            reply = json.loads(line)
            if reply.get("id") == self.n:
                return reply

    def call(self, tool, args):
        reply = self.request("tools/call", {"name": tool, "arguments": args})
        return "\n".join(b.get("text", "") for b in reply["result"]["content"])

    def close(self):
        self.p.stdin.close()
        try:
            self.p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.p.kill()


class RawLsp:
    """A minimal LSP client: the raw server's own speed, with nothing of tether between."""

    def __init__(self, command, root, env, init_options=None):
        self.p = subprocess.Popen(command, cwd=root, env=env, stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.n, self.answers, self.cv = 0, {}, threading.Condition()
        self.progress, self.quiescent = set(), None
        threading.Thread(target=self._read, daemon=True).start()
        uri = "file://" + root
        caps = {"window": {"workDoneProgress": True},
                "experimental": {"serverStatusNotification": True},
                "textDocument": {"publishDiagnostics": {"versionSupport": True}},
                "workspace": {"configuration": True, "workspaceFolders": True}}
        self.request("initialize", {"processId": os.getpid(), "rootUri": uri, "capabilities": caps,
                                    "workspaceFolders": [{"uri": uri, "name": "w"}],
                                    "initializationOptions": init_options or {}}, 600)
        self.notify("initialized", {})

    def _send(self, message):
        body = json.dumps(message).encode()
        self.p.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.p.stdin.flush()

    def _read(self):
        out = self.p.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message = json.loads(out.read(length))
            method = message.get("method")
            if method and "id" in message:
                result = [None] * len(message.get("params", {}).get("items", [])) \
                    if method == "workspace/configuration" else None
                self._send({"jsonrpc": "2.0", "id": message["id"], "result": result})
                continue
            with self.cv:
                if method == "$/progress":
                    token, kind = message["params"]["token"], message["params"]["value"].get("kind")
                    (self.progress.add if kind == "begin" else self.progress.discard)(token) \
                        if kind in ("begin", "end") else None
                elif method == "experimental/serverStatus":
                    self.quiescent = message["params"].get("quiescent")
                elif "id" in message:
                    self.answers[message["id"]] = message
                self.cv.notify_all()

    def notify(self, method, params):
        self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def request(self, method, params, timeout=120):
        self.n += 1
        n = self.n
        self._send({"jsonrpc": "2.0", "id": n, "method": method, "params": params})
        with self.cv:
            self.cv.wait_for(lambda: n in self.answers, timeout)
            return self.answers.pop(n, {"error": "timed out"})

    def open(self, path, language):
        with open(path) as f:
            text = f.read()
        self.notify("textDocument/didOpen", {"textDocument": {"uri": "file://" + path, "languageId": language,
                                                              "version": 1, "text": text}})

    def close(self):
        try:
            self.request("shutdown", None, 10)
            self.notify("exit", None)
            self.p.wait(timeout=10)
        except Exception:
            pass
        if self.p.poll() is None:
            self.p.kill()


def host_pid(tether, env, root):
    """The pid of the host serving `root`, if one runs."""
    done = subprocess.run([tether, "host", "--status", "--root", str(root)], env=env, capture_output=True,
                          text=True, timeout=180)
    try:
        return json.loads(done.stdout)["pid"]
    except (ValueError, KeyError):
        return None


def stop_host(tether, env, root):
    subprocess.run([tether, "host", "--stop", "--root", str(root)], env=env, capture_output=True, timeout=180)


def tree_cpu_ms(pid):
    """The CPU time `pid` and its live descendants have used so far, in ms."""
    stats = (_stat(p) for p in descendants([pid]))
    ticks = sum(int(s[1][11]) + int(s[1][12]) for s in stats if s)
    return ticks * 1000 / os.sysconf("SC_CLK_TCK")


def wait_calm(pid, calm=3.0, limit=600.0):
    """Waits until `pid` and its descendants (a host and the language servers it warmed) used
    under a tenth of a core for `calm` seconds, at most `limit` seconds: a timing taken while a
    server indexes measures the contention, not tether. Returns how long it waited."""
    began = time.monotonic()
    last, since = tree_cpu_ms(pid), time.monotonic()
    while time.monotonic() - began < limit and time.monotonic() - since < calm:
        time.sleep(0.5)
        now = tree_cpu_ms(pid)
        if now - last > 50:
            since = time.monotonic()
        last = now
    return time.monotonic() - began


def wait_until(predicate, limit, step=0.25):
    """Polls `predicate` until it holds or `limit` seconds pass; whether it held."""
    end = time.monotonic() + limit
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(step)
    return False
