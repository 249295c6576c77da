"""The worker templates in docs/workers against the real agent CLIs installed from npm (Claude
Code, Codex, opencode). Every flag a template uses is in its CLI's `--help`, with a value among
the choices the help lists. And each CLI, run by `tether serve --vibe` from its template, reads
the brief on stdin, gives its final message as the worker's result, continues its own session
on `vibe_send`, and writes a file when its model asks, except for a plan-surface caller. No model is reachable
from here, so the CLIs talk to a local stand-in for their model API (model_stub.py)."""

import asyncio
import json
import os
import re
import subprocess
import tomllib

import pytest

from conftest import ROOT, TETHER, session, text
from model_stub import ANSWER, ModelStub

CLIS = ROOT / "target" / "agent-clis" / "node_modules" / ".bin"
TEMPLATES = {"claude": "claude-code.toml", "codex": "codex.toml", "opencode": "opencode.toml"}


def template(name):
    return tomllib.loads((ROOT / "docs" / "workers" / TEMPLATES[name]).read_text())


def cli(program):
    path = CLIS / program
    assert path.exists(), f"{path} is missing: scripts/test installs the agent CLIs from npm"
    return str(path)


def help_text(words, home):
    env = dict(os.environ, HOME=str(home), NO_COLOR="1")
    done = subprocess.run([cli(words[0]), *words[1:], "--help"], capture_output=True, text=True,
                          timeout=60, env=env)
    return done.stdout + done.stderr


def leading_words(args):
    """The subcommand words before the first flag: `exec`, `run`."""
    words = []
    for a in args:
        if a.startswith("-"):
            break
        words.append(a)
    return words


def check_flags(args, help, where):
    """Each flag in `args` is in `help`; a value after it is among the choices listed for it."""
    for i, arg in enumerate(args):
        if not arg.startswith("-"):
            continue
        flag = arg.split("=")[0]
        # Its own entry: a line that starts with it (or its short form and then it), indented
        # like an entry and not like a wrapped description.
        found = re.search(rf"^ {{1,8}}(-[\w-]+,\s*)?{re.escape(flag)}(?=[\s,=<\[]|$)", help, re.M)
        assert found, f"{where}: `{flag}` has no entry in its --help"
        value = args[i + 1] if i + 1 < len(args) and not args[i + 1].startswith("-") else None
        # The flag's entry runs to the next line that starts another option.
        rest = help[found.start():]
        end = re.search(r"\n\s+-", rest[1:])
        entry = rest[: end.start() + 1] if end else rest
        if value is not None and re.search(r"choices:|possible values:", entry):
            assert re.search(rf"[\s\"',\[]{re.escape(value)}[\s\"',\]]", entry), \
                f"{where}: `{flag} {value}`: not one of the choices its --help lists:\n{entry}"


@pytest.mark.parametrize("name", TEMPLATES)
def test_every_flag_a_template_uses_is_in_its_clis_help(name, tmp_path):
    for tier_name, tier in template(name)["workers"].items():
        if not isinstance(tier, dict):
            continue
        program, *args = tier["command"]
        sub = leading_words(args)
        help = help_text([program, *sub], tmp_path)
        where = f"{TEMPLATES[name]} [workers.{tier_name}]"
        check_flags(args[len(sub):] + tier["read_only_args"], help, where)
        resume = tier["resume_args"]
        resume_sub = leading_words(resume)
        if resume_sub:
            # `codex exec resume ID`: a subcommand of its own, listed in the parent's help.
            assert re.search(rf"^\s+{resume_sub[0]}\s", help, re.M), f"{where}: no `{resume_sub[0]}` subcommand"
            help = help_text([program, *sub, resume_sub[0]], tmp_path)
        check_flags([a for a in resume if a != "{session}"], help, f"{where} resume_args")


@pytest.fixture(scope="module")
def stub():
    s = ModelStub()
    yield s
    s.close()


