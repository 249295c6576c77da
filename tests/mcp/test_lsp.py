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


def test_a_fix_listed_then_applied_through_mcp_with_the_mistakes_models_make(crate):
    # `Square { }` lacks its field: rust-analyzer offers to fill it.
    (crate / "src" / "lib.rs").write_text(LIB + "\npub fn unit() -> shapes::Square {\n    shapes::Square {}\n}\n")
    out = run(crate, [
        ("lsp_fix", {"file": "src/lib.rs", "action": 1}),
        ("lsp", {"action": "code_actions", "file": "src/lib.rs"}),
        ("lsp_fix", {"file": "src/lib.rs", "action": "fill the fields"}),
        ("lsp_fix", {"file": "src/lib.rs", "action": 9}),
        ("lsp_fix", {"file": "src/lib.rs", "action": "fill struct"}),
        ("lsp_fix", {"file": "src/lib.rs", "action": 1}),
    ])
    (e1, unlisted), (e2, listed), (e3, typo), (e4, past), (e5, fixed), (e6, again) = out
    assert e1 and "list them with `lsp` `code_actions`" in unlisted, unlisted
    assert not e2 and "1. Fill struct fields (quickfix)" in listed, listed
    assert e3 and "no listed action's title has `fill the fields`" in typo and "1. Fill struct" in typo, typo
    assert e4 and "there is no action 9" in past, past
    assert not e5 and fixed.startswith("applied `Fill struct fields` (rust-analyzer)"), fixed
    assert "src/lib.rs: fixed 1 problem; none left" in fixed, fixed
    assert e6 and "changed since its code actions were listed" in again, again
    assert "shapes::Square { side: todo!() }" in (crate / "src" / "lib.rs").read_text()


def test_a_change_judged_before_it_is_written_through_mcp_with_the_mistakes_models_make(crate):
    # A field added to `Square` breaks lib.rs, which builds one without it.
    (crate / "src" / "lib.rs").write_text(LIB + "\npub fn unit() -> shapes::Square {\n    shapes::Square { side: 1 }\n}\n")
    add_field = {"path": "src/shapes.rs", "old_string": "    pub side: u32,\n",
                  "new_string": "    pub side: u32,\n    pub name: String,\n"}
    out = run(crate, [
        ("lsp", {"action": "diagnostics", "file": "src/lib.rs"}),
        ("edit", dict(add_field, dry_run="true")),
        ("edit", dict(add_field, dry_run=True)),
        ("resolve", {"edit_id": "edit_2", "action": "accept"}),
        ("lsp", {"action": "diagnostics", "file": "src/lib.rs"}),
        ("resolve", {"edit_id": "edit_1", "action": "accept"}),
    ])
    (_, before), (e1, wrong_type), (e2, staged), (e3, stale_id), (_, after), (e4, accepted) = out
    assert "no errors" in before, before
    assert e1 and "expected a boolean" in wrong_type, wrong_type
    assert not e2 and staged.startswith("(proposed, dry run) 1 replacement in src/shapes.rs"), staged
    assert 'edit_id "edit_1"' in staged and "+    pub name: String," in staged, staged
    assert "would bring: 1 new problem in 1 file" in staged, staged
    assert "src/lib.rs (another file, not written): 1 new problem" in staged and "[E0063]" in staged, staged
    assert e3 and 'unknown edit_id "edit_2"; pending: edit_1' in stale_id, stale_id
    assert "no errors" in after, after
    assert not e4 and accepted.startswith("accepted edit_1"), accepted
    assert "src/lib.rs (another file, not written): 1 new problem" in accepted, accepted
    assert "pub name: String" in (crate / "src" / "shapes.rs").read_text()


def descendants_named(pid, name):
    """Pids below `pid` whose command name is `name`, from /proc."""
    kids = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            stat = open(f"/proc/{entry}/stat").read()
        except OSError:
            continue
        comm = stat[stat.index("(") + 1:stat.rindex(")")]
        parent = int(stat[stat.rindex(")") + 2:].split()[1])
        kids.setdefault(parent, []).append((int(entry), comm))
    found, todo = [], [pid]
    while todo:
        for child, comm in kids.get(todo.pop(), []):
            todo.append(child)
            if comm == name:
                found.append(child)
    return found


def test_a_2026_07_28_client_without_a_handshake_still_gets_the_warm_up(crate):
    """Such a client sends no `initialize`; its first request starts the warm-up instead."""
    cfg = crate.parent / "cfg"
    cfg.mkdir(exist_ok=True)
    params = StdioServerParameters(
        command=TETHER, args=["serve", "--root", str(crate)],
        env={"TETHER_CONFIG_DIR": str(cfg), "PATH": os.environ.get("PATH", ""), "HOME": os.environ.get("HOME", "")},
    )

    async def main():
        async with stdio_client(params) as streams:
            async with ClientSession(*streams) as s:
                await s.discover()
                assert s.protocol_version == "2026-07-28"
                await s.list_tools()
                serve = [int(p) for p in os.popen(f"pgrep -f 'serve --root {crate}'").read().split()]
                assert serve, "tether serve not found"
                for _ in range(300):
                    if descendants_named(serve[0], "rust-analyzer"):
                        return
                    await asyncio.sleep(0.1)
                raise AssertionError("no rust-analyzer was started after the first request")

    asyncio.run(asyncio.wait_for(main(), timeout=120))
