"""tether's Python kernel. Cells arrive on descriptor 3 and every message goes out on
descriptor 4, each a Content-Length frame of JSON; a cell's own output stays on descriptors 1
and 2, which tether reads directly, so nothing a cell prints can reach the channel. The
channel moves to descriptors no child inherits and /dev/null takes 3 and 4, so a cell or a
command writing on 4 reaches nothing; each message carries the running cell's token, which
tether checks (a cell that reads the token here can still end itself early, never another)."""

import ast
import base64
import builtins
import io
import json
import linecache
import os
import platform
import shlex
import subprocess
import sys
import tokenize
import traceback

# Errors go where prints go, as on a terminal, so they read in the order they happened.
os.dup2(1, 2)
# Written to stdout where `display` is called, so tether places it between the prints.
_MARK = b"\0tether-display:" + os.environ.pop("TETHER_KERNEL_MARK", "").encode() + b"\0"
try:
    _IN = os.fdopen(os.dup(3), "rb")
    _OUT = os.fdopen(os.dup(4), "wb", buffering=0)
    _NULL = os.open(os.devnull, os.O_RDWR)
    os.dup2(_NULL, 3, inheritable=False)
    os.dup2(_NULL, 4, inheritable=False)
    os.close(_NULL)
except OSError:
    print(
        "tether's kernel needs descriptors 3 and 4 from tether, and they are not open here: "
        "a sandbox prefix that closes inherited descriptors (docker exec does) cannot run it",
        file=sys.stderr,
    )
    sys.exit(2)
_MAX_REPR = 20_000
# Displayed text is cut like printed output; a bigger image is not shown (tether's own limits).
_HEAD = 16 << 10
_TAIL = 8 << 10
_MAX_PNG = 4 << 20
# The running cell's token, from its `run`; tether ignores messages without it.
_cell = None
# Bridged calls made so far, to match each answer to its call.
_calls = 0
# `run` messages that came while a bridged call waited for its answer.
_runs = []
# Displays so far: each display's message and its mark in stdout carry its number.
_shown = 0
# This file runs as `python -c`, so its frames are named so.
_SELF = "<string>"


def _send(message):
    message["cell"] = _cell
    body = json.dumps(message).encode()
    _OUT.write(_MARK + b"Content-Length: %d\r\n\r\n" % len(body) + body)


def _capped(mime, data):
    """A display within tether's limits: text cut to its head and tail, an image too big refused."""
    if mime == "image/png":
        size = len(data) // 4 * 3
        if size <= _MAX_PNG:
            return mime, data
        return "text/plain", (
            f"[an image of about {size} bytes was not shown: over tether's limit of "
            f"{_MAX_PNG >> 20} MiB for one image]"
        )
    raw = data.encode("utf-8", "surrogatepass")
    if len(raw) <= _HEAD + _TAIL:
        return mime, data
    head = raw[:_HEAD].decode("utf-8", "ignore")
    tail = raw[-_TAIL:].decode("utf-8", "ignore")
    cut = len(raw) - len(head.encode("utf-8", "surrogatepass")) - len(tail.encode("utf-8", "surrogatepass"))
    note = f"[… {cut} bytes of output cut; the first {_HEAD >> 10} KiB and the last {_TAIL >> 10} KiB are kept …]"
    return mime, f"{head}\n{note}\n{tail}"


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


def _kind(obj, module, name):
    kind = type(obj)
    return kind.__name__ == name and kind.__module__.split(".")[0] == module


def _cut(text, limit):
    """Cuts text to `limit` characters with tether's one mark (its `cut_line`), saying how many
    characters were dropped."""
    return text if len(text) <= limit else text[:limit] + f"… [+{len(text) - limit} chars]"


def _cell_text(value, limit=60):
    return _cut(str(value).replace("|", "\\|").replace("\n", " "), limit)


def _frame_table(frame, edge=10):
    """A DataFrame as a markdown table of its head and tail, with its shape."""
    rows, columns = frame.shape
    shown = list(frame.columns[:20])
    header = [_cell_text(frame.index.name or "")] + [_cell_text(c) for c in shown]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]

    def add(part):
        for index, row in zip(part.index, part[shown].itertuples(index=False)):
            cells = [_cell_text(index)] + [_cell_text(v) for v in row]
            lines.append("| " + " | ".join(cells) + " |")

    if rows > 2 * edge:
        add(frame.head(edge))
        lines.append("| … |" + " … |" * len(shown))
        add(frame.tail(edge))
    else:
        add(frame)
    more = f", {columns - len(shown)} columns not shown" if columns > len(shown) else ""
    lines.append(f"[{rows} rows × {columns} columns{more}]")
    return "\n".join(lines)


