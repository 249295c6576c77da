"""ask_user and the approval card through the official MCP Python SDK with an elicitation
callback standing in for the person: an answer, several choices, typed text, decline, cancel,
a client that cannot show forms, and approvals (allow once, allow for the run, deny, decline,
no one to ask) with nothing written when refused. On MCP 2026-07-28, which has no
server-to-client requests, the same cards come back as input-required results and the client
calls again with the answer."""

import asyncio
import contextlib
import os
import time

import mcp.types as types
from conftest import TETHER, session, text
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


class Person:
    """Answers each form from a script and keeps what it was shown."""

    def __init__(self, *answers, delay=0.5):
        self.answers = list(answers)
        self.shown = []
        self.delay = delay

    async def __call__(self, context, params):
        self.shown.append(params)
        await asyncio.sleep(self.delay)  # a person reads before answering
        action, content = self.answers.pop(0)
        return types.ElicitResult(action=action, content=content)


def run(main):
    return asyncio.run(asyncio.wait_for(main(), timeout=120))


DB = {
    "question": "Which database?",
    "context": "I will assume Postgres if you skip this.",
    "options": [{"label": "Postgres"}, {"label": "SQLite", "description": "one file, no server"}],
}


def test_answers_choices_text_decline_and_cancel_reach_the_model(workspace):
    person = Person(
        ("accept", {"choice": "SQLite"}),
        ("accept", {"choice": ["lint", "tests"]}),
        ("accept", {"answer": "the staging bucket"}),
        ("decline", None),
        ("cancel", None),
    )

    async def main():
        async with session(workspace, elicitation_callback=person) as s:
            names = [t.name for t in (await s.list_tools()).tools]
            assert "ask_user" in names, names
            r = await s.call_tool("ask_user", DB)
            assert not r.is_error and text(r) == 'the human answered "Which database?":\nchose 2. "SQLite"', text(r)
            form = person.shown[0]
            assert "2. SQLite: one file, no server" in form.message, form.message
            schema = form.requested_schema
            assert schema["properties"]["choice"]["oneOf"][1] == {"const": "SQLite", "title": "SQLite: one file, no server"}
            assert schema["required"] == ["choice"], schema

            r = await s.call_tool("ask_user", {"question": "Which checks?", "multi_select": True,
                                               "options": [{"label": "lint"}, {"label": "types"}, {"label": "tests"}]})
            assert text(r).endswith('chose [1. "lint", 3. "tests"]'), text(r)
            assert person.shown[1].requested_schema["properties"]["choice"]["type"] == "array"

            r = await s.call_tool("ask_user", {"question": "Where should uploads go?"})
            assert text(r).endswith('wrote: "the staging bucket"'), text(r)
            assert person.shown[2].requested_schema["properties"]["answer"]["type"] == "string"

            r = await s.call_tool("ask_user", DB)
            assert not r.is_error and text(r).startswith("the human skipped this question: go on with your stated assumption"), text(r)
            assert "faster than a person reads" not in text(r), text(r)
            r = await s.call_tool("ask_user", DB)
            assert "cancelled, not declined" in text(r), text(r)

    run(main)


def test_a_client_that_declines_at_once_is_not_taken_for_a_person(workspace):
    bot = Person(("decline", None), delay=0)

    async def main():
        async with session(workspace, elicitation_callback=bot) as s:
            r = await s.call_tool("ask_user", DB)
            assert "the client rather than a person may have declined it" in text(r), text(r)

    run(main)


def test_a_client_without_elicitation_has_no_ask_user(workspace):
    async def main():
        async with session(workspace) as s:
            names = [t.name for t in (await s.list_tools()).tools]
            assert "ask_user" not in names, names
            r = await s.call_tool("ask_user", DB)
            assert r.is_error and "unknown tool `ask_user`" in text(r), text(r)

    run(main)


