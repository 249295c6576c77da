"""The eval tool through a real MCP client: an image a cell displays (a matplotlib figure
included) arrives as an image content block between its text, JavaScript cells show images and
call tools, `tether call` saves images and prints their paths, and no kernel or child of a cell
outlives a client that leaves or a tether that is killed (real python3 from the project's .venv,
real node)."""

import asyncio
import base64
import json
import os
import re
import subprocess

from conftest import TETHER, kill_serve, session
from test_debug_processes import gone_within, killed_while, left, project

PICTURE = """
import struct, zlib
def chunk(kind, data):
    return struct.pack('>I', len(data)) + kind + data + struct.pack('>I', zlib.crc32(kind + data))
png = (b'\\x89PNG\\r\\n\\x1a\\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', 1, 1, 8, 0, 0, 0, 0))
       + chunk(b'IDAT', zlib.compress(b'\\x00\\x00')) + chunk(b'IEND', b''))
class Picture:
    def _repr_png_(self):
        return png
print('before')
display(Picture())
print('after')
"""


def test_a_displayed_image_is_an_image_block_between_the_text(workspace):
    project(workspace)

    async def main():
        async with session(workspace) as s:
            r = await s.call_tool("eval", {"code": PICTURE, "description": "show a picture between two prints"})
            assert not r.is_error, r
            kinds = [c.type for c in r.content]
            assert kinds == ["text", "image", "text"], kinds
            assert r.content[0].text.endswith("before"), r.content[0].text
            image = r.content[1]
            assert image.mime_type == "image/png"
            assert base64.b64decode(image.data).startswith(b"\x89PNG\r\n\x1a\n")
            assert r.content[2].text == "after"

    asyncio.run(asyncio.wait_for(main(), timeout=120))
    assert gone_within(workspace, 10), f"a kernel was left: {left(workspace)}"


def test_a_sigkill_of_tether_takes_the_kernel_and_its_children(workspace):
    project(workspace)

    async def prepare(s):
        # A child of the kernel's own: the death signal reaches only the kernel.
        code = f"import subprocess\nsubprocess.Popen(['sh', '-c', 'sleep 300; true', 'x', {str(workspace)!r}])"
        r = await s.call_tool("eval", {"code": code, "description": "start a kernel and a sleeping child"})
        assert not r.is_error, r
        assert len(left(workspace)) >= 2, f"the kernel and its child should run: {left(workspace)}"

    killed_while(workspace, prepare)

    try:
        asyncio.run(asyncio.wait_for(main(), timeout=120))
    except BaseException as e:  # the client sees its server die
        if "left after SIGKILL" in str(e) or "should be running" in str(e):
            raise
    assert gone_within(workspace, 10), f"left after SIGKILL: {left(workspace)}"


FIGURE = """
import matplotlib.pyplot as plt
plt.plot([1, 2, 3], [3, 1, 2])
plt.title('three points')
print('drawn')
"""


def test_a_matplotlib_figure_left_open_is_a_real_png_block(workspace):
    project(workspace)

    async def main():
        async with session(workspace) as s:
            r = await s.call_tool("eval", {"code": FIGURE, "description": "plot three points with a title"})
            assert not r.is_error, r
            kinds = [c.type for c in r.content]
            assert kinds == ["text", "image"], kinds
            assert r.content[0].text.endswith("drawn"), r.content[0].text
            png = base64.b64decode(r.content[1].data)
            assert png.startswith(b"\x89PNG\r\n\x1a\n") and len(png) > 2000, len(png)
            # The figure was closed: the next cell shows nothing of it.
            r = await s.call_tool("eval", {"code": "len(plt.get_fignums())", "description": "count the figures left open after plotting"})
            assert [c.type for c in r.content] == ["text"] and r.content[0].text == "Out: 0", r

    asyncio.run(asyncio.wait_for(main(), timeout=120))


