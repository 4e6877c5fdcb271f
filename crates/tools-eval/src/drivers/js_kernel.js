// The JavaScript side of the eval kernel (run as `node -e DRIVER`).
//
// File descriptors on Unix, as for the Python kernel:
//   3  framed JSON commands from the host (execute, tool_result, shutdown)
//   4  framed JSON messages to the host (ready, stream, display, result, error, tool_call, done)
//   5  non-blocking read end of the pipe that is this process's fd 1
//   6  non-blocking read end of the pipe that is this process's fd 2
//   7  the kernel log
// On Windows the host names three pipes in the environment instead
// (AGENT_TOOLS_CHANNEL_COMMANDS, _MESSAGES, _INTERRUPTS): commands and messages as above,
// and one whose every byte is an interrupt. Node cannot move its own fds 1 and 2 there, so
// what the kernel's subprocesses write to an inherited stdout or stderr is not the cell's
// output on Windows (what the cell itself prints is); the log is the original stderr.
// Frames are `Content-Length: N\r\n\r\n` followed by N bytes of UTF-8 JSON. Every `done`
// carries the id of its `execute`; a `tool_result` of kind `cancelled` answers a bridged
// call the host gave up on.
//
// One `vm` context lives as long as the kernel: its globals are the cell namespace. Cells
// with top-level `await` or `import` statements run inside an async function whose
// top-level declarations are turned into assignments to the context's globals, so they
// persist too, and whose last expression statement is the cell's value. `import()` and
// `import` statements load ES modules and packages through Node's own loader.
'use strict';

const fs = require('fs');
const net = require('net');
const vm = require('vm');
const util = require('util');
const path = require('path');
const { Console } = require('console');
const { Writable } = require('stream');
const Module = require('module');

const CHANNEL = ['COMMANDS', 'MESSAGES', 'INTERRUPTS'].map((part) => {
  const name = process.env[`AGENT_TOOLS_CHANNEL_${part}`];
  delete process.env[`AGENT_TOOLS_CHANNEL_${part}`];
  return name;
});
const NAMED_CHANNEL = Boolean(CHANNEL[0]);
// Opened for writing only (no create or truncate flags, which a pipe refuses).
const MSG_FD = NAMED_CHANNEL ? fs.openSync(CHANNEL[1], fs.constants.O_WRONLY) : 4;
const OUT_FD = NAMED_CHANNEL ? null : 5;
const ERR_FD = NAMED_CHANNEL ? null : 6;
const LOG_FD = NAMED_CHANNEL ? 2 : 7;
const FLUSH_CHARS = 8192;
// The first writes of a cell go out at once (output printed just before a crash is kept);
// after that, writes are batched (every 50 ms or every FLUSH_CHARS).
const WRITE_THROUGH = 200;
const ROOT = process.env.AGENT_TOOLS_EVAL_ROOT || process.cwd();

function log(text) {
  try {
    fs.writeSync(LOG_FD, text + '\n');
  } catch (_) {
    // the log is best effort
  }
}

const sleepCell = new Int32Array(new SharedArrayBuffer(4));

// A lone surrogate (half of a pair, as a cell can build) would be written as `\ud800`,
// which the host cannot decode into text: it is shown as that escape, as text, instead.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

function wellFormed(key, value) {
  if (typeof value !== 'string') return value;
  return value.replace(LONE_SURROGATE, (c) => '\\u' + c.charCodeAt(0).toString(16));
}

function send(msg) {
  const body = Buffer.from(JSON.stringify(msg, wellFormed), 'utf8');
  const data = Buffer.concat([Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, 'ascii'), body]);
  let off = 0;
  while (off < data.length) {
    try {
      off += fs.writeSync(MSG_FD, data, off, data.length - off);
    } catch (e) {
      if (e.code === 'EAGAIN') {
        Atomics.wait(sleepCell, 0, 0, 2);
      } else {
        throw e;
      }
    }
  }
}

// ------------------------------------------------------------------ bounded output

class CellOutput {
  constructor(head, tail) {
    this.headCap = head;
    this.tailCap = tail;
    this.sent = 0;
    this.pending = [];
    this.pendingLen = 0;
    this.tail = [];
    this.tailLen = 0;
    this.cut = 0;
    this.total = 0;
    this.dirty = false;
    this.lastBeat = 0;
    this.writes = 0;
  }

