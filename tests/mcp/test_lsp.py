"""The lsp tools through a real MCP client on a small Rust crate with the real rust-analyzer:
navigation the model can paste into its next call, a mistake it can fix from the answer,
and a rename across files."""

import asyncio
import os
import pathlib

import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from conftest import TETHER, text

LIB = "pub mod shapes;\n\npub fn total(items: &[shapes::Square]) -> u32 {\n    items.iter().map(|s| s.side).sum()\n}\n"
SHAPES = "/// A square.\npub struct Square {\n    pub side: u32,\n}\n"


def run(workspace, script):
    cfg = workspace.parent / "cfg"
    cfg.mkdir(exist_ok=True)
    (cfg / "tether.toml").write_text("[lsp]\nrequest_timeout_s = 120\ninit_timeout_s = 120\n")
    params = StdioServerParameters(
        command=TETHER,
        args=["serve", "--root", str(workspace)],
        env={"TETHER_CONFIG_DIR": str(cfg), "TETHER_STATE_DIR": str(workspace.parent / "state"),
             "PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "")},
    )

    async def main():
        async with stdio_client(params) as streams:
            async with ClientSession(*streams) as s:
                await s.initialize()
                out = []
                for name, args in script:
                    r = await s.call_tool(name, args)
                    out.append((bool(r.is_error), text(r)))
                return out

    return asyncio.run(asyncio.wait_for(main(), timeout=240))


@pytest.fixture
def crate(workspace):
    (workspace / "Cargo.toml").write_text('[package]\nname = "m"\nversion = "0.1.0"\nedition = "2021"\n')
    (workspace / "src").mkdir()
    (workspace / "src" / "lib.rs").write_text(LIB)
    (workspace / "src" / "shapes.rs").write_text(SHAPES)
    return workspace


def test_lsp_navigation_mistakes_and_rename_through_mcp(crate):
    out = run(crate, [
        ("lsp", {"action": "definition", "file": "src/lib.rs", "line": 3, "symbol": "Square"}),
        ("lsp", {"action": "hover", "file_path": "src/lib.rs", "line": 3, "symbol": "Sqare"}),
        ("lsp_rename", {"file": "src/shapes.rs", "line": 2, "symbol": "Square", "new_name": "Quad"}),
    ])
    (e1, definition), (e2, typo), (e3, renamed) = out
    assert not e1 and "src/shapes.rs:2  Square  | pub struct Square {" in definition, definition
    assert e2 and "`Sqare` does not occur on line 3" in typo, typo
    assert not e3 and "in 2 files" in renamed, renamed
    assert "Quad" in (crate / "src" / "lib.rs").read_text()