def _figure_png(figure):
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", bbox_inches="tight")
    return base64.b64encode(buffer.getvalue()).decode()


def _rich(obj):
    """The form of `obj` a model reads best: a PNG, then markdown, then HTML as text, then repr."""
    if _kind(obj, "pandas", "DataFrame"):
        return "text/markdown", _frame_table(obj)
    if _kind(obj, "matplotlib", "Figure"):
        return "image/png", _figure_png(obj)
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
    return "text/plain", _cut(repr(obj), _MAX_REPR)


def _place(message):
    """Sends a display-like message and marks its place in stdout with its number."""
    global _shown
    _shown += 1
    message["n"] = _shown
    _send(message)
    os.write(1, _MARK + b"%d\0" % _shown)


def display(*objects):
    """Shows each object in the cell's result, in order with what the cell printed."""
    _flush()
    for obj in objects:
        mime, data = _capped(*_rich(obj))
        _place({"type": "display", "mime": mime, "data": data})


class ToolError(Exception):
    """A tool called through `tool()` failed; its message is the tool's."""


class Image:
    """An image a tool returned; `display()` shows it."""

    def __init__(self, png):
        self.png = png

    def _repr_png_(self):
        return self.png

    def __repr__(self):
        return f"<image: PNG, {len(self.png)} bytes>"


class ToolText(str):
    """A tool's text; the images it returned, if any, are in `.images`."""

    images = ()


def tool(name, args=None):
    """Calls one of the run's own tools, as the model would, and returns its text."""
    global _calls
    _flush()
    _calls += 1
    call = _calls
    _send({"type": "tool", "id": call, "name": name, "args": args or {}})
    while True:
        reply = _receive()
        if reply.get("type") == "run":
            _runs.append(reply)
        elif reply.get("type") == "tool_result" and reply.get("id") == call:
            break
    if not reply.get("ok"):
        raise ToolError(reply.get("text", "the tool failed"))
    text = ToolText(reply.get("text", ""))
    text.images = [Image(base64.b64decode(png)) for png in reply.get("images", [])]
    return text




# Names a JavaScript cell would use, for a hint when one reaches this kernel by mistake.
_JAVASCRIPT_NAMES = {"console", "require", "process", "document", "window", "let", "const", "await"}


def _error_text(error):
    """The traceback without this file's own frames; a JavaScript cell gets a hint."""
    report = traceback.TracebackException(type(error), error, error.__traceback__)
    ours = (_SELF, ast.__file__)
    report.stack = traceback.StackSummary.from_list(
        [frame for frame in report.stack if frame.filename not in ours]
    )
    text = "".join(report.format())
    if isinstance(error, NameError) and getattr(error, "name", None) in _JAVASCRIPT_NAMES:
        text += 'this is the Python kernel: for JavaScript, call eval with `language: "javascript"`\n'
    return text


def _summary(error):
    """The error's kind and the first line of its message, to head the result."""
    kind = type(error)
    name = kind.__qualname__
    if kind.__module__ not in ("builtins", "__main__"):
        name = f"{kind.__module__}.{name}"
    lines = str(error).strip().splitlines()
    line = f"{name}: {lines[0]}" if lines else name
    return _cut(line, 300)


def _open_figures(but=None):
    """Shows the figures a cell left open, in order, and closes them."""
    pyplot = sys.modules.get("matplotlib.pyplot")
    if pyplot is None:
        return
    for number in pyplot.get_fignums():
        figure = pyplot.figure(number)
        if figure is not but:
            display(figure)
    pyplot.close("all")


class MagicError(Exception):
    """A `%` or `!` line tether does not know."""


_MAGICS = "%pip, %cd, %pwd, %timeit, !cmd, x = !cmd, %%bash and %%timeit"


def _shell(command, capture=False):
    """Runs a shell command with the cell's output; with `capture`, returns its lines."""
    _flush()
    if capture:
        done = subprocess.run(command, shell=True, stdout=subprocess.PIPE, text=True)
        return done.stdout.splitlines()
    done = subprocess.run(command, shell=True)
    if done.returncode:
        print(f"(exit code {done.returncode})")
    return None


def _bash(body):
    _flush()
    done = subprocess.run(["bash", "-c", body])
    if done.returncode:
        print(f"(exit code {done.returncode})")


class PipError(Exception):
    """`%pip` ended with a non-zero exit code: the cell stops there, as a failed import would."""


