// tether's JavaScript kernel. Cells arrive on descriptor 3 and every message goes out on
// descriptor 4, each a Content-Length frame of JSON; a cell's own output stays on descriptors
// 1 and 2, which tether reads directly, so nothing a cell prints can reach the channel.
// Cells run in this process's main context, so their globals, requires and Buffers are the
// ones a script would see; declarations become `var`s so a cell can be run again. The channel
// moves to descriptors no child inherits and /dev/null takes 3 and 4, so a cell or a command
// writing on 4 reaches nothing; each message carries the running cell's token, kept in this
// closure, which tether checks.
'use strict';
(() => {
  const fs = require('fs');
  const net = require('net');
  const path = require('path');
  const util = require('util');
  const vm = require('vm');
  const { createRequire } = require('module');
  const { processTopLevelAwait } = require('internal/repl/await');
  const acorn = require('internal/deps/acorn/acorn/dist/acorn');

  for (const fd of [3, 4]) {
    try {
      fs.fstatSync(fd);
    } catch {
      process.stderr.write("tether's kernel needs descriptors 3 and 4 from tether, and they are not open here: " +
        'a sandbox prefix that closes inherited descriptors (docker exec does) cannot run it\n');
      process.exit(2);
    }
  }
  /** The same pipe on a new descriptor, opened close-on-exec as node opens every file. */
  function reopen(fd, flags) {
    for (const dir of ['/proc/self/fd/', '/dev/fd/']) {
      try {
        return fs.openSync(dir + fd, flags);
      } catch {}
    }
    return fd;
  }
  const CELLS = reopen(3, fs.constants.O_RDONLY);
  const MESSAGES = reopen(4, fs.constants.O_WRONLY);
  if (CELLS !== 3 && MESSAGES !== 4) {
    fs.closeSync(3);
    fs.closeSync(4);
    // The lowest free descriptors are the two just closed.
    for (const fd of [fs.openSync('/dev/null', fs.constants.O_RDWR), fs.openSync('/dev/null', fs.constants.O_RDWR)]) {
      if (fd !== 3 && fd !== 4) fs.closeSync(fd);
    }
  }
  const MARK = `\0tether-display:${process.env.TETHER_KERNEL_MARK || ''}\0`;
  delete process.env.TETHER_KERNEL_MARK;
  const MAX_REPR = 20000;
  // Displayed text is cut like printed output; a bigger image is not shown (tether's own limits).
  const HEAD = 16 << 10;
  const TAIL = 8 << 10;
  const MAX_PNG = 4 << 20;
  const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  // The running cell's token, from its `run`; tether ignores messages without it.
  let current = null;
  // Displays so far: each display's message and its mark in stdout carry its number.
  let shown = 0;

  /** Sends a display-like message and marks its place in stdout with its number. */
  function place(message) {
    shown += 1;
    send({ ...message, n: shown });
    process.stdout.write(`${MARK}${shown}\0`);
  }

  function send(message) {
    const body = Buffer.from(JSON.stringify({ ...message, cell: current }));
    const frame = Buffer.concat([Buffer.from(`${MARK}Content-Length: ${body.length}\r\n\r\n`), body]);
    for (let at = 0; at < frame.length;) at += fs.writeSync(MESSAGES, frame, at);
  }

  /** A display within tether's limits: text cut to its head and tail, an image too big refused. */
  function capped(mime, data) {
    if (mime === 'image/png') {
      const size = Math.floor(data.length / 4) * 3;
      if (size <= MAX_PNG) return [mime, data];
      return ['text/plain', `[an image of about ${size} bytes was not shown: over tether's limit of ${MAX_PNG >> 20} MiB for one image]`];
    }
    const raw = Buffer.from(data);
    if (raw.length <= HEAD + TAIL) return [mime, data];
    // Cuts fall on character boundaries: never inside a UTF-8 sequence.
    let head = HEAD;
    while ((raw[head] & 0xc0) === 0x80) head -= 1;
    let tail = raw.length - TAIL;
    while ((raw[tail] & 0xc0) === 0x80) tail += 1;
    const note = `[… ${tail - head} bytes of output cut; the first ${HEAD >> 10} KiB and the last ${TAIL >> 10} KiB are kept …]`;
    return [mime, `${raw.subarray(0, head)}\n${note}\n${raw.subarray(tail)}`];
  }

  // Errors go where prints go, as on a terminal, so they read in the order they happened.
  process.stderr.write = process.stdout.write.bind(process.stdout);
  // The loader cells use for `import()` is still called experimental; a cell need not hear it.
  const emitWarning = process.emitWarning;
  process.emitWarning = function (warning, ...rest) {
    if (String(warning && warning.message || warning).includes('USE_MAIN_CONTEXT_DEFAULT_LOADER')) {
      return;
    }
    return emitWarning.call(process, warning, ...rest);
  };

  class ToolError extends Error {
    constructor(message) {
      super(message);
      this.name = 'ToolError';
    }
  }

  /** An image: `display()` and the echo show it as a PNG. */
  class Image {
    constructor(png) {
      this.png = png;
    }
    [util.inspect.custom]() {
      return `<image: PNG, ${this.png.length} bytes>`;
    }
  }

  /** A tool's text; the images it returned, if any, are in `.images`. */
  class ToolText extends String {
    constructor(text, images) {
      super(text);
      this.images = images;
    }
    get text() {
      return this.valueOf();
    }
    [util.inspect.custom]() {
      return util.inspect(this.valueOf());
    }
  }

  /** A PNG from bytes, base64 or a file path. */
  function image(source) {
    let bytes = source;
    if (typeof source === 'string') {
      bytes = source.startsWith(PNG.toString('base64').slice(0, 8))
        ? Buffer.from(source, 'base64')
        : fs.readFileSync(path.resolve(source));
    }
    if (!(bytes instanceof Uint8Array)) {
      throw new TypeError('image() takes PNG bytes (a Buffer or Uint8Array), base64 text or a path to a .png file');
    }
    bytes = Buffer.from(bytes);
    if (!bytes.subarray(0, 8).equals(PNG)) {
      throw new TypeError('image() takes a PNG: these bytes do not start with the PNG signature');
    }
    return new Image(bytes);
  }

  function textOfHtml(html) {
    return html
      .replace(/<(script|style)[\s\S]*?<\/\1>/gi, '')
      .replace(/<br\s*\/?>|<\/(p|div|tr|li|h\d)>/gi, '\n')
      .replace(/<[^>]+>/g, '')
      .replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&#39;/g, "'")
      .replace(/&amp;/g, '&')
      .trim();
  }

  function inspect(value) {
    const text = util.inspect(value, { depth: 4, maxArrayLength: 100, breakLength: 100 });
    return cut(text, MAX_REPR);
  }

  /** Cuts `text` to `max` characters (code points, as tether's `cut_line` counts) with its one
   *  mark, saying how many were dropped. */
  function cut(text, max) {
    if (text.length <= max) return text;
    let kept = 0;
    let at = 0;
    for (const ch of text) {
      if (kept === max) break;
      at += ch.length;
      kept += 1;
    }
    let rest = 0;
    for (const _ of text.slice(at)) rest += 1;
    return rest === 0 ? text : `${text.slice(0, at)}… [+${rest} chars]`;
  }

  /** The form of `value` a model reads best: a PNG, then markdown, then HTML as text, then inspect. */
  function rich(value, quoteStrings) {
    if (value instanceof Image) return ['image/png', value.png.toString('base64')];
    if (value instanceof Uint8Array && Buffer.from(value.subarray(0, 8)).equals(PNG)) {
      return ['image/png', Buffer.from(value).toString('base64')];
    }
    if (value instanceof ToolText) return ['text/plain', value.valueOf()];
    if (typeof value === 'string' && !quoteStrings) return ['text/plain', value];
    if (value !== null && typeof value === 'object') {
      for (const [method, mime] of [['_repr_png_', 'image/png'], ['_repr_markdown_', 'text/markdown'], ['_repr_html_', 'text/html']]) {
        if (typeof value[method] !== 'function') continue;
        let data;
        try {
          data = value[method]();
        } catch {
          continue;
        }
        if (data === null || data === undefined) continue;
        if (mime === 'image/png') return [mime, typeof data === 'string' ? data : Buffer.from(data).toString('base64')];
        if (mime === 'text/html') return ['text/plain', textOfHtml(String(data))];
        return [mime, String(data)];
      }
    }
    return ['text/plain', inspect(value)];
  }

  /** Shows each value in the cell's result, in order with what the cell printed. */
  function display(...values) {
    for (const value of values) {
      const [mime, data] = capped(...rich(value, false));
      place({ type: 'display', mime, data });
    }
  }

  // Bridged calls waiting for their answers, by id: an answer names its call.
  const waiting = new Map();
  let calls = 0;

  /** Calls one of the run's own tools, as the model would, and resolves to its text. */
  function tool(name, args) {
    calls += 1;
    const id = calls;
    send({ type: 'tool', id, name, args: args || {} });
    return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
  }

  function answer(reply) {
    const call = waiting.get(reply.id);
    if (!call) return;
    waiting.delete(reply.id);
    if (!reply.ok) {
      call.reject(new ToolError(reply.text || 'the tool failed'));
      return;
    }
    const images = (reply.images || []).map((png) => new Image(Buffer.from(png, 'base64')));
    call.resolve(new ToolText(reply.text || '', images));
  }

  /** The cell with its top-level `let`, `const` and `class` made `var`s, so re-running works. */
  function declarationsAsVars(code) {
    if (!/\b(let|const|class)\b/.test(code)) return code;
    let tree;
    try {
      tree = acorn.parse(code, { ecmaVersion: 'latest', sourceType: 'script', allowAwaitOutsideFunction: true, allowHashBang: true });
    } catch {
      return code; // Compiling it again reports the syntax error with its place.
    }
    const edits = [];
    for (const node of tree.body) {
      if (node.type === 'VariableDeclaration' && node.kind !== 'var') {
        edits.push([node.start, node.start + node.kind.length, 'var']);
      } else if (node.type === 'ClassDeclaration' && node.id) {
        edits.push([node.start, node.start, `var ${node.id.name} = `]);
        edits.push([node.end, node.end, ';']);
      }
    }
    for (const [start, end, text] of edits.reverse()) {
      code = code.slice(0, start) + text + code.slice(end);
    }
    return code;
  }

  // Names a Python cell would use, for a hint when one reaches this kernel by mistake.
  const PYTHON_NAMES = /^(print|len|def|import|range|True|False|None|self|elif|pd|np|plt) is not defined$/;

  function errorText(error) {
    if (!(error instanceof Error)) return `Uncaught ${inspect(error)}`;
    const lines = String(error.stack || error).split('\n');
    const kept = lines.filter((line) => !/^\s+at .*(node:|\[eval\]|kernel\.js)/.test(line));
    if (error instanceof ReferenceError && PYTHON_NAMES.test(error.message)) {
      kept.push('this is the JavaScript kernel: for Python, call eval with `language: "python"` (the default)');
    }
    return kept.join('\n');
  }

  // The error's kind and the first line of its message, to head the result.
  function errorSummary(error) {
    const line = error instanceof Error ? `${error.name}: ${error.message}` : inspect(error);
    return cut(line.split('\n')[0].trim(), 300);
  }

  globalThis.display = display;
  globalThis.tool = tool;
  globalThis.image = image;
  globalThis.ToolError = ToolError;
  globalThis.require = createRequire(path.join(process.cwd(), '[tether cell]'));

  let cells = 0;
  // How to end the running cell from the outside: an interrupt rejects it.
  let interruptCell = null;

  process.on('SIGINT', () => {
    if (interruptCell) interruptCell(new Error('Interrupted: the cell was stopped; the kernel and its variables are kept'));
  });
  process.on('uncaughtException', (error) => {
    process.stdout.write(`uncaught exception outside the cell's own flow: ${errorText(error)}\n`);
  });
  process.on('unhandledRejection', (error) => {
    process.stdout.write(`unhandled promise rejection: ${errorText(error)}\n`);
  });

  async function run(code) {
    cells += 1;
    const filename = `cell ${cells}`;
    let source = declarationsAsVars(code);
    let wrapped = null;
    try {
      wrapped = /\bawait\b/.test(source) ? processTopLevelAwait(source) : null;
    } catch {
      // The cell does not parse. Where `await` is allowed, acorn names the real place (node's
      // compiler would only say that `await` is not allowed).
      try {
        acorn.parse(source, { ecmaVersion: 'latest', allowAwaitOutsideFunction: true, allowHashBang: true });
      } catch (e) {
        const line = source.split('\n')[(e.loc && e.loc.line || 1) - 1] || '';
        const caret = ' '.repeat(e.loc ? e.loc.column : 0) + '^';
        const error = new SyntaxError(e.message.replace(/ \(\d+:\d+\)$/, ''));
        error.stack = `${filename}:${e.loc ? e.loc.line : 1}\n${line}\n${caret}\n\nSyntaxError: ${error.message}`;
        throw error;
      }
    }
    const script = new vm.Script(wrapped || source, {
      filename,
      displayErrors: true,
      importModuleDynamically: vm.constants && vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    });
    let value = script.runInThisContext({ breakOnSigint: true, displayErrors: false });
    if (wrapped) {
      const interrupted = new Promise((_, reject) => { interruptCell = reject; });
      const done = await Promise.race([value, interrupted]);
      value = done ? done.value : undefined;
    }
    if (value !== undefined) {
      const [mime, data] = capped(...rich(value, true));
      send({ type: 'display', mime, data, echo: true });
    }
  }

  function reader() {
    const input = new net.Socket({ fd: CELLS, readable: true, writable: false });
    let pending = Buffer.alloc(0);
    // Runs go one at a time; a bridged answer must reach its cell while that cell runs.
    let queue = Promise.resolve();
    input.on('data', (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const head = pending.indexOf('\r\n\r\n');
        if (head < 0) return;
        const match = /content-length:\s*(\d+)/i.exec(pending.subarray(0, head).toString());
        const length = match ? Number(match[1]) : 0;
        if (pending.length < head + 4 + length) return;
        const message = JSON.parse(pending.subarray(head + 4, head + 4 + length).toString());
        pending = pending.subarray(head + 4 + length);
        if (message.type === 'tool_result') {
          answer(message);
        } else if (message.type === 'run') {
          queue = queue.then(async () => {
            current = message.cell;
            // Where this cell's output starts, for tether to tell it from a cell that ran on.
            place({ type: 'begin' });
            let error = null;
            let summary = null;
            try {
              await run(message.code || '');
            } catch (e) {
              error = errorText(e);
              summary = errorSummary(e);
            } finally {
              interruptCell = null;
            }
            send({ type: 'done', error, summary });
          });
        }
      }
    });
    input.on('end', () => process.exit(0));
    input.on('error', () => process.exit(0));
  }

  send({ type: 'ready', interpreter: `Node.js ${process.version} (${process.execPath})` });
  reader();
})();