  write(name, text) {
    if (!text) return;
    this.total += text.length;
    this.writes += 1;
    const room = this.headCap - this.sent - this.pendingLen;
    if (room > 0) {
      this.pend(name, text.slice(0, room));
      if (text.length <= room) {
        if (this.pendingLen >= FLUSH_CHARS || this.writes <= WRITE_THROUGH) this.flush();
        return;
      }
      const rest = text.length - room;
      if (rest > this.tailCap) {
        this.cut += rest - this.tailCap;
        text = text.slice(-this.tailCap);
      } else {
        text = text.slice(room);
      }
    } else if (text.length > this.tailCap) {
      this.cut += text.length - this.tailCap + this.tailLen;
      this.tail = [];
      this.tailLen = 0;
      text = text.slice(-this.tailCap);
    }
    this.tail.push([name, text]);
    this.tailLen += text.length;
    while (this.tailLen > this.tailCap) {
      const [n0, t0] = this.tail[0];
      const excess = this.tailLen - this.tailCap;
      if (t0.length <= excess) {
        this.tail.shift();
        this.tailLen -= t0.length;
        this.cut += t0.length;
      } else {
        this.tail[0] = [n0, t0.slice(excess)];
        this.tailLen -= excess;
        this.cut += excess;
      }
    }
    this.dirty = true;
    if (this.pendingLen >= FLUSH_CHARS) this.flush();
  }

  pend(name, text) {
    const last = this.pending[this.pending.length - 1];
    if (last && last[0] === name) last[1] += text;
    else this.pending.push([name, text]);
    this.pendingLen += text.length;
  }

  flush() {
    for (const [name, text] of this.pending) send({ type: 'stream', name, text });
    this.sent += this.pendingLen;
    this.pending = [];
    this.pendingLen = 0;
  }

  tick() {
    if (this.pending.length) {
      this.flush();
    } else if (this.dirty) {
      const now = Date.now();
      if (now - this.lastBeat > 200) {
        this.lastBeat = now;
        send({ type: 'stream', name: 'stdout', text: '' });
      }
    }
  }

  finish() {
    this.flush();
    let first = true;
    for (const [name, text] of this.tail) {
      const msg = { type: 'stream', name, text };
      if (first && this.cut) msg.cut_before = this.cut;
      first = false;
      send(msg);
    }
    if (first && this.cut) send({ type: 'stream', name: 'stdout', text: '', cut_before: this.cut });
    this.tail = [];
  }
}

let cell = null;
let orphans = [];
let orphanSize = 0;

function emit(name, text) {
  if (cell) {
    cell.write(name, text);
  } else if (orphanSize < 8192) {
    text = text.slice(0, 8192 - orphanSize);
    orphans.push([name, text]);
    orphanSize += text.length;
  }
}

const decoders = { [OUT_FD]: new util.TextDecoder('utf-8'), [ERR_FD]: new util.TextDecoder('utf-8') };
const readBuf = Buffer.alloc(1 << 16);

function drain(fd, name) {
  if (fd === null) return;
  for (;;) {
    let n;
    try {
      n = fs.readSync(fd, readBuf, 0, readBuf.length, null);
    } catch (e) {
      return;
    }
    if (!n) return;
    emit(name, decoders[fd].decode(readBuf.subarray(0, n), { stream: true }));
  }
}

function drainAll() {
  drain(OUT_FD, 'stdout');
  drain(ERR_FD, 'stderr');
}

setInterval(() => {
  drainAll();
  if (cell) cell.tick();
}, 50).unref();

