"""ast_grep, ast_edit and resolve through `tether serve` and the official MCP Python SDK."""

import asyncio

from conftest import calls, session, text


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, timeout=60))



def test_search_semantics_in_five_languages(workspace):
    files = {
        "a.dart": "class W {\n  void dispose(int x) {}\n  void run() {\n    dispose(ctrl);\n"
        "    if (c != null) c.dispose();\n    if (c != null) d.dispose();\n    var s = 'dispose(q)';\n  }\n}\n",
        "a.py": "x = a + a  # a + a\ny = a + b\ns = 'a + a'\n",
        "a.rs": "fn f() { g(a, a); g(a, b); let s = \"g(a, a)\"; }\n",
        "a.ts": "const x = a === a; // a === a\nconst y = a === b;\n",
        "a.c": "int f(int a) { return max(a, a) + max(a, 1); } /* max(a, a) */\n",
    }
    for name, src in files.items():
        (workspace / name).write_text(src)
    script = [
        ("ast_grep", {"pattern": "dispose($X)", "path": "a.dart"}),
        ("ast_grep", {"pattern": "if ($X != null) $X.dispose()", "path": "a.dart"}),
        ("ast_grep", {"pattern": "$A + $A", "path": "a.py"}),
        ("ast_grep", {"pattern": "g($X, $X)", "path": "a.rs"}),
        ("ast_grep", {"pattern": "$X === $X", "path": "a.ts"}),
        ("ast_grep", {"pattern": "max($X, $X)", "path": "a.c"}),
    ]
    results = calls(workspace, script)
    for (name, args), (err, out) in zip(script, results):
        assert not err, out
        assert out.startswith("1 match in 1 file\n"), (args, out)
    assert "a.dart:4 dispose(ctrl)" in results[0][1]
    assert "a.dart:5 " in results[1][1] and "$X = c" in results[1][1]


def test_unparseable_patterns_and_missing_language(workspace):
    script = [
        ("ast_grep", {"pattern": p, "language": lang})
        for lang, p in [
            ("dart", "void dispose("),
            ("python", "def f(:"),
            ("rust", "fn f( {"),
            ("typescript", "const = ;"),
            ("c", "int f(;"),
        ]
    ] + [("ast_grep", {"pattern": "f($A)"})]
    results = calls(workspace, script)
    for (_, args), (err, out) in zip(script[:5], results[:5]):
        assert err and f"unparseable {args['language']} pattern" in out, out
    assert results[5][0] and "`language` is required" in results[5][1]


def test_cap_and_gitignore(workspace):
    (workspace / ".gitignore").write_text("gen/\n")
    (workspace / "gen").mkdir()
    (workspace / "gen" / "x.py").write_text("log(1)\n")
    for i in range(3):
        (workspace / f"m{i}.py").write_text("".join(f"log({j})\n" for j in range(10)))
    [(err, out)] = calls(
        workspace,
        [("ast_grep", {"pattern": "log($A)", "language": "python", "max_results": 5})],
    )
    assert not err
    assert out.startswith("30 matches in 3 files\n"), out
    assert "showing the first 5 of 30 matches (in 3 files)" in out
    assert "searched 3 python files" in out and "gen/" not in out


def test_stage_accept_reject_and_discard(workspace):
    (workspace / "a.py").write_text("old(1)\n")
    (workspace / "b.py").write_text("old(2)\n")
    edit = ("ast_edit", {"pattern": "old($A)", "rewrite": "new($A)", "language": "python"})
    results = calls(
        workspace,
        [edit, ("resolve", {"edit_id": "edit_1", "action": "accept"}), ("read", {"path": "b.py"})],
    )
    assert results[0][1].startswith("(proposed) 2 replacements in 2 files"), results[0][1]
    assert 'edit_id "edit_1"' in results[0][1]
    assert not results[1][0], results[1][1]
    assert (workspace / "a.py").read_text() == "new(1)\n"
    assert (workspace / "b.py").read_text() == "new(2)\n"

    (workspace / "a.py").write_text("old(1)\n")
    (workspace / "b.py").write_text("old(2)\n")

    async def stale():
        async with session(workspace) as s:
            staged = await s.call_tool(*edit)
            (workspace / "b.py").write_text("old(2)\nchanged = True\n")
            accept = await s.call_tool("resolve", {"edit_id": "edit_1", "action": "accept"})
            staged2 = await s.call_tool(*edit)
            discard = await s.call_tool("resolve", {"edit_id": "edit_2", "action": "discard"})
            again = await s.call_tool("resolve", {"edit_id": "edit_2", "action": "accept"})
            return staged, accept, staged2, discard, again

    staged, accept, staged2, discard, again = run(stale())
    assert not staged.is_error
    assert accept.is_error and "was not written: in b.py" in text(accept), text(accept)
    assert (workspace / "a.py").read_text() == "old(1)\n"
    assert (workspace / "b.py").read_text() == "old(2)\nchanged = True\n"
    assert not staged2.is_error and not discard.is_error
    assert "nothing was written" in text(discard)
    assert again.is_error and "already discarded" in text(again)
    assert (workspace / "a.py").read_text() == "old(1)\n"


def test_plan_surface_searches_but_cannot_stage(workspace):
    (workspace / "a.py").write_text("old(1)\n")
    results = calls(
        workspace,
        [
            ("ast_grep", {"pattern": "old($A)", "language": "python"}),
            ("ast_edit", {"pattern": "old($A)", "rewrite": "new($A)", "language": "python"}),
        ],
        surface="plan",
    )
    assert not results[0][0]
    assert results[1][0] and "write-tier" in results[1][1]


def test_vendored_folders_are_skipped_and_named_in_the_footer(workspace):
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("call(1)\n")
    venv = workspace / ".venv"
    (venv / "lib").mkdir(parents=True)
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (venv / "lib" / "site.py").write_text("call(2)\n")
    (workspace / ".github").mkdir()
    (workspace / ".github" / "ci.py").write_text("call(3)\n")
    results = calls(
        workspace,
        [
            ("ast_grep", {"pattern": "call($A)", "language": "python"}),
            ("ast_grep", {"pattern": "call($A)", "language": "python", "hidden": True}),
            ("ast_grep", {"pattern": "call($A)", "language": "python", "path": ".venv"}),
        ],
    )
    assert not any(err for err, _ in results), results
    default, hidden, explicit = (out for _, out in results)
    assert default.startswith("1 match in 1 file\nsrc/app.py:1 "), default
    assert (
        "\nskipped 2 folders: 1 virtual environment (.venv), 1 dot-folder (.github); "
        "pass `hidden: true` to include dot-folders, or name a folder in `path`" in default
    ), default
    assert hidden.startswith("2 matches in 2 files\n.github/ci.py:1 "), hidden
    assert "skipped 1 virtual environment (.venv)" in hidden, hidden
    assert explicit.startswith("1 match in 1 file\n.venv/lib/site.py:1 "), explicit