def test_approvals_allow_once_allow_for_the_run_deny_and_decline(workspace):
    (workspace / "tether.toml").write_text('approval = "ask"\n')
    person = Person(
        ("accept", {"choice": "Deny"}),
        ("decline", None),
        ("accept", {"choice": "Allow once"}),
        ("accept", {"choice": "Allow write for this run"}),
    )

    def write(name):
        return {"path": name, "content": "x\n"}

    async def main():
        async with session(workspace, elicitation_callback=person) as s:
            r = await s.call_tool("write", write("denied.txt"))
            assert r.is_error and "the user denied `write`" in text(r), text(r)
            r = await s.call_tool("write", write("declined.txt"))
            assert r.is_error and "declined the approval card" in text(r), text(r)
            assert not (workspace / "denied.txt").exists() and not (workspace / "declined.txt").exists()
            card = person.shown[0]
            assert card.message.startswith("Allow `write`?") and "files: denied.txt" in card.message, card.message
            r = await s.call_tool("write", write("once.txt"))
            assert not r.is_error, text(r)
            r = await s.call_tool("write", write("run1.txt"))
            assert not r.is_error, text(r)
            # Allowed for the run: no card for the next write.
            shown = len(person.shown)
            r = await s.call_tool("write", write("run2.txt"))
            assert not r.is_error and len(person.shown) == shown, text(r)
            # Reads never ask.
            r = await s.call_tool("read", {"path": "run2.txt"})
            assert not r.is_error and len(person.shown) == shown

    run(main)
    assert (workspace / "run2.txt").read_text() == "x\n"


def test_approvals_with_no_one_to_ask_refuse_at_once(workspace):
    (workspace / "tether.toml").write_text('approval = "ask"\n')

    async def main():
        async with session(workspace) as s:
            started = time.monotonic()
            r = await s.call_tool("write", {"path": "a.txt", "content": "x\n"})
            assert r.is_error and "no one is connected to approve it" in text(r), text(r)
            assert time.monotonic() - started < 5

    run(main)
    assert not (workspace / "a.txt").exists()


@contextlib.asynccontextmanager
async def modern_session(root, elicitation_callback):
    """A session on MCP 2026-07-28 (no handshake: `server/discover`), whose requests say in
    their metadata that the client can show forms."""
    cfg = root.parent / (root.name + "-cfg")
    params = StdioServerParameters(
        command=TETHER, args=["serve", "--root", str(root)],
        env={"TETHER_CONFIG_DIR": str(cfg), "PATH": os.environ.get("PATH", "")},
    )
    async with stdio_client(params) as streams:
        async with ClientSession(*streams, elicitation_callback=elicitation_callback) as s:
            await s.discover()
            assert s.protocol_version == "2026-07-28", s.protocol_version
            yield s


async def call_with_rounds(s, name, args, answer):
    """Calls a tool, answering each input-required round with `answer(params)`; returns the
    final result and the forms shown."""
    shown, responses, state = [], None, None
    for _ in range(5):
        r = await s.call_tool(name, args, input_responses=responses, request_state=state,
                              allow_input_required=True)
        if not isinstance(r, types.InputRequiredResult):
            return r, shown
        responses = {}
        for key, request in r.input_requests.items():
            shown.append(request.params)
            responses[key] = answer(request.params).model_dump(exclude_none=True)
        state = r.request_state
    raise AssertionError("more than 5 rounds")


def test_on_2026_07_28_cards_are_input_required_results(workspace):
    (workspace / "tether.toml").write_text('approval = "ask"\n')

    async def never(context, params):  # 2026-07-28 forbids server-to-client requests
        raise AssertionError("the server sent a request of its own")

    def accept(content):
        return lambda params: types.ElicitResult(action="accept", content=content)

    async def main():
        async with modern_session(workspace, never) as s:
            names = [t.name for t in (await s.list_tools()).tools]
            assert "ask_user" in names, names
            r, shown = await call_with_rounds(s, "ask_user", DB, accept({"choice": "SQLite"}))
            assert not r.is_error and text(r).endswith('chose 2. "SQLite"'), text(r)
            assert len(shown) == 1 and "2. SQLite: one file, no server" in shown[0].message

            # A write under approval: one round for the card; denied, nothing is written.
            write = {"path": "a.txt", "content": "x\n"}
            r, shown = await call_with_rounds(s, "write", write, accept({"choice": "Deny"}))
            assert r.is_error and "the user denied `write`" in text(r), text(r)
            assert shown[0].message.startswith("Allow `write`?") and not (workspace / "a.txt").exists()
            r, _ = await call_with_rounds(s, "write", write, accept({"choice": "Allow write for this run"}))
            assert not r.is_error and (workspace / "a.txt").read_text() == "x\n", text(r)
            r, shown = await call_with_rounds(s, "write", {"path": "b.txt", "content": "y\n"}, accept({}))
            assert not r.is_error and shown == [], "allowed for the run, yet asked again"

            r, _ = await call_with_rounds(s, "ask_user", DB, lambda p: types.ElicitResult(action="decline"))
            assert text(r).startswith("the human skipped this question"), text(r)

    run(main)