function writerFor(name) {
  return new Writable({
    decodeStrings: false,
    write(chunk, _enc, cb) {
      emit(name, typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      cb();
    },
  });
}

const cellConsole = new Console({ stdout: writerFor('stdout'), stderr: writerFor('stderr'), colorMode: false });

for (const [stream, name] of [[process.stdout, 'stdout'], [process.stderr, 'stderr']]) {
  stream.write = function (chunk, enc, cb) {
    emit(name, typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
    if (typeof enc === 'function') enc();
    else if (typeof cb === 'function') cb();
    return true;
  };
}

function inspect(value) {
  if (typeof value === 'string') return util.inspect(value, { maxStringLength: 20000 });
  return util.inspect(value, { depth: 4, colors: false, maxArrayLength: 100, maxStringLength: 20000, breakLength: 100 });
}

// ------------------------------------------------------------------ the tool() bridge

class ToolError extends Error {
  constructor(message, kind) {
    super(message);
    this.name = 'ToolError';
    this.kind = kind || 'internal';
  }
}

let bridgeId = 0;
const pendingCalls = new Map();

function tool(name, args, options) {
  if (typeof name !== 'string') {
    return Promise.reject(new TypeError("tool(name, args): name must be a string, e.g. await tool('read', {path: 'x'})"));
  }
  if (args === undefined || args === null) args = {};
  if (typeof args !== 'object' || Array.isArray(args)) {
    return Promise.reject(new TypeError('tool(name, args): args must be an object'));
  }
  if (!cell) return Promise.reject(new ToolError('tool() only works while a cell runs', 'rejected'));
  const id = ++bridgeId;
  const full = !!(options && options.full);
  return new Promise((resolve, reject) => {
    pendingCalls.set(id, { resolve, reject, full });
    try {
      cell.flush();
      send({ type: 'tool_call', id, name, args });
    } catch (e) {
      pendingCalls.delete(id);
      reject(new TypeError(`tool(${JSON.stringify(name)}, ...): the arguments must be JSON-serialisable: ${e.message}`));
    }
  });
}

function onToolResult(msg) {
  const p = pendingCalls.get(msg.id);
  if (!p) return;
  pendingCalls.delete(msg.id);
  if (msg.ok) {
    p.resolve(p.full ? { text: msg.text || '', structured: msg.structured ?? null, images: msg.images || 0 } : msg.text || '');
  } else {
    p.reject(new ToolError(msg.error || 'the tool failed', msg.kind));
  }
}

function display(...values) {
  for (const v of values) {
    if (cell) cell.flush();
    send({ type: 'display', data: { 'text/plain': typeof v === 'string' ? v : inspect(v) } });
  }
}

// ------------------------------------------------------------------ the context

const rootRequire = Module.createRequire(path.join(ROOT, '__eval_cell__.js'));
const sandbox = {
  console: cellConsole,
  require: rootRequire,
  module: { exports: {} },
  __dirname: ROOT,
  __filename: path.join(ROOT, '__eval_cell__.js'),
  process,
  Buffer,
  setTimeout,
  clearTimeout,
  setInterval,
  clearInterval,
  setImmediate,
  clearImmediate,
  queueMicrotask,
  structuredClone,
  URL,
  URLSearchParams,
  TextEncoder,
  TextDecoder,
  AbortController,
  AbortSignal,
  performance,
  fetch: globalThis.fetch,
  display,
  tool,
  ToolError,
};
const ctx = vm.createContext(sandbox);

// Interrupts: while a script runs synchronously, `breakOnSigint` turns SIGINT into an
// exception; while a cell awaits, this handler rejects the cell's wait.
let interruptCell = null;
process.on('SIGINT', () => {
  if (interruptCell) interruptCell();
});
process.on('exit', () => {
  // process.exit() in a cell: send what it printed first.
  try {
    drainAll();
    if (cell) cell.finish();
  } catch (_) {
    // the host may be gone already
  }
});
process.on('uncaughtException', (e) => emit('stderr', `Uncaught ${errorText(e)}\n`));
process.on('unhandledRejection', (e) => emit('stderr', `Unhandled promise rejection: ${errorText(e)}\n`));

function errorText(e) {
  if (e && typeof e === 'object' && typeof e.stack === 'string') return trimStack(e.stack);
  return inspect(e);
}

function trimStack(stack) {
  const out = [];
  for (const line of stack.split('\n')) {
    if (/^\s+at /.test(line) && /__eval_async__/.test(line)) {
      // The cell's own frame in the async wrapper: keep where, not the wrapper's name.
      out.push(line.replace(/__eval_async__ \((.*)\)$/, '$1'));
      break;
    }
    if (/^\s+at /.test(line) && /\[eval\]|node:internal|node:vm/.test(line)) break;
    out.push(line);
  }
  return out.join('\n');
}

// Node's own JavaScript parser (the one its REPL uses for top-level await), reachable because
// the kernel runs with --expose-internals. Without it (another Node build), cells with
// top-level await fall back to a line-based rewrite.
let acorn = null;
try {
  acorn = require('internal/deps/acorn/acorn/dist/acorn');
} catch (_) {
  log('no bundled acorn: top-level await cells use the line-based rewrite');
}

// `import()` in a cell goes through the main context's ES module loader, which resolves a
// relative specifier from the current directory and a bare one through node_modules from
// there, as Node's REPL does. Node < 20.12 lacks the option: import() then fails clearly.
const DYNAMIC_IMPORT = vm.constants && vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER;
const scriptOptions = (filename) => (DYNAMIC_IMPORT ? { filename, importModuleDynamically: DYNAMIC_IMPORT } : { filename });

// The loader option is marked experimental; its one-time warning would land in a cell's
// stderr as if the cell had caused it.
const emitWarning = process.emitWarning;
process.emitWarning = function (warning, ...rest) {
  const text = typeof warning === 'string' ? warning : warning && warning.message;
  if (typeof text === 'string' && text.includes('USE_MAIN_CONTEXT_DEFAULT_LOADER')) return;
  return emitWarning.call(this, warning, ...rest);
};

const PARSE_OPTIONS = { ecmaVersion: 'latest', sourceType: 'script', allowHashBang: true };

// Whether a cell that failed to compile as a script did so only because it uses top-level
// `await` or ES `import` statements, which the async rewrite handles. Other errors (a
// `const` declared again by a later cell, a typo) keep V8's own message.
function needsAsyncRewrite(code, e) {
  if (!(e instanceof SyntaxError)) return false;
  if (!acorn) return /await|reserved word|import statement/.test(e.message);
  try {
    acorn.parse(code, PARSE_OPTIONS);
    return false;
  } catch (_) {
    // Not a script: maybe an async cell, or a plain syntax error that the async
    // rewrite reports with the cell's line.
    return /await|reserved word|import|export/.test(e.message) || /\bawait\b|\bimport\b/.test(code);
  }
}

// The text of an `import` declaration as an assignment from `await import(...)`, so the
// names it binds become globals like the cell's other declarations.
function importAsAssignment(code, stmt) {
  const source = code.slice(stmt.source.start, stmt.source.end);
  const attrs = stmt.attributes && stmt.attributes.length ? `, { with: { ${stmt.attributes.map((a) => code.slice(a.start, a.end)).join(', ')} } }` : '';
  const load = `await import(${source}${attrs})`;
  const key = (n) => (n.type === 'Literal' ? JSON.stringify(n.value) : n.name);
  const namespace = stmt.specifiers.find((s) => s.type === 'ImportNamespaceSpecifier');
  const parts = [];
  for (const s of stmt.specifiers) {
    if (s.type === 'ImportDefaultSpecifier') parts.push(`default: ${s.local.name}`);
    else if (s.type === 'ImportSpecifier') parts.push(`${key(s.imported)}: ${s.local.name}`);
  }
  let text;
  if (namespace && parts.length) text = `void (${namespace.local.name} = ${load}, {${parts.join(', ')}} = ${namespace.local.name});`;
  else if (namespace) text = `void (${namespace.local.name} = ${load});`;
  else if (parts.length) text = `void ({${parts.join(', ')}} = ${load});`;
  else text = `${load};`;
  // Keep the cell's line numbers for the statements after this one.
  return text + '\n'.repeat((code.slice(stmt.start, stmt.end).match(/\n/g) || []).length);
}

// A cell with top-level `await` or `import` as the body of an async function, on the same
// lines as the cell: its top-level declarations become assignments to the context's
// globals, so they outlive the function (and a cell can be run again), and its last
// expression statement is returned as the cell's value.
function asyncCellSource(code) {
  const program = acorn.parse(code, { ...PARSE_OPTIONS, allowAwaitOutsideFunction: true, allowImportExportEverywhere: true });
  const edits = [];
  const edit = (from, to, text) => edits.push([from, to, text, edits.length]);
  let prologue = '';
  program.body.forEach((stmt, i) => {
    switch (stmt.type) {
      case 'VariableDeclaration': {
        const decls = stmt.declarations;
        edit(stmt.start, decls[0].start, 'void (');
        for (const d of decls) {
          if (d.init) continue;
          // `let x;` resets x; `var x;` keeps a value x already has, as in a script.
          const name = d.id.name;
          edit(d.id.end, d.id.end, stmt.kind === 'var' ? ` = (typeof ${name} === 'undefined' ? undefined : ${name})` : ' = undefined');
        }
        edit(decls[decls.length - 1].end, stmt.end, ');');
        break;
      }
      case 'FunctionDeclaration':
        // Hoisted inside the function, so it is published before any statement runs.
        prologue += `globalThis[${JSON.stringify(stmt.id.name)}] = ${stmt.id.name}; `;
        break;
      case 'ClassDeclaration':
        edit(stmt.start, stmt.start, `${stmt.id.name} = `);
        edit(stmt.end, stmt.end, ';');
        break;
      case 'ImportDeclaration':
        edit(stmt.start, stmt.end, importAsAssignment(code, stmt));
        break;
      case 'ExpressionStatement':
        if (i === program.body.length - 1) {
          edit(stmt.start, stmt.start, 'return (');
          edit(stmt.expression.end, stmt.end, ');');
        }
        break;
      default:
        break;
    }
  });
  // Later positions first; at one position, the edit made last goes first.
  edits.sort((a, b) => b[0] - a[0] || b[3] - a[3]);
  let out = code;
  for (const [from, to, text] of edits) out = out.slice(0, from) + text + out.slice(to);
  return `(async function __eval_async__() { ${prologue}${out}\n})()`;
}

// The line-based rewrite, for a Node without a bundled parser.
const DECL = /^(?:const|let|var)\s+([A-Za-z_$][\w$]*)(\s*=)/;
const FUNC = /^(async\s+)?function(\s*\*?\s*)([A-Za-z_$][\w$]*)/;
const CLASS = /^class\s+([A-Za-z_$][\w$]*)/;
const STATEMENT = /^(?:(?:const|let|var|if|for|while|do|function|async\s+function|class|return|throw|try|switch|import|export)(?![\w$])|[{}]|\/\/|\/\*)/;

function hoistDeclarations(lines) {
  const declared = new Set();
  const out = lines.map((line, i) => {
    let m = DECL.exec(line);
    if (m) {
      declared.add(i);
      return line.replace(DECL, '$1$2');
    }
    m = FUNC.exec(line);
    if (m) {
      declared.add(i);
      return `${m[3]} = ${line}`;
    }
    m = CLASS.exec(line);
    if (m) {
      declared.add(i);
      return `${m[1]} = ${line}`;
    }
    return line;
  });
  return { lines: out, declared };
}

function lineBasedAsyncScript(code, filename) {
  const { lines, declared } = hoistDeclarations(code.split('\n'));
  let last = lines.length - 1;
  while (last >= 0 && lines[last].trim() === '') last--;
  // Try to return the value of the last statement, starting it at the latest line that
  // makes the whole thing compile.
  for (let k = last; k >= 0 && k > last - 20; k--) {
    if (/^\s/.test(lines[k]) || STATEMENT.test(lines[k]) || declared.has(k)) continue;
    const body = lines.slice(0, k);
    const tail = lines.slice(k, last + 1);
    tail[tail.length - 1] = tail[tail.length - 1].replace(/;\s*$/, '');
    tail[0] = 'return (' + tail[0];
    const src = '(async function __eval_async__() { ' + body.concat(tail).join('\n') + '\n); })()';
    try {
      return new vm.Script(src, scriptOptions(filename));
    } catch (_) {
      // not an expression from here on; try an earlier line
    }
  }
  return new vm.Script('(async function __eval_async__() { ' + lines.join('\n') + '\n})()', scriptOptions(filename));
}

function compileAsync(code, filename) {
  if (!acorn) return lineBasedAsyncScript(code, filename);
  let source;
  try {
    source = asyncCellSource(code);
  } catch (e) {
    if (!(e instanceof SyntaxError) || !e.loc) throw e;
    const err = new SyntaxError(e.message.replace(/\s*\(\d+:\d+\)$/, ''));
    err.stack = `SyntaxError: ${err.message}\n    at ${filename}:${e.loc.line}:${e.loc.column + 1}`;
    throw err;
  }
  return new vm.Script(source, scriptOptions(filename));
}

function isPromise(v) {
  return v !== null && (typeof v === 'object' || typeof v === 'function') && typeof v.then === 'function';
}

function awaitInterruptibly(value) {
  return new Promise((resolve, reject) => {
    interruptCell = () => {
      const e = new Error('KeyboardInterrupt: the cell was interrupted while it awaited');
      e.name = 'KeyboardInterrupt';
      e.interrupted = true;
      reject(e);
    };
    Promise.resolve(value).then(resolve, reject);
  });
}

async function runCell(msg) {
  const code = msg.code;
  const filename = `<cell ${msg.cell || 0}>`;
  cell = new CellOutput(msg.head || 10000, msg.tail || 10000);
  for (const [name, text] of orphans) cell.write(name, text);
  orphans = [];
  orphanSize = 0;
  let status = 'ok';
  try {
    let script = null;
    try {
      script = new vm.Script(code, scriptOptions(filename));
    } catch (e) {
      if (!needsAsyncRewrite(code, e)) throw e;
    }
    if (!script) script = compileAsync(code, filename);
    let value = script.runInContext(ctx, { breakOnSigint: true, displayErrors: false });
    if (isPromise(value)) value = await awaitInterruptibly(value);
    if (value !== undefined) {
      sandbox._ = value;
      cell.flush();
      send({ type: 'result', data: { 'text/plain': inspect(value) } });
    }
  } catch (e) {
    const interrupted = !!(e && (e.interrupted || (typeof e.message === 'string' && /Script execution interrupted/.test(e.message))));
    status = interrupted ? 'interrupted' : 'error';
    const isErr = e && typeof e === 'object' && typeof e.stack === 'string';
    if (isErr && e.code === 'ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING' && !DYNAMIC_IMPORT) {
      e.message += ` (import() in a cell needs Node.js 20.12 or later; this is ${process.version}: use require, or set [eval] node to a newer node)`;
      e.stack = `${e.name}: ${e.message}`;
    }
    cell.flush();
    send({
      type: 'error',
      ename: interrupted ? 'KeyboardInterrupt' : isErr ? String(e.name || 'Error') : 'Thrown',
      evalue: isErr ? String(e.message) : inspect(e),
      traceback: interrupted ? 'KeyboardInterrupt' : isErr ? trimStack(e.stack) : `Uncaught ${inspect(e)}`,
    });
  } finally {
    interruptCell = null;
    drainAll();
    const done = cell;
    done.finish();
    cell = null;
    send({ type: 'done', id: msg.id, status, output_chars: done.total, cut_chars: done.cut });
  }
}

// ------------------------------------------------------------------ the command loop

const queue = [];
let running = false;

async function pump() {
  if (running) return;
  running = true;
  while (queue.length) {
    const msg = queue.shift();
    try {
      await runCell(msg);
    } catch (e) {
      log(`cell failed outside user code: ${e && e.stack}`);
    }
  }
  running = false;
}

let inbuf = Buffer.alloc(0);
const commands = NAMED_CHANNEL
  ? net.connect(CHANNEL[0])
  : new net.Socket({ fd: 3, readable: true, writable: false });
if (NAMED_CHANNEL) {
  // Windows: no SIGINT to send, so interrupts come as bytes. A synchronous loop cannot be
  // broken this way (`breakOnSigint` needs a signal); the host then ends the kernel.
  const interrupts = net.connect(CHANNEL[2]);
  interrupts.on('data', () => {
    if (interruptCell) interruptCell();
  });
  interrupts.on('error', () => {});
  interrupts.unref();
}
commands.on('data', (chunk) => {
  inbuf = Buffer.concat([inbuf, chunk]);
  for (;;) {
    const end = inbuf.indexOf('\r\n\r\n');
    if (end < 0) return;
    const header = inbuf.subarray(0, end).toString('ascii');
    const m = /content-length:\s*(\d+)/i.exec(header);
    if (!m) {
      log('frame without Content-Length');
      process.exit(70);
    }
    const len = Number(m[1]);
    if (inbuf.length < end + 4 + len) return;
    const msg = JSON.parse(inbuf.subarray(end + 4, end + 4 + len).toString('utf8'));
    inbuf = inbuf.subarray(end + 4 + len);
    if (msg.type === 'execute') {
      queue.push(msg);
      pump();
    } else if (msg.type === 'tool_result') {
      onToolResult(msg);
    } else if (msg.type === 'shutdown') {
      process.exit(0);
    }
  }
});
commands.on('end', () => process.exit(0));
commands.on('error', () => process.exit(0));

send({ type: 'ready', language: 'javascript', version: process.versions.node, executable: process.execPath, pid: process.pid });
