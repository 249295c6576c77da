"""`tether serve` driven by the official MCP Python SDK, a client we did not write."""

import asyncio
import os

from conftest import session, text

PATCH_TWO_FILES = """*** Begin Patch
*** Update File: a.txt
@@
 alpha
-beta
+BETA
*** Update File: b.txt
@@
 one
-two
+TWO
*** Add File: c.txt
+new
*** End Patch
"""


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, timeout=60))


def test_server_name_and_tool_lists_per_surface(workspace):
    async def main():
        names = {}
        for surface in ["agent", "plan", "readonly"]:
            async with session(workspace, surface) as s:
                assert s.server_name == "tether"
                tools = (await s.list_tools()).tools
                names[surface] = {t.name: t for t in tools}
        return names

    names = run(main())
    agent, plan = names["agent"], names["plan"]
    assert {"read", "write", "edit", "apply_patch", "resolve"} <= set(agent)
    assert "read" in plan
    for hidden in ["write", "edit", "apply_patch", "resolve"]:
        assert hidden not in plan
        assert hidden not in names["readonly"]
    assert agent["read"].annotations.read_only_hint is True
    assert agent["write"].annotations.destructive_hint is True
    schema = agent["edit"].input_schema
    assert schema["type"] == "object"
    assert set(schema["required"]) == {"path", "old_string", "new_string"}


def test_refused_call_on_plan_is_a_tool_error(workspace):
    async def main():
        async with session(workspace, "plan") as s:
            return await s.call_tool("write", {"path": "x.txt", "content": "x"})

    result = run(main())
    assert result.is_error
    msg = text(result)
    assert "write-tier" in msg and "`plan`" in msg and "unknown" not in msg
    assert not (workspace / "x.txt").exists()


def test_write_edit_and_multi_file_patch(workspace):
    (workspace / "a.txt").write_text("alpha\nbeta\n")
    (workspace / "b.txt").write_text("one\ntwo\n")

    async def main():
        async with session(workspace) as s:
            w = await s.call_tool("write", {"path": "dir/new.txt", "content": "hello\n"})
            e = await s.call_tool(
                "edit", {"path": "dir/new.txt", "old_string": "hello", "new_string": "bye"}
            )
            p = await s.call_tool("apply_patch", {"patch": PATCH_TWO_FILES})
            r = await s.call_tool("read", {"path": "a.txt"})
            return w, e, p, r

    w, e, p, r = run(main())
    for result in (w, e, p, r):
        assert not result.is_error, text(result)
    assert (workspace / "dir/new.txt").read_text() == "bye\n"
    assert (workspace / "a.txt").read_text() == "alpha\nBETA\n"
    assert (workspace / "b.txt").read_text() == "one\nTWO\n"
    assert (workspace / "c.txt").read_text() == "new\n"
    assert "     2\tBETA" in text(r)


def test_patch_with_one_bad_hunk_changes_nothing(workspace):
    (workspace / "a.txt").write_text("alpha\nbeta\n")
    (workspace / "b.txt").write_text("one\nthree\n")  # the b.txt hunk expects "two"

    async def main():
        async with session(workspace) as s:
            return await s.call_tool("apply_patch", {"patch": PATCH_TWO_FILES})

    result = run(main())
    assert result.is_error
    msg = text(result)
    assert "b.txt" in msg and "hunk 1" in msg and "two" in msg, msg
    assert (workspace / "a.txt").read_text() == "alpha\nbeta\n"
    assert (workspace / "b.txt").read_text() == "one\nthree\n"
    assert not (workspace / "c.txt").exists()