def environment(name, stub, home):
    """Points CLI `name` at the stand-in, with a home of its own."""
    env = {"HOME": str(home), "PATH": f"{CLIS}:{os.environ['PATH']}", "NO_COLOR": "1"}
    if name == "claude":
        env.update(ANTHROPIC_BASE_URL=stub.url, ANTHROPIC_API_KEY="sk-test", DISABLE_TELEMETRY="1",
                   DISABLE_AUTOUPDATER="1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
    elif name == "codex":
        (home / ".codex").mkdir(parents=True, exist_ok=True)
        (home / ".codex" / "config.toml").write_text(
            'model = "gpt-5.5"\nmodel_provider = "stub"\n[model_providers.stub]\nname = "stub"\n'
            f'base_url = "{stub.url}/v1"\nwire_api = "responses"\nenv_key = "OPENAI_API_KEY"\n')
        env.update(OPENAI_API_KEY="sk-test")
    else:
        provider = {"npm": "@ai-sdk/openai-compatible", "name": "stub",
                    "options": {"baseURL": f"{stub.url}/v1", "apiKey": "sk-test"},
                    "models": {"stub-model": {"name": "stub"}}}
        config = {"autoupdate": False, "share": "disabled", "model": "stub/stub-model",
                  "small_model": "stub/stub-model", "provider": {"stub": provider}}
        env.update(OPENCODE_CONFIG_CONTENT=json.dumps(config), OPENCODE_DISABLE_AUTOUPDATE="1",
                   OPENCODE_DISABLE_MODELS_FETCH="1", OPENCODE_DISABLE_SHARE="1")
    return env


def sent_since(stub, start):
    """The requests the stand-in got since `start`, each as its JSON text."""
    return [json.dumps(body) for _, body in stub.requests[start:]]


async def run_to_end(s, worker="w1"):
    r = await s.call_tool("vibe_wait", {"worker_id": worker, "timeout_seconds": 120})
    assert not r.is_error and "completed" in text(r), text(r)
    assert ANSWER in text(r), text(r)
    return text(r)


# What each CLI sends its model when it is told to stay read-only.
READ_ONLY_SIGN = {"claude": "Plan mode is active", "codex": "read-only", "opencode": "READ-ONLY"}


@pytest.mark.parametrize("name", TEMPLATES)
def test_a_real_cli_runs_as_a_worker_from_its_template(name, workspace, stub):
    cfg = workspace.parent / (workspace.name + "-cfg")
    cfg.mkdir()
    (cfg / "tether.toml").write_text((ROOT / "docs" / "workers" / TEMPLATES[name]).read_text())
    env = environment(name, stub, workspace.parent / "home")
    (workspace / "README.md").write_text("# a project\n")
    program = template(name)["workers"]["fast"]["command"][0]
    doctor = subprocess.run([TETHER, "doctor", "--root", str(workspace)], capture_output=True, text=True,
                            timeout=60, env=dict(env, TETHER_CONFIG_DIR=str(cfg))).stdout
    assert f"fast: {program} (found at {CLIS / program})" in doctor, doctor

    async def main():
        async with session(workspace, extra_args=["--vibe"], env=env) as s:
            start = len(stub.requests)
            r = await s.call_tool("vibe_spawn", {"brief": "BRIEF-ONE: tidy the readme", "label": "tidy"})
            assert not r.is_error, text(r)
            await run_to_end(s)
            asked = [b for b in sent_since(stub, start) if "BRIEF-ONE" in b]
            assert asked, "the brief never reached the model"
            assert READ_ONLY_SIGN[name] not in asked[-1], "an agent-surface worker was told to stay read-only"

            start = len(stub.requests)
            r = await s.call_tool("vibe_send", {"worker_id": "w1", "message": "BRIEF-TWO: and the changelog"})
            assert "its session continues" in text(r), text(r)
            await run_to_end(s)
            # The CLI continued its own session: the model sees the first brief as history, once,
            # and the new message.
            resumed = [b for b in sent_since(stub, start) if "BRIEF-TWO" in b and "BRIEF-ONE" in b]
            times = resumed[-1].count("BRIEF-ONE") if resumed else 0
            assert times == 1, f"{len(resumed)} requests had both briefs; the last had the first {times} times"

            # The model asks the CLI's own tool to write a file: an agent-surface worker may.
            r = await s.call_tool("vibe_spawn", {"brief": f"WRITE-PROBE {workspace}/by-agent.txt", "label": "write"})
            assert not r.is_error, text(r)
            await run_to_end(s, "w2")
            assert (workspace / "by-agent.txt").exists(), "the probe never wrote: it proves nothing below"

        async with session(workspace, surface="plan", extra_args=["--vibe"], env=env) as s:
            # A plan-surface caller's worker may not, though the model asks the same.
            r = await s.call_tool("vibe_spawn", {"brief": f"WRITE-PROBE {workspace}/by-plan.txt", "label": "write"})
            assert not r.is_error, text(r)
            await run_to_end(s)
            assert not (workspace / "by-plan.txt").exists(), "a worker of a plan-surface caller wrote a file"

            start = len(stub.requests)
            r = await s.call_tool("vibe_spawn", {"brief": "BRIEF-THREE: look around", "label": "look"})
            assert not r.is_error, text(r)
            await run_to_end(s, "w2")
            asked = [b for b in sent_since(stub, start) if "BRIEF-THREE" in b]
            assert asked and READ_ONLY_SIGN[name] in asked[-1], \
                f"not told to stay read-only: no {READ_ONLY_SIGN[name]!r} in what the model was sent"

    asyncio.run(asyncio.wait_for(main(), timeout=300))
