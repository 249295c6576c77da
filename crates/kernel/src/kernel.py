"""tether's Python kernel. Cells arrive on descriptor 3 and every message goes out on
descriptor 4, each a Content-Length frame of JSON; a cell's own output stays on descriptors 1
and 2, which tether reads directly, so nothing a cell prints can reach the channel."""

import ast
import base64
import builtins
import json
import linecache
import os
import platform
import sys
import traceback

# Errors go where prints go, as on a terminal, so they read in the order they happened.
os.dup2(1, 2)
# Written to stdout where `display` is called, so tether places it between the prints.
_MARK = b"\0tether-display:" + os.environ.pop("TETHER_KERNEL_MARK", "").encode() + b"\0"
_IN = os.fdopen(3, "rb")
_OUT = os.fdopen(4, "wb", buffering=0)
_MAX_REPR = 20_000
# This file runs as `python -c`, so its frames are named so.
_SELF = "<string>"


def _send(message):
    body = json.dumps(message).encode()
    _OUT.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)


def _receive():
    length = None
    while True:
        line = _IN.readline()
        if not line:
            raise EOFError
        if line in (b"\r\n", b"\n"):
            break
        key, _, value = line.partition(b":")
        if key.strip().lower() == b"content-length":
            length = int(value)
    if length is None:
        raise EOFError
    return json.loads(_IN.read(length))


def _flush():
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass


def _text_of_html(html):
    import html as html_module
    import re

    text = re.sub(r"(?is)<(script|style).*?</\1>", "", html)
    text = re.sub(r"(?i)<br\s*/?>|</(p|div|tr|li|h\d)>", "\n", text)
    text = re.sub(r"<[^>]+>", "", text)
    return html_module.unescape(text).strip()


def _rich(obj):
    """The form of `obj` a model reads best: a PNG, then markdown, then HTML as text, then repr."""
    for method, mime in (
        ("_repr_png_", "image/png"),
        ("_repr_markdown_", "text/markdown"),
        ("_repr_html_", "text/html"),
    ):
        render = getattr(obj, method, None)
        if render is None or isinstance(obj, type):
            continue
        try:
            data = render()
        except Exception:
            continue
        if data is None:
            continue
        if mime == "image/png":
            if isinstance(data, str):
                data = base64.b64decode(data)
            return "image/png", base64.b64encode(bytes(data)).decode()
        if mime == "text/html":
            return "text/plain", _text_of_html(str(data))
        return mime, str(data)
    text = repr(obj)
    if len(text) > _MAX_REPR:
        text = text[:_MAX_REPR] + f"… ({len(text)} characters, cut at {_MAX_REPR})"
    return "text/plain", text


def display(*objects):
    """Shows each object in the cell's result, in order with what the cell printed."""
    _flush()
    for obj in objects:
        mime, data = _rich(obj)
        _send({"type": "display", "mime": mime, "data": data})
        os.write(1, _MARK)


class ToolError(Exception):
    """A tool called through `tool()` failed; its message is the tool's."""


def tool(name, args=None):
    """Calls one of the run's own tools, as the model would, and returns its text."""
    _flush()
    _send({"type": "tool", "name": name, "args": args or {}})
    reply = _receive()
    if not reply.get("ok"):
        raise ToolError(reply.get("text", "the tool failed"))
    return reply.get("text", "")


_namespace = {
    "__name__": "__main__",
    "__builtins__": builtins,
    "display": display,
    "tool": tool,
    "ToolError": ToolError,
}
_cells = 0


def _error_text(error):
    """The traceback without this file's own frames."""
    tb = error.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == _SELF:
        tb = tb.tb_next
    return "".join(traceback.format_exception(type(error), error, tb))


def _run(code):
    global _cells
    _cells += 1
    name = f"<cell {_cells}>"
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
    try:
        tree = ast.parse(code, name, "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, name, "exec"), _namespace)
        if last is not None:
            value = eval(compile(last, name, "eval"), _namespace)
            if value is not None:
                _namespace["_"] = value
                _flush()
                mime, data = _rich(value)
                _send({"type": "display", "mime": mime, "data": data, "echo": True})
        return None
    except BaseException as error:  # KeyboardInterrupt and SystemExit end the cell, not us
        return _error_text(error)


def _main():
    _send({"type": "ready", "python": sys.executable, "version": platform.python_version()})
    while True:
        try:
            message = _receive()
        except EOFError:
            os._exit(0)
        except KeyboardInterrupt:
            continue
        if message.get("type") != "run":
            continue
        error = _run(message.get("code", ""))
        _flush()
        _send({"type": "done", "error": error})


if __name__ == "__main__":
    _main()