def test_a_sigkill_of_tether_takes_what_a_cell_started_in_a_session_of_its_own(workspace):
    project(workspace)

    async def prepare(s):
        # start_new_session: neither the kernel's group nor its death signal reaches it.
        code = (
            "import subprocess\nsubprocess.Popen(['sh', '-c', 'sleep 300; true', 'x', "
            f"{str(workspace)!r}], start_new_session=True)"
        )
        r = await s.call_tool("eval", {"code": code, "description": "start a child in a session of its own"})
        assert not r.is_error, r
        assert len(left(workspace)) >= 2, f"the kernel and its child should run: {left(workspace)}"

    killed_while(workspace, prepare)


def test_children_a_cell_leaves_in_the_background_end_with_the_run(workspace):
    project(workspace)
    # Each child's command line names the workspace, so `left` finds it.
    python_child = f"!sh -c 'sleep 300; echo {workspace}' &"
    node_child = (
        "require('child_process').spawn('sh', ['-c', 'sleep 300; echo "
        f"{workspace}'], {{stdio: 'ignore'}}); 'spawned'"
    )

    async def main():
        async with session(workspace) as s:
            r = await s.call_tool("eval", {"code": python_child, "description": "start a shell in the background from Python"})
            assert not r.is_error, r
            r = await s.call_tool(
                "eval", {"code": node_child, "description": "spawn a sleeping child from the node kernel", "language": "javascript"}
            )
            assert not r.is_error and r.content[-1].text.endswith("Out: 'spawned'"), r
            shells = [p for p in left(workspace) if "sleep 300" in open(f"/proc/{p}/cmdline").read()]
            assert len(shells) >= 2, f"both background shells should be running: {left(workspace)}"

    asyncio.run(asyncio.wait_for(main(), timeout=120))
    assert gone_within(workspace, 10), f"left after the run: {left(workspace)}"


def test_javascript_cells_show_images_and_call_tools_over_mcp(workspace):
    (workspace / "notes.txt").write_text("alpha\nbeta\n")
    dot = base64.b64encode(
        bytes.fromhex(
            "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
            "1f15c4890000000d4944415478da63f8cfc0f01f0005000201e0a8cd5a0000000049454e44ae426082"
        )
    ).decode()

    async def main():
        async with session(workspace) as s:
            code = f"const notes = await tool('read', {{path: 'notes.txt'}});\ndisplay(image('{dot}'))\nnotes.includes('beta')"
            r = await s.call_tool("eval", {"code": code, "description": "read the notes and show a dot", "language": "javascript"})
            assert not r.is_error, r
            assert [c.type for c in r.content] == ["text", "image", "text"], r.content
            assert r.content[0].text.startswith("started Node.js"), r.content[0].text
            assert base64.b64decode(r.content[1].data).startswith(b"\x89PNG")
            assert r.content[2].text == "Out: true"

    asyncio.run(asyncio.wait_for(main(), timeout=120))


def test_tether_call_saves_images_under_dot_tether_and_prints_their_paths(workspace):
    project(workspace)
    cfg = workspace.parent / "ws-cfg"
    cfg.mkdir(exist_ok=True)
    env = dict(os.environ, TETHER_CONFIG_DIR=str(cfg))
    args = json.dumps({"code": FIGURE, "description": "plot three points with a title"})
    done = subprocess.run(
        [TETHER, "call", "eval", args, "--root", str(workspace)], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    match = re.search(r"\[image: PNG, \d+ bytes, saved to (\.tether/images/\S+\.png)\]", done.stdout)
    assert match, done.stdout
    assert (workspace / match.group(1)).read_bytes().startswith(b"\x89PNG\r\n\x1a\n")

    line = json.dumps({"tool": "eval", "args": {"code": FIGURE, "description": "plot three points with a title"}})
    done = subprocess.run(
        [TETHER, "call", "--stdin", "--root", str(workspace)],
        input=line + "\n", capture_output=True, text=True, env=env, timeout=120,
    )
    record = json.loads(done.stdout)
    assert record["ok"] and len(record["images"]) == 1, record
    assert (workspace / record["images"][0]).read_bytes().startswith(b"\x89PNG")
    assert gone_within(workspace, 10), f"a kernel was left: {left(workspace)}"