def test_writes_that_escape_the_root_are_refused(workspace):
    outside = workspace.parent / "outside"
    outside.mkdir()
    (outside / "victim.txt").write_text("keep\n")
    os.symlink(outside, workspace / "link")
    os.symlink(outside / "victim.txt", workspace / "victim-link.txt")

    attempts = [
        ("write", {"path": "../escaped.txt", "content": "x"}),
        ("write", {"path": str(outside / "abs.txt"), "content": "x"}),
        ("write", {"path": "link/via-dir.txt", "content": "x"}),
        ("write", {"path": "victim-link.txt", "content": "x"}),
        ("edit", {"path": "victim-link.txt", "old_string": "keep", "new_string": "x"}),
        ("apply_patch", {"patch": "*** Begin Patch\n*** Add File: ../p.txt\n+x\n*** End Patch\n"}),
    ]

    async def main():
        async with session(workspace) as s:
            return [await s.call_tool(name, args) for name, args in attempts]

    for (name, args), result in zip(attempts, run(main())):
        assert result.is_error, (name, args)
        assert "outside the workspace" in text(result), text(result)
    assert sorted(p.name for p in outside.iterdir()) == ["victim.txt"]
    assert (outside / "victim.txt").read_text() == "keep\n"
    assert not (workspace.parent / "escaped.txt").exists()


def test_bad_arguments_are_tool_errors_not_crashes(workspace):
    async def main():
        async with session(workspace) as s:
            bad = await s.call_tool("edit", {"path": "x"})
            unknown = await s.call_tool("nope", {})
            still_alive = await s.call_tool("write", {"path": "ok.txt", "content": "ok"})
            return bad, unknown, still_alive

    bad, unknown, alive = run(main())
    assert bad.is_error and "\"old_string\": string (required)" in text(bad)
    assert unknown.is_error and "unknown tool `nope`" in text(unknown)
    assert not alive.is_error


def test_concurrent_dependent_edits_apply_in_the_order_sent(workspace):
    """Requests the client sends without awaiting replies take the write permit in order."""
    (workspace / "chain.txt").write_text("step0\n")

    async def main():
        async with session(workspace) as s:
            results = []
            for trial in range(10):
                base = trial * 3
                edits = [
                    s.call_tool(
                        "edit",
                        {
                            "path": "chain.txt",
                            "old_string": f"step{base + i}\n",
                            "new_string": f"step{base + i + 1}\n",
                        },
                    )
                    for i in range(3)
                ]
                results.extend(await asyncio.gather(*edits))
            return results

    results = run(main())
    assert [text(r) for r in results if r.is_error] == []
    assert (workspace / "chain.txt").read_text() == "step30\n"


def test_claude_code_names_and_a_typo_answered_with_the_nearest_line(workspace):
    (workspace / "src").mkdir()
    (workspace / "src" / "main.rs").write_text(
        'fn main() {\n    let name = "world";\n    println!("hello {name}");\n}\n'
    )

    async def main():
        async with session(workspace) as s:
            tools = {t.name: t for t in (await s.list_tools()).tools}
            typo = await s.call_tool(
                "edit",
                {
                    "file_path": "src/main.rs",
                    "old_string": 'println!("helo {name}");',
                    "new_string": 'println!("bye");',
                },
            )
            missing = await s.call_tool("read", {"file_path": "src/mian.rs"})
            fixed_line = next(
                line[1:] for line in text(typo).splitlines() if line.startswith("+")
            )
            fixed = await s.call_tool(
                "edit",
                {
                    "file_path": "src/main.rs",
                    "old_string": fixed_line.strip(),
                    "new_string": 'println!("bye");',
                },
            )
            return tools, typo, missing, fixed

    tools, typo, missing, fixed = run(main())
    # The schema names the canonical argument only; the alias is accepted all the same.
    assert "file_path" not in tools["edit"].input_schema["properties"]
    assert tools["read"].input_schema["properties"]["offset"]["minimum"] == 1
    assert typo.is_error
    msg = text(typo)
    assert "nearest text is at line 3" in msg, msg
    assert '+    println!("hello {name}");' in msg, msg
    assert missing.is_error and "did you mean src/main.rs?" in text(missing), text(missing)
    assert not fixed.is_error, text(fixed)
    assert 'println!("bye");' in (workspace / "src" / "main.rs").read_text()
