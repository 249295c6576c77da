"""Every request whose id can be recovered gets an answer with that id, whatever bytes it came
in, and no line stops the server from answering the next one (JSON-RPC 2.0, section 5)."""

import json

import pytest

from wire import server, tool_text, workspace  # noqa: F401 (fixtures)

MIB = 1024 * 1024
PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602


def error_of(reply, code):
    """The message of an error reply with `code`; fails when the reply is anything else."""
    assert "error" in reply, reply
    assert reply["error"]["code"] == code, reply
    return reply["error"]["message"]


def test_a_line_over_16_mib_gets_an_error_with_its_id(server, workspace):
    server.initialize()
    server.send(server.call(7, "write", {"path": "big.txt", "content": "x" * (16 * MIB + 10)}))
    msg = error_of(server.reply(7, timeout=60), INVALID_REQUEST)
    assert "16 MiB" in msg, msg
    assert not (workspace / "big.txt").exists()
    server.assert_alive("oversized line")


def test_the_id_of_an_oversized_line_is_found_even_after_the_payload(server, workspace):
    server.initialize()
    line = (
        b'{"jsonrpc":"2.0","method":"tools/call","params":{"name":"write","arguments":'
        b'{"path":"big.txt","content":"' + b"y" * (17 * MIB) + b'","id":"not-me"}},'
        b'"id":"after-the-payload"}\n'
    )
    server.send_raw(line)
    error_of(server.reply("after-the-payload", timeout=60), INVALID_REQUEST)
    assert not any(r.get("id") == "not-me" for r in server.replies)
    server.assert_alive("oversized line, id last")


def test_invalid_utf8_gets_a_parse_error_with_its_id(server, workspace):
    server.initialize()
    server.send_raw(
        b'{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"write",'
        b'"arguments":{"path":"u.txt","content":"\xff\xfe bad"}}}\n'
    )
    msg = error_of(server.reply(21), PARSE_ERROR)
    assert "UTF-8" in msg, msg
    assert not (workspace / "u.txt").exists()
    server.assert_alive("invalid UTF-8")


def test_a_400_digit_number_in_the_arguments_gets_a_parse_error_with_its_id(server):
    server.initialize()
    digits = "9" * 400
    server.send_raw(
        (
            '{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"read",'
            '"arguments":{"path":"a.txt","offset":' + digits + "}}}\n"
        ).encode()
    )
    msg = error_of(server.reply(22), PARSE_ERROR)
    assert "number" in msg, msg
    server.assert_alive("400-digit number")


def test_a_400_digit_id_is_echoed_back_exactly(server):
    server.initialize()
    big_id = int("1" + "0" * 399)
    server.send_raw(('{"jsonrpc":"2.0","id":' + str(big_id) + ',"method":"ping"}\n').encode())
    msg = error_of(server.reply(big_id), PARSE_ERROR)
    assert "ids must be strings or integers within 64 bits" in msg, msg
    server.assert_alive("400-digit id")


@pytest.mark.parametrize(
    "params, names",
    [
        ({"name": "write", "arguments": "str"}, "arguments"),
        ({"name": "write", "arguments": ["path", "x"]}, "arguments"),
        ({"name": 5, "arguments": {}}, "name"),
        ({"arguments": {"path": "x"}}, "name"),
        ({"name": "read", "arguments": {}, "_meta": "str"}, "_meta"),
        ("str", "params"),
        (["write", {}], "params"),
    ],
)
def test_tools_call_with_malformed_params_is_invalid_params(server, params, names):
    server.initialize()
    server.send(server.request(31, "tools/call", params))
    msg = error_of(server.reply(31), INVALID_PARAMS)
    assert names in msg, msg
    server.assert_alive("malformed tools/call params")


def test_other_methods_with_malformed_params_are_invalid_params(server):
    server.initialize()
    server.send(server.request(32, "resources/read", {"uri": 5}))
    msg = error_of(server.reply(32), INVALID_PARAMS)
    assert "resources/read" in msg, msg
    server.send(server.request(33, "initialize", {"protocolVersion": 5}))
    msg = error_of(server.reply(33), INVALID_PARAMS)
    assert "initialize" in msg, msg


