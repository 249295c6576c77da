"""Writes sent back-to-back, without waiting for replies, take the workspace permit in the
order they arrived on the wire, as the gate's first come, first served promise says."""

from wire import server, tool_text, workspace  # noqa: F401 (fixtures)

TRIALS = 30


def ok(reply):
    assert "result" in reply, reply
    assert not reply["result"].get("isError"), tool_text(reply)
    return tool_text(reply)


def test_pipelined_dependent_edits_apply_in_arrival_order(server, workspace):
    server.initialize()
    for trial in range(TRIALS):
        name = f"t{trial}.txt"
        server.send(server.call(f"w{trial}", "write", {"path": name, "content": "step0\n"}))
        ok(server.reply(f"w{trial}"))
        edits = [
            server.call(
                f"e{trial}-{i}",
                "edit",
                {"path": name, "old_string": f"step{i}", "new_string": f"step{i + 1}"},
            )
            for i in range(3)
        ]
        server.send(*edits)
        for i in range(3):
            reply = server.reply(f"e{trial}-{i}")
            assert not reply["result"].get("isError"), (trial, i, tool_text(reply))
        assert (workspace / name).read_text() == "step3\n", trial


def test_reads_and_bad_lines_between_pipelined_writes_keep_the_order(server, workspace):
    (workspace / "other.txt").write_text("other\n")
    server.initialize()
    for trial in range(TRIALS):
        name = f"r{trial}.txt"
        batch = [server.call(f"w{trial}-0", "write", {"path": name, "content": "v0\n"})]
        for i in range(3):
            batch.append(server.call(f"r{trial}-{i}", "read", {"path": "other.txt"}))
            batch.append(server.request(f"bad{trial}-{i}", "tools/call", {"name": "edit", "arguments": "s"}))
            batch.append(
                server.call(
                    f"w{trial}-{i + 1}",
                    "edit",
                    {"path": name, "old_string": f"v{i}", "new_string": f"v{i + 1}"},
                )
            )
        server.send(*batch)
        for i in range(4):
            ok(server.reply(f"w{trial}-{i}"))
        for i in range(3):
            assert "other" in ok(server.reply(f"r{trial}-{i}"))
            assert server.reply(f"bad{trial}-{i}")["error"]["code"] == -32602
        assert (workspace / name).read_text() == "v3\n", trial


def test_a_cancelled_write_does_not_hold_up_the_next(server, workspace):
    server.initialize()
    (workspace / "c.txt").write_text("c0\n")
    server.send(
        server.call("c1", "edit", {"path": "c.txt", "old_string": "c0", "new_string": "c1"}),
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": "c1", "reason": "test"},
        },
        server.call("c2", "write", {"path": "d.txt", "content": "d\n"}),
    )
    ok(server.reply("c2", timeout=10))
    assert (workspace / "d.txt").read_text() == "d\n"
