"""A long call's progress reaches a real MCP client, through a host command line that adds a
slow tool to tether's own front ends (crates/cli/examples/host_cli.rs)."""

import os
import pathlib

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import ROOT, text

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
