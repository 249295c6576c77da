"""The terminal's question port under a real pseudo-terminal: `tether ask` shows a numbered
card, asks again after a wrong number, reads labels, takes an empty line as a skip, and refuses
to run without a terminal; `tether call` on a terminal shows the approval card, and a denial
writes nothing."""

import json
import os
import pty
import select
import subprocess
import time

from conftest import TETHER


class Terminal:
    """A tether process whose stdin and stderr are a pseudo-terminal; stdout is a pipe."""

    def __init__(self, args, cwd, env):
        self.master, slave = pty.openpty()
        self.proc = subprocess.Popen(
            [TETHER, *args], cwd=cwd, env=env, stdin=slave, stderr=slave, stdout=subprocess.PIPE
        )
        os.close(slave)
        self.screen = ""

    def wait_for(self, text, timeout=30):
        end = time.monotonic() + timeout
        while text not in self.screen:
            left = end - time.monotonic()
            assert left > 0, f"{text!r} never appeared; the terminal shows:\n{self.screen}"
            if select.select([self.master], [], [], left)[0]:
                try:
                    self.screen += os.read(self.master, 4096).decode(errors="replace")
                except OSError:
                    break

    def type(self, line):
        os.write(self.master, line.encode() + b"\r")

    def finish(self, timeout=30):
        out, _ = self.proc.communicate(timeout=timeout)
        os.close(self.master)
        return self.proc.returncode, out.decode()


def env_for(workspace):
    cfg = workspace.parent / "ws-cfg"
    cfg.mkdir(exist_ok=True)
    return dict(os.environ, TETHER_CONFIG_DIR=str(cfg))


CARD = json.dumps({
    "question": "Which database?",
    "options": [{"label": "Postgres"}, {"label": "SQLite", "description": "one file"}],
})


def test_tether_ask_reads_numbers_and_labels_and_asks_again_after_a_wrong_one(workspace):
    t = Terminal(["ask", CARD], workspace, env_for(workspace))
    t.wait_for("2. SQLite: one file")
    t.wait_for("> ")
    t.type("9")
    t.wait_for("there is no option 9: type 1 to 2")
    t.type("2")
    code, out = t.finish()
    assert code == 0, (code, out, t.screen)
    assert json.loads(out) == {"outcome": "answered", "chosen": ["SQLite"], "text": None}

    t = Terminal(["ask", CARD], workspace, env_for(workspace))
    t.wait_for("> ")
    t.type("postgres")
    code, out = t.finish()
    assert code == 0 and json.loads(out)["chosen"] == ["Postgres"], (code, out)

    t = Terminal(["ask", json.dumps({"question": "Any notes?"})], workspace, env_for(workspace))
    t.wait_for("(answer in words)")
    t.type("ship it on friday")
    code, out = t.finish()
    assert json.loads(out) == {"outcome": "answered", "chosen": [], "text": "ship it on friday"}

    t = Terminal(["ask", CARD], workspace, env_for(workspace))
    t.wait_for("> ")
    t.type("")
    code, out = t.finish()
    assert code == 3 and json.loads(out) == {"outcome": "skipped", "cancelled": False}, (code, out)


def test_tether_ask_without_a_terminal_or_with_a_bad_card_says_why(workspace):
    done = subprocess.run([TETHER, "ask", CARD], stdin=subprocess.DEVNULL, capture_output=True, text=True,
                          env=env_for(workspace), timeout=30)
    assert done.returncode == 2 and "needs a terminal" in done.stderr, done
    t = Terminal(["ask", json.dumps({"question": "x", "options": [{"label": "a"}] * 7})], workspace, env_for(workspace))
    t.wait_for("a card holds at most 6")
    code, out = t.finish()
    assert code == 2 and out == "", (code, out, t.screen)


def test_tether_call_on_a_terminal_shows_the_approval_card(workspace):
    (workspace / "tether.toml").write_text('approval = "ask"\n')
    args = json.dumps({"path": "a.txt", "content": "x\n"})
    t = Terminal(["call", "write", args, "--root", str(workspace)], workspace, env_for(workspace))
    t.wait_for("Allow `write`?")
    t.wait_for("files: a.txt")
    t.wait_for("> ")
    t.type("3")
    code, out = t.finish()
    assert code == 1 and "the user denied `write`" in out, (code, out)
    assert not (workspace / "a.txt").exists()

    t = Terminal(["call", "write", args, "--root", str(workspace)], workspace, env_for(workspace))
    t.wait_for("> ")
    t.type("1")
    code, out = t.finish()
    assert code == 0, (code, out, t.screen)
    assert (workspace / "a.txt").read_text() == "x\n"
