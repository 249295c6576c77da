"""The eval tool through a real MCP client: an image a cell displays arrives as an image
content block between its text, and no kernel outlives a client that leaves or a tether that
is killed (real python3 from the project's .venv)."""

import asyncio
import base64

from conftest import kill_serve, session
from test_debug_processes import gone_within, left, project

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
            r = await s.call_tool("eval", {"code": PICTURE, "description": "show a picture"})
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


def test_a_sigkill_of_tether_takes_the_kernel_with_it(workspace):
    project(workspace)

    async def main():
        async with session(workspace) as s:
            await s.call_tool("eval", {"code": "x = 1", "description": "start a kernel"})
            assert left(workspace), "the kernel should be running"
            kill_serve(workspace)
            assert gone_within(workspace, 10), f"left after SIGKILL: {left(workspace)}"

    try:
        asyncio.run(asyncio.wait_for(main(), timeout=120))
    except BaseException as e:  # the client sees its server die
        if "left after SIGKILL" in str(e) or "should be running" in str(e):
            raise
    assert gone_within(workspace, 10), f"left after SIGKILL: {left(workspace)}"
