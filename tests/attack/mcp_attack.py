"""Attack-suite helpers: a real `tether serve` over stdio with the official MCP Python SDK,
plus what the tests measure about that server process (peak memory, CPU time) from /proc.
(Not a conftest.py: tests/mcp imports its own `conftest` by name, and the two would clash.)"""

import contextlib
import os
import pathlib
import tempfile

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

ROOT = pathlib.Path(__file__).resolve().parents[2]
TETHER = os.environ.get("TETHER_BIN", str(ROOT / "target" / "debug" / "tether"))


@contextlib.asynccontextmanager
async def serve(root, surface="agent", user_config=None):
    """An initialized client session over a fresh `tether serve --root ROOT` process, with
    `user_config` as the user's own (trusted) tether.toml when given."""
    root = pathlib.Path(root)
    cfg = root.parent / "cfg"
    if user_config is not None:
        cfg.mkdir(exist_ok=True)
        (cfg / "tether.toml").write_text(user_config)
    params = StdioServerParameters(
        command=TETHER,
        args=["serve", "--root", str(root), "--surface", surface],
        env={
            "TETHER_CONFIG_DIR": str(cfg),
            "TETHER_STATE_DIR": str(root.parent / "state"),
            "PATH": os.environ.get("PATH", ""),
        },
    )
    async with stdio_client(params) as streams:
        async with ClientSession(*streams) as s:
            await s.initialize()
            yield s


def text(result):
    """All text content of a tool result, joined."""
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


def server_pid(root):
    """The pid of the `tether serve` process serving ROOT (the root path is unique per test)."""
    want = ["serve", "--root", str(root)]
    for entry in pathlib.Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            argv = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        args = [a.decode(errors="replace") for a in argv if a]
        if len(args) >= 4 and args[1:4] == want:
            return int(entry.name)
    raise AssertionError(f"no `tether serve` process for {root}")


def peak_rss_mib(pid):
    """The process's peak resident memory so far (VmHWM), in MiB."""
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise AssertionError(f"no VmHWM for pid {pid}")


def cpu_seconds(pid):
    """User plus system CPU time the process has used, in seconds."""
    stat = pathlib.Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.fixture
def workspace():
    with tempfile.TemporaryDirectory() as outer:
        root = pathlib.Path(outer) / "ws"
        root.mkdir()
        yield root
