"""Hostile inputs to ast_grep and ast_edit through the real `tether serve`: none may abort the
server, and each ends with a clear error or a clearly marked bounded result, in bounded memory.

Every call runs under a deadline; there are no timing asserts (times go in the report)."""

import asyncio
import pathlib

import anyio

from mcp_attack import cpu_seconds, peak_rss_mib, serve, server_pid, text, workspace  # noqa: F401

# Generous: the server idles at about 20 MiB, and each input below once took 1 to 2 GiB.
MEMORY_BOUND_MIB = 400


def run(coro, deadline=180):
    return asyncio.run(asyncio.wait_for(coro, timeout=deadline))


def nested(n, inner):
    return "(" * n + inner + ")" * n


async def still_answers(s, workspace):
    """A plain search after the attack gives the right answer: the server is alive and sane."""
    (workspace / "ok.py").write_text("log(1)\nlog(2)\n")
    r = await s.call_tool("ast_grep", {"pattern": "log($A)", "path": "ok.py"})
    assert not r.is_error and text(r).startswith("2 matches in 1 file\n"), text(r)


def test_a_deep_pattern_is_refused_on_the_plan_surface_and_the_server_lives(workspace):
    # 4,000 nested parentheses overflowed a tokio worker's stack and aborted the server.
    (workspace / "a.js").write_text("x = (y);\n")

    async def main():
        async with serve(workspace, "plan") as s:
            r = await s.call_tool("ast_grep", {"pattern": nested(4000, "x"), "path": "a.js"})
            await still_answers(s, workspace)
            return r

    r = run(main())
    assert r.is_error
    msg = text(r)
    assert "nests 4000 levels deep" in msg and "limit of 1000" in msg, msg
    assert "metavariable such as `$X`" in msg, msg


def test_a_pattern_just_under_the_limit_is_searched_on_a_large_stack(workspace):
    code = nested(990, "x")
    (workspace / "a.js").write_text(f"y = {code};\n")

    async def main():
        async with serve(workspace, "plan") as s:
            r = await s.call_tool("ast_grep", {"pattern": code, "path": "a.js"})
            await still_answers(s, workspace)
            return r

    r = run(main())
    assert not r.is_error and text(r).startswith("1 match in 1 file\n"), text(r)[:300]


def test_a_file_nested_too_deep_is_skipped_and_said_so(workspace):
    # Comparing the two sides of `$A + $A` recursed once per level of the file.
    side = nested(30000, "a")
    (workspace / "deep.js").write_text(f"x = {side} + {side};\n")

    async def main():
        async with serve(workspace, "plan") as s:
            r = await s.call_tool("ast_grep", {"pattern": "$A + $A", "path": "deep.js"})
            await still_answers(s, workspace)
            return r

    r = run(main())
    out = text(r)
    assert not r.is_error and out.startswith("0 matches\n"), out
    assert "searched 0 javascript files" in out, out
    assert "skipped 1 nested deeper than 10000 syntax-tree levels" in out, out


def test_the_reported_30000_deep_file_ends_with_a_clear_note_in_bounded_memory(workspace):
    # `($X)` on this 60 KB file took 46 s and 1.8 GB.
    for name, line in [("deep.js", "x = {};\n"), ("deep.py", "x = {}\n")]:
        (workspace / name).write_text(line.format(nested(30000, "a")))

    async def main():
        async with serve(workspace) as s:
            pid = server_pid(workspace)
            out = []
            for name in ["deep.js", "deep.py"]:
                r = await s.call_tool("ast_grep", {"pattern": "($X)", "path": name})
                assert not r.is_error, text(r)
                out.append(text(r))
            await still_answers(s, workspace)
            return out, peak_rss_mib(pid)

    (js, py), peak = run(main())
    for out in [js, py]:
        assert out.startswith("0 matches\n"), out
        assert "skipped 1 nested deeper than 10000 syntax-tree levels" in out, out
    assert peak < MEMORY_BOUND_MIB, f"server peaked at {peak:.0f} MiB"


def test_nested_matches_are_counted_not_copied(workspace):
    # Twenty nests of 5,000: 100,000 matches whose texts add up to about 1 GB.
    line = f"x = {nested(5000, 'a')};\n"
    (workspace / "nests.js").write_text(line * 20)

    async def main():
        async with serve(workspace) as s:
            pid = server_pid(workspace)
            r = await s.call_tool("ast_grep", {"pattern": "($X)", "path": "nests.js"})
            await still_answers(s, workspace)
            return r, peak_rss_mib(pid)

    r, peak = run(main())
    out = text(r)
    assert not r.is_error and out.startswith("100000 matches in 1 file\n"), out[:300]
    assert "showing the first 50 of 100000 matches" in out, out[-600:]
    assert "… [+9879 chars]" in out.splitlines()[2], out.splitlines()[2]
    assert len(out) < 100_000, len(out)
    assert peak < MEMORY_BOUND_MIB, f"server peaked at {peak:.0f} MiB"


def many_var_edit(workspace):
    """A 120 KB file and a 16 KB template naming its metavariable 4,000 times."""
    (workspace / "flat.js").write_text("f(1);\n" * 20000)
    template = "g(" + ", ".join(["$A"] * 4000) + ")"
    assert 15_000 < len(template) < 17_000
    return {"pattern": "f($A)", "rewrite": template, "path": "flat.js"}