def test_broken_json_gets_a_parse_error_with_the_id_it_names(server):
    server.initialize()
    server.send_raw(b'{"jsonrpc":"2.0","id":41,"method":"tools/list","params":{"cursor":}\n')
    error_of(server.reply(41), PARSE_ERROR)
    # An "id" inside the params is not the request's id.
    server.send_raw(
        b'{"jsonrpc":"2.0","method":"tools/call","params":{"name":"read",'
        b'"arguments":{"id":999,"s":"\\"id\\":998"}},"id":"outer",,}\n'
    )
    error_of(server.reply("outer"), PARSE_ERROR)
    # Truncated in the middle of the message.
    server.send_raw(b'{"jsonrpc":"2.0","id":"cut","method":"tools/call","params":{"name":"re\n')
    error_of(server.reply("cut"), PARSE_ERROR)
    assert not any(r.get("id") in (998, 999) for r in server.replies)
    server.assert_alive("broken JSON")


@pytest.mark.parametrize(
    "line, id",
    [
        ('{"jsonrpc":"1.0","id":51,"method":"ping"}', 51),
        ('{"id":52,"method":"ping"}', 52),
        ('{"jsonrpc":"2.0","id":53,"method":5}', 53),
        ('{"jsonrpc":"2.0","id":54}', 54),
        ('{"jsonrpc":"2.0","id":1.5,"method":"ping"}', 1.5),
        ('{"jsonrpc":"2.0","id":"x","method":"ping","params":"p"}', "x"),
    ],
)
def test_invalid_request_objects_get_invalid_request_with_their_id(server, line, id):
    server.initialize()
    server.send_raw(line.encode() + b"\n")
    code = server.reply(id)["error"]["code"]
    assert code in (INVALID_REQUEST, INVALID_PARAMS), server.reply(id)
    server.assert_alive("invalid request object")


def test_a_batch_gets_an_error_for_each_request_in_it(server):
    server.initialize()
    server.send_raw(
        b'[{"jsonrpc":"2.0","id":61,"method":"ping"},'
        b'{"jsonrpc":"2.0","method":"notifications/initialized"},'
        b'{"jsonrpc":"2.0","id":62,"method":"tools/list"}]\n'
    )
    for id in (61, 62):
        assert "batch" in error_of(server.reply(id), INVALID_REQUEST)
    server.assert_alive("batch")


def test_messages_before_initialize_do_not_end_the_server(server):
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    server.send({"jsonrpc": "2.0", "id": "stray", "result": {}})
    server.send_raw(b"not json at all\n")
    server.initialize()
    server.assert_alive("messages before initialize")


GARBAGE = [
    b"",
    b"   \t",
    b"\x00\x01\x02",
    b"null",
    b"42",
    b'"a string"',
    b"[]",
    b"{}",
    b"{",
    b"}",
    b'{"jsonrpc":"2.0"}',
    b"\xef\xbb\xbf{}",
    b"[" * 200_000,
    b'{"a":' * 100_000,
    b'{"jsonrpc":"2.0","id":' + b"[" * 100_000,
    b'{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}',
    b'{"jsonrpc":"2.0","id":null,"method":"ping"}',
    b'{"jsonrpc":"2.0","id":true,"method":"ping"}',
    b'{"jsonrpc":"2.0","method":"tools/call","params":{"name":"write","arguments":"s"}}',
    b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":"x"}',
    b'{"jsonrpc":"2.0","id":"r1","result":5}',
    b'{"jsonrpc":"2.0","id":"r2","error":{"code":"x"}}',
    b'{"jsonrpc":"2.0","id":"\xff","method":"ping"}',
    b'{"jsonrpc":"2.0","id":"\\ud800","method":"ping"}',
    b"\xff" * 1000,
    b"\r",
]


def test_no_garbage_line_stops_the_server(server, workspace):
    server.initialize()
    for n, line in enumerate(GARBAGE):
        server.send_raw(line + b"\n")
        server.assert_alive(f"garbage line {n}: {line[:40]!r}")
    assert server.garbled == [], server.garbled
    server.send(server.call("after", "write", {"path": "after.txt", "content": "ok"}))
    assert not server.reply("after")["result"].get("isError"), tool_text(server.reply("after"))
    assert (workspace / "after.txt").read_text() == "ok"


def test_error_replies_and_results_never_share_a_line(server, workspace):
    (workspace / "a.txt").write_text("line\n" * 20_000)
    server.initialize()
    burst = []
    for n in range(40):
        burst.append(json.dumps(server.call(f"read-{n}", "read", {"path": "a.txt"})).encode())
        burst.append(b'{"jsonrpc":"2.0","id":"bad-%d","method":"tools/list","params":{' % n)
    server.send_raw(b"\n".join(burst) + b"\n")
    for n in range(40):
        assert "result" in server.reply(f"read-{n}")
        error_of(server.reply(f"bad-{n}"), PARSE_ERROR)
    assert server.garbled == [], server.garbled[:2]