def _installed():
    """Each installed distribution by name, with a mark that changes whenever pip writes it."""
    import importlib.metadata
    import re

    found = {}
    for dist in importlib.metadata.distributions():
        name = re.sub(r"[-_.]+", "-", dist.metadata["Name"] or "").lower()
        try:
            # pip writes a new metadata folder for every install, even of the same version.
            stat = os.stat(dist._path)
            mark = (dist.version, stat.st_ino, stat.st_mtime_ns)
        except (AttributeError, OSError, TypeError):
            mark = (dist.version,)
        found.setdefault(name, (mark, dist))
    return found


def _modules_of(dist):
    """What a distribution installs: its top-level module names, its `.pth` files, and the
    folder it was installed from when editable (RECORD names no modules for some editables)."""
    import csv
    import urllib.parse

    names = set((dist.read_text("top_level.txt") or "").split())
    paths = []
    for row in csv.reader((dist.read_text("RECORD") or "").splitlines()):
        first, nested, _ = (row[0] if row else "").partition("/")
        if first in ("", "..", "__pycache__") or first.endswith((".dist-info", ".data")):
            continue
        if not nested and first.endswith(".pth"):
            paths.append(first)
        if not nested and not first.endswith((".py", ".pyc", ".so", ".pyd")):
            continue
        name = first if nested else first.split(".")[0]
        if name.isidentifier():
            names.add(name)
    folder = None
    try:
        origin = json.loads(dist.read_text("direct_url.json") or "{}")
        url = urllib.parse.urlparse(origin.get("url", ""))
        if origin.get("dir_info", {}).get("editable") and url.scheme == "file":
            folder = os.path.realpath(urllib.parse.unquote(url.path))
    except (ValueError, AttributeError):
        pass
    return names, paths, folder


def _from_folder(module, folders):
    """Whether a module was loaded from one of `folders`, outside this interpreter's own."""
    where = getattr(module, "__file__", None)
    if not folders or not isinstance(where, str):
        return False
    where = os.path.realpath(where)
    # A project's `.venv` may sit in the folder; what is installed there is not its code.
    ours = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.exec_prefix)}
    if any(where.startswith(prefix + os.sep) for prefix in ours):
        return False
    return any(where.startswith(folder + os.sep) for folder in folders)


def _pip(arguments):
    """pip of this kernel's own interpreter; what it installed or changed is imported afresh."""
    import importlib
    import site

    words = shlex.split(arguments)
    before = _installed() if "install" in words else None
    _flush()
    done = subprocess.run([sys.executable, "-m", "pip", *words])
    importlib.invalidate_caches()
    if done.returncode:
        raise PipError(f"pip ended with exit code {done.returncode} (its output says why)")
    if before is None:
        return
    tops, folders, paths = set(), [], []
    for name, (mark, dist) in _installed().items():
        if before.get(name, (None,))[0] != mark:
            names, pth, folder = _modules_of(dist)
            tops.update(names)
            folders += [folder] if folder else []
            paths += [(str(dist.locate_file("")), each) for each in pth]
    loaded = sorted(
        name
        for name, module in list(sys.modules.items())
        if name.split(".")[0] in tops or _from_folder(module, folders)
    )
    for module in loaded:
        del sys.modules[module]
    # Python reads `.pth` files only at its start; an editable install's are read now.
    for where, pth in paths:
        site.addpackage(where, pth, None)
    importlib.invalidate_caches()
    roots = sorted({m.split(".")[0] for m in loaded})
    if roots:
        print(
            f"already imported before this install: {', '.join(roots)}; the next import "
            "loads the new version, but objects made before still use the old one: "
            "`reset` for a clean start"
        )


def _timeit(body, setup="pass"):
    import timeit

    timer = timeit.Timer(body, setup=setup, globals=_namespace)
    loops, _ = timer.autorange()
    best = min(timer.repeat(repeat=3, number=loops)) / loops
    for unit, scale in (("s", 1), ("ms", 1e3), ("µs", 1e6), ("ns", 1e9)):
        if best * scale >= 1 or unit == "ns":
            print(f"{best * scale:.3g} {unit} per loop (best of 3, {loops} loops each)")
            return


def _line_magic(text):
    """The Python for one `%` line."""
    name, _, argument = text[1:].partition(" ")
    argument = argument.strip()
    if name == "pip":
        return f"_tether_pip({argument!r})"
    if name == "cd":
        return f"_tether_os.chdir(_tether_os.path.expanduser({argument!r} or '~')); print(_tether_os.getcwd())"
    if name == "timeit":
        return f"_tether_timeit({argument!r})"
    if name == "pwd":
        return "print(_tether_os.getcwd())"
    raise MagicError(f"unknown magic %{name}: tether knows {_MAGICS}")