def test_cancelling_the_call_withdraws_the_card(workspace):
    shown, withdrawn = asyncio.Event(), asyncio.Event()

    async def slow_person(context, params):
        shown.set()
        try:
            await asyncio.sleep(60)
        except BaseException:
            withdrawn.set()
            raise
        return types.ElicitResult(action="decline")

    async def main():
        async with session(workspace, elicitation_callback=slow_person) as s:
            call = asyncio.create_task(s.call_tool("ask_user", DB))
            await asyncio.wait_for(shown.wait(), 30)
            call.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await call
            await asyncio.wait_for(withdrawn.wait(), 10)

    run(main)


def test_a_write_from_an_eval_cell_asks_through_the_same_card(workspace):
    (workspace / "tether.toml").write_text('approval = "ask"\n')
    person = Person(
        ("accept", {"choice": "Allow eval for this run"}),
        ("accept", {"choice": "Deny"}),
    )
    cell = (
        "try:\n    tool('write', {'path': 'cell.txt', 'content': 'x'})\n"
        "except ToolError as e:\n    print('refused:', e)"
    )

    async def main():
        async with session(workspace, elicitation_callback=person) as s:
            r = await s.call_tool("eval", {"code": cell, "description": "write a file from a cell"})
            assert not r.is_error and "refused: the user denied `write`" in text(r), text(r)
            assert [p.message.splitlines()[0] for p in person.shown] == ["Allow `eval`?", "Allow `write`?"]

    run(main)
    assert not (workspace / "cell.txt").exists()


def test_an_answer_that_is_not_an_option_is_asked_again_once_then_is_no_answer(workspace):
    person = Person(
        ("accept", {"choice": "MySQL"}),
        ("accept", {"choice": "SQLite"}),
        ("accept", {"choice": "Oracle"}),
        ("accept", {"choice": ["Oracle"]}),
    )

    async def main():
        async with session(workspace, elicitation_callback=person) as s:
            tool = next(t for t in (await s.list_tools()).tools if t.name == "ask_user")
            assert "never a question in your chat message" in tool.description, tool.description
            r = await s.call_tool("ask_user", DB)
            assert not r.is_error and text(r).endswith('chose 2. "SQLite"'), text(r)
            assert 'The answer "MySQL" is not one of the options' in person.shown[1].message, person.shown[1].message
            r = await s.call_tool("ask_user", DB)
            assert r.is_error and 'the client answered "Oracle", which is not one of the options, twice' in text(r), text(r)
            assert "skipped" not in text(r), text(r)

    run(main)


def test_an_approval_card_shows_the_change(workspace):
    (workspace / "tether.toml").write_text('approval = "ask"\n')
    (workspace / "a.py").write_text("x = 1\n")
    person = Person(("accept", {"choice": "Deny"}), ("accept", {"choice": "Deny"}))
    patch = "*** Begin Patch\n*** Update File: a.py\n@@\n-x = 1\n+x = 2\n+y = 3\n*** End Patch"

    async def main():
        async with session(workspace, elicitation_callback=person) as s:
            await s.call_tool("write", {"path": "b.toml", "content": "name = \"b\"\nversion = 2\n"})
            await s.call_tool("apply_patch", {"patch": patch})
    run(main)
    write, patched = person.shown[0].message, person.shown[1].message
    assert "write the whole file (2 lines):\n  + name = \"b\"\n  + version = 2" in write, write
    assert "a patch to 1 file:\n  M a.py (+2 -1)" in patched, patched