def test_an_edit_that_would_stage_too_much_ends_with_the_budget_error(workspace):
    # This edit took 337 s and 1.45 GB, and would have staged some 240 MB.
    args = many_var_edit(workspace)
    (workspace / "lit.js").write_text("f(1);\n" * 20000)
    literal = {"pattern": "f($A)", "rewrite": "g($A, `" + "x" * 16000 + "`)", "path": "lit.js"}

    async def main():
        async with serve(workspace) as s:
            pid = server_pid(workspace)
            many = await s.call_tool("ast_edit", args)
            lit = await s.call_tool("ast_edit", literal)
            small = await s.call_tool("ast_edit", {"pattern": "log($A)", "rewrite": "info($A)",
                                                    "path": "flat.js"})
            await still_answers(s, workspace)
            return many, lit, small, peak_rss_mib(pid)

    many, lit, small, peak = run(main())
    for r in [many, lit]:
        msg = text(r)
        assert r.is_error, msg[:300]
        assert "more than 64 MiB of new file content" in msg and "nothing was staged" in msg, msg
    assert not small.is_error and "0 matches; nothing was staged" in text(small), text(small)
    assert peak < MEMORY_BOUND_MIB, f"server peaked at {peak:.0f} MiB"


def test_the_rewrite_budget_comes_from_the_structural_section(workspace):
    # 20,000 replacements of about 120 bytes: some 2.4 MB, under the default 64 MiB.
    (workspace / "flat.js").write_text("f(1);\n" * 20000)
    args = {"pattern": "f($A)", "rewrite": "g($A, '" + "x" * 110 + "')", "path": "flat.js"}

    async def main(config):
        async with serve(workspace, user_config=config) as s:
            return await s.call_tool("ast_edit", args)

    tight = run(main("[structural]\nrewrite_budget_mb = 1\n"))
    msg = text(tight)
    assert tight.is_error and "more than 1 MiB of new file content" in msg, msg[:400]
    assert "`[structural] rewrite_budget_mb`" in msg, msg
    default = run(main(""))
    assert not default.is_error, text(default)[:400]
    assert text(default).startswith("(proposed) 20000 replacements in 1 file"), text(default)[:400]


def runnable_threads(pid):
    """How many of the process's threads are running or waiting for a CPU (state R)."""
    count = 0
    for task in pathlib.Path(f"/proc/{pid}/task").iterdir():
        try:
            stat = (task / "stat").read_text()
        except OSError:
            continue
        count += stat[stat.rindex(")") + 2] == "R"
    return count


def test_a_cancelled_edit_stops_working_and_the_server_answers(workspace):
    # Cancellation was looked at only between files: this one-file edit ran on for minutes.
    # Uncancelled, it works for some 3 s of CPU (debug build) before its budget error.
    args = many_var_edit(workspace)

    async def main():
        async with serve(workspace) as s:
            pid = server_pid(workspace)
            finished, scope = [], anyio.CancelScope()

            async def edit():
                with scope:
                    finished.append(await s.call_tool("ast_edit", args))

            # Cancelled once the server has spent 0.3 s of CPU on the edit: it is at work, however
            # slowly a loaded machine runs it (a cancel before it began would prove nothing).
            async with anyio.create_task_group() as tg:
                start = cpu_seconds(pid)
                tg.start_soon(edit)
                while not finished and cpu_seconds(pid) - start < 0.3:
                    await asyncio.sleep(0.02)
                scope.cancel()
                cancelled_at = cpu_seconds(pid)
            assert not finished, f"the edit finished before it could be cancelled: {finished}"
            # Idle means a quarter second with (almost) no CPU used, and then no thread running
            # or waiting for a CPU (a server starved by other load but still working is runnable).
            before, idle = cpu_seconds(pid), False
            for _ in range(240):
                await asyncio.sleep(0.25)
                now = cpu_seconds(pid)
                if now - before < 0.05 and runnable_threads(pid) == 0:
                    idle = True
                    break
                before = now
            assert idle, "the server kept working for 60 s after the call was cancelled"
            # CPU, not wall time, so load cannot matter: an edit that ignored the cancel would
            # spend its remaining 3 s before its budget error stopped it.
            after = cpu_seconds(pid) - cancelled_at
            print(f"CPU after the cancel: {after:.2f} s")
            assert after < 1.0, f"the server spent {after:.2f} s of CPU after the cancel"
            await still_answers(s, workspace)

    run(main(), deadline=120)


def test_a_huge_pattern_is_refused_before_it_is_parsed(workspace):
    # A 3 MB pattern took 7 s and 570 MB to compile, once per rung of the ladder.
    (workspace / "a.js").write_text("f(1);\n")
    pattern = "f(" + ", ".join(["a"] * 1_000_000) + ")"

    async def main():
        async with serve(workspace, "plan") as s:
            pid = server_pid(workspace)
            r = await s.call_tool("ast_grep", {"pattern": pattern, "path": "a.js"})
            await still_answers(s, workspace)
            return r, peak_rss_mib(pid)

    r, peak = run(main())
    assert r.is_error and "more than the limit of 64 KiB" in text(r), text(r)[:300]
    assert peak < 200, f"server peaked at {peak:.0f} MiB"