def _magic_lines(code):
    """Where the cell's `%` and `!` lines are: line number to (column, capture target)."""
    found = {}
    depth = 0
    start = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type in (tokenize.NEWLINE, tokenize.NL):
                start = [] if depth == 0 else None
                continue
            if token.type in (tokenize.INDENT, tokenize.DEDENT, tokenize.COMMENT):
                continue
            # Python 3.11 reads the space before a `!` as an error token of its own.
            if token.type == tokenize.ERRORTOKEN and not token.string.strip():
                continue
            if start is not None:
                start.append(token)
                first = start[0]
                if len(start) == 1 and token.string in ("%", "!"):
                    found[token.start[0]] = (token.start[1], None)
                elif (
                    len(start) == 3
                    and first.type == tokenize.NAME
                    and start[1].string == "="
                    and token.string == "!"
                ):
                    found[first.start[0]] = (token.start[1], first.string)
                if len(start) >= 3:
                    start = None
            if token.string in "([{" and token.type == tokenize.OP:
                depth += 1
            elif token.string in ")]}" and token.type == tokenize.OP:
                depth = max(0, depth - 1)
    except (tokenize.TokenError, SyntaxError):
        pass
    return found


def _rewrite(code):
    """The cell with its IPython idioms as plain Python; strings are left as they are."""
    lines = code.splitlines(True)
    head = lines[0].strip() if lines else ""
    if head.startswith("%%"):
        name, _, argument = head[2:].partition(" ")
        body = "".join(lines[1:])
        if name == "bash":
            return f"_tether_bash({body!r})\n"
        if name == "timeit":
            return f"_tether_timeit({body!r}, {argument.strip() or 'pass'!r})\n"
        raise MagicError(f"unknown cell magic %%{name}: tether knows {_MAGICS}")
    for number, (column, target) in _magic_lines(code).items():
        line = lines[number - 1]
        indent = line[: len(line) - len(line.lstrip())]
        text = line[column:].rstrip("\n")
        if target is not None:
            new = f"{target} = _tether_shell({text[1:].strip()!r}, capture=True)"
        elif text.startswith("!"):
            new = f"_tether_shell({text[1:].strip()!r})"
        else:
            new = _line_magic(text)
        lines[number - 1] = indent + new + "\n"
    return "".join(lines)


def _run(code):
    global _cells
    _cells += 1
    name = f"<cell {_cells}>"
    linecache.cache[name] = (len(code), None, code.splitlines(True), name)
    try:
        code = _rewrite(code)
        linecache.cache[name] = (len(code), None, code.splitlines(True), name)
        tree = ast.parse(code, name, "exec")
        last = None
        if tree.body and isinstance(tree.body[-1], ast.Expr):
            last = ast.Expression(tree.body.pop().value)
        exec(compile(tree, name, "exec"), _namespace)
        value = None
        if last is not None:
            value = eval(compile(last, name, "eval"), _namespace)
        _open_figures(but=value)
        if last is not None:
            if value is not None:
                _namespace["_"] = value
                _flush()
                mime, data = _capped(*_rich(value))
                _send({"type": "display", "mime": mime, "data": data, "echo": True})
        return None, None
    except BaseException as error:  # KeyboardInterrupt and SystemExit end the cell, not us
        return _error_text(error), _summary(error)


_namespace = {
    "__name__": "__main__",
    "__builtins__": builtins,
    "display": display,
    "tool": tool,
    "ToolError": ToolError,
    "MagicError": MagicError,
    "PipError": PipError,
    "Image": Image,
    "_tether_os": os,
    "_tether_pip": _pip,
    "_tether_shell": _shell,
    "_tether_bash": _bash,
    "_tether_timeit": _timeit,
}
_cells = 0


def _main():
    global _cell
    _send({"type": "ready", "interpreter": f"Python {platform.python_version()} ({sys.executable})"})
    while True:
        try:
            message = _runs.pop(0) if _runs else _receive()
        except EOFError:
            os._exit(0)
        except KeyboardInterrupt:
            continue
        if message.get("type") != "run":
            continue
        _cell = message.get("cell")
        # Where this cell's output starts, for tether to tell it from a cell that ran on.
        _place({"type": "begin"})
        error, summary = _run(message.get("code", ""))
        _flush()
        _send({"type": "done", "error": error, "summary": summary})


if __name__ == "__main__":
    _main()
