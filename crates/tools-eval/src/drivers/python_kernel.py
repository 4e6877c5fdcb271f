# The Python side of the eval kernel.
#
# The host starts `python -c BOOT DRIVER` with these file descriptors:
#   3  framed JSON commands from the host (execute, tool_result, shutdown)
#   4  framed JSON messages to the host (ready, stream, display, result, error, tool_call, done)
#   5  non-blocking read end of the pipe that is this process's fd 1
#   6  non-blocking read end of the pipe that is this process's fd 2
#   7  the kernel log (the host keeps its last lines for crash reports)
# Frames are `Content-Length: N\r\n\r\n` followed by N bytes of UTF-8 JSON. Every `done`
# carries the id of its `execute`, so the host can tell a late completion from the current
# one; a `tool_result` of kind `cancelled` answers a bridged call the host gave up on.
#
# User code never sees fds 3/4: sys.stdout/sys.stderr are replaced by streams that feed the
# running cell, and whatever reaches fd 1/2 directly (C code, subprocesses) is read back from
# fds 5/6 by a pump thread. Output per cell is bounded here (head + tail), so a cell printing
# gigabytes costs the host no memory.

import ast
import builtins
import codecs
import json
import linecache
import os
import select
import signal
import sys
import threading
import time
import traceback

CMD_FD, MSG_FD, OUT_FD, ERR_FD, LOG_FD = 3, 4, 5, 6, 7
DRIVER_FILE = "<eval-kernel>"
FLUSH_CHARS = 8192
# The first writes of a cell go out at once (so output printed just before a crash is not
# lost); after that, writes are batched (at most every 50 ms or every FLUSH_CHARS).
WRITE_THROUGH = 200
REPR_MAX = 100_000
MAX_PX = 1024

_main_thread = threading.main_thread()
_out_lock = threading.RLock()
_send_lock = threading.Lock()
_bridge_lock = threading.Lock()
_in_cell = False
_critical = 0
_pending_interrupt = False
_cell = None
_cell_filename = "<cell>"
_bridge_id = 0
_loop = None
_limits = {"head": 10_000, "tail": 10_000}
_fault_log = None


def log(text):
    try:
        os.write(LOG_FD, (text + "\n").encode("utf-8", "replace"))
    except OSError:
        pass


# ---------------------------------------------------------------- the channel

class _Critical:
    """Defers KeyboardInterrupt on the main thread while a frame is being read or written,
    so an interrupt can never leave half a frame on the channel."""

    def __enter__(self):
        global _critical
        if threading.current_thread() is _main_thread:
            _critical += 1

    def __exit__(self, *exc):
        global _critical, _pending_interrupt
        if threading.current_thread() is _main_thread:
            _critical -= 1
            if _critical == 0 and _pending_interrupt and _in_cell and exc[0] is None:
                _pending_interrupt = False
                raise KeyboardInterrupt
        return False


def _on_sigint(signum, frame):
    global _pending_interrupt
    if _critical or not _in_cell:
        _pending_interrupt = _in_cell
        return
    raise KeyboardInterrupt


def _escape_unencodable(err):
    """Text that is not Unicode (a file name decoded with surrogateescape, a lone surrogate)
    is shown escaped (`\\xff`, `\\ud800`) instead of breaking the channel. The escape lands
    inside a JSON string, so its backslash is itself escaped."""
    out = []
    for ch in err.object[err.start:err.end]:
        c = ord(ch)
        if 0xDC80 <= c <= 0xDCFF:
            out.append("\\\\x%02x" % (c - 0xDC00))
        else:
            out.append("\\\\u%04x" % c)
    return "".join(out), err.end


codecs.register_error("eval-escape", _escape_unencodable)


def send(msg):
    body = json.dumps(msg, default=str, ensure_ascii=False).encode("utf-8", "eval-escape")
    data = memoryview(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    with _Critical():
        with _send_lock:
            while data:
                n = os.write(MSG_FD, data)
                data = data[n:]


class _FrameReader:
    def __init__(self, fd):
        self.fd = fd
        self.buf = bytearray()

    def read(self):
        """The next command, or None when the host closed the channel."""
        with _Critical():
            while True:
                end = self.buf.find(b"\r\n\r\n")
                if end >= 0:
                    length = None
                    for line in bytes(self.buf[:end]).decode("ascii", "replace").split("\r\n"):
                        name, _, value = line.partition(":")
                        if name.strip().lower() == "content-length":
                            length = int(value.strip())
                    if length is None:
                        raise RuntimeError("frame without Content-Length")
                    start = end + 4
                    if len(self.buf) >= start + length:
                        body = bytes(self.buf[start:start + length])
                        del self.buf[:start + length]
                        return json.loads(body)
                chunk = os.read(self.fd, 1 << 16)
                if not chunk:
                    return None
                self.buf += chunk


_reader = _FrameReader(CMD_FD)


# ---------------------------------------------------------------- bounded output

class _CellOutput:
    """One cell's output: the first `head` characters are forwarded as they come, after that
    only a rolling tail of `tail` characters is kept and sent when the cell ends."""

    def __init__(self, head, tail):
        self.head_cap = head
        self.tail_cap = tail
        self.sent = 0
        self.pending = []
        self.pending_len = 0
        self.tail = []
        self.tail_len = 0
        self.cut = 0
        self.total = 0
        self.dirty = False
        self.last_beat = 0.0
        self.writes = 0

    def write(self, name, text):
        if not text:
            return
        self.total += len(text)
        self.writes += 1
        room = self.head_cap - self.sent - self.pending_len
        if room > 0:
            head = text[:room]
            self._pend(name, head)
            if len(text) <= room:
                if self.pending_len >= FLUSH_CHARS or self.writes <= WRITE_THROUGH:
                    self.flush()
                return
            rest = len(text) - room
            if rest > self.tail_cap:
                self.cut += rest - self.tail_cap
                text = text[-self.tail_cap:]
            else:
                text = text[room:]
        elif len(text) > self.tail_cap:
            self.cut += len(text) - self.tail_cap + self.tail_len
            self.tail = []
            self.tail_len = 0
            text = text[-self.tail_cap:]
        self.tail.append((name, text))
        self.tail_len += len(text)
        while self.tail_len > self.tail_cap:
            n0, t0 = self.tail[0]
            excess = self.tail_len - self.tail_cap
            if len(t0) <= excess:
                self.tail.pop(0)
                self.tail_len -= len(t0)
                self.cut += len(t0)
            else:
                self.tail[0] = (n0, t0[excess:])
                self.tail_len -= excess
                self.cut += excess
        self.dirty = True
        if self.pending_len >= FLUSH_CHARS:
            self.flush()

    def _pend(self, name, text):
        if self.pending and self.pending[-1][0] == name:
            self.pending[-1] = (name, self.pending[-1][1] + text)
        else:
            self.pending.append((name, text))
        self.pending_len += len(text)

    def flush(self):
        for name, text in self.pending:
            send({"type": "stream", "name": name, "text": text})
        self.sent += self.pending_len
        self.pending = []
        self.pending_len = 0

    def tick(self):
        if self.pending:
            self.flush()
        elif self.dirty:
            now = time.monotonic()
            if now - self.last_beat > 0.2:
                # Output past the head is only counted, but it still proves the cell is alive.
                self.last_beat = now
                send({"type": "stream", "name": "stdout", "text": ""})

    def finish(self):
        self.flush()
        first = True
        for name, text in self.tail:
            msg = {"type": "stream", "name": name, "text": text}
            if first and self.cut:
                msg["cut_before"] = self.cut
            first = False
            send(msg)
        if first and self.cut:
            send({"type": "stream", "name": "stdout", "text": "", "cut_before": self.cut})
        self.tail = []


class _Orphans:
    """Output that arrives between cells (a background subprocess, a thread), kept small and
    shown at the start of the next cell."""

    def __init__(self):
        self.items = []
        self.size = 0

    def write(self, name, text):
        if self.size < 8192:
            text = text[: 8192 - self.size]
            self.items.append((name, text))
            self.size += len(text)


_orphans = _Orphans()


def _emit(name, text):
    with _out_lock:
        target = _cell if _cell is not None else _orphans
        target.write(name, text)


class _BinaryShim:
    def __init__(self, stream):
        self.stream = stream

    def write(self, b):
        self.stream.write(bytes(b).decode("utf-8", "replace"))
        return len(b)

    def flush(self):
        pass


class CellStream:
    """sys.stdout / sys.stderr while the kernel runs: text goes to the running cell."""

    encoding = "utf-8"
    errors = "replace"

    def __init__(self, name, fd):
        self.name = name
        self._fd = fd
        self.buffer = _BinaryShim(self)

    def write(self, s):
        if not isinstance(s, str):
            raise TypeError("write() argument must be str, not %s" % type(s).__name__)
        _emit(self.name, s)
        return len(s)

    def writelines(self, lines):
        for line in lines:
            self.write(line)

    def flush(self):
        pass

    def isatty(self):
        return False

    def fileno(self):
        return self._fd

    def readable(self):
        return False

    def writable(self):
        return True

    @property
    def closed(self):
        return False


_decoders = {}


def _drain(fd, name):
    import codecs
    dec = _decoders.get(fd)
    if dec is None:
        dec = _decoders[fd] = codecs.getincrementaldecoder("utf-8")("replace")
    while True:
        try:
            chunk = os.read(fd, 1 << 16)
        except BlockingIOError:
            return
        except InterruptedError:
            continue
        except OSError:
            return
        if not chunk:
            return
        _emit(name, dec.decode(chunk))


def _drain_all():
    _drain(OUT_FD, "stdout")
    _drain(ERR_FD, "stderr")


def _pump():
    while True:
        try:
            ready, _, _ = select.select([OUT_FD, ERR_FD], [], [], 0.05)
        except InterruptedError:
            continue
        except Exception as e:  # the fds are gone: nothing left to pump
            log("pump stopped: %r" % (e,))
            return
        try:
            with _out_lock:
                if OUT_FD in ready:
                    _drain(OUT_FD, "stdout")
                if ERR_FD in ready:
                    _drain(ERR_FD, "stderr")
                if _cell is not None:
                    _cell.tick()
        except Exception as e:
            log("pump error: %r" % (e,))


# ---------------------------------------------------------------- rendering

def _b64(data):
    import base64
    return base64.b64encode(data).decode("ascii")


def _figure_png(fig):
    import io
    w, h = fig.get_size_inches()
    dpi = float(fig.dpi or 100)
    biggest = max(w, h) * dpi
    if biggest > MAX_PX:
        dpi = dpi * MAX_PX / biggest
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi)
    return buf.getvalue()


def _class_method(obj, name):
    try:
        return getattr(type(obj), name, None) is not None and callable(getattr(obj, name))
    except Exception:
        return False


def render(obj):
    """The display data of one object: a dict of MIME type -> data."""
    mod = type(obj).__module__ or ""
    if mod.startswith("matplotlib") and hasattr(obj, "savefig") and hasattr(obj, "get_size_inches"):
        data = {"image/png": _b64(_figure_png(obj))}
        try:
            import matplotlib.pyplot as plt
            plt.close(obj)
        except Exception:
            pass
        return data
    if mod.startswith("pandas") and hasattr(obj, "to_string"):
        try:
            if hasattr(obj, "columns"):
                text = obj.to_string(max_rows=60, max_cols=20, show_dimensions="truncate")
            else:
                text = obj.to_string(max_rows=60, length=True, dtype=True, name=True)
            return {"text/plain": text}
        except Exception:
            pass
    data = {}
    if _class_method(obj, "_repr_png_"):
        try:
            png = obj._repr_png_()
            if isinstance(png, tuple):
                png = png[0]
            if isinstance(png, str):
                import base64
                png = base64.b64decode(png)
            if png:
                data["image/png"] = _b64(png)
        except Exception as e:
            data["text/plain"] = "(_repr_png_ failed: %r)" % (e,)
    if _class_method(obj, "_repr_markdown_"):
        try:
            md = obj._repr_markdown_()
            if isinstance(md, tuple):
                md = md[0]
            if md:
                data["text/markdown"] = str(md)
        except Exception as e:
            data["text/plain"] = "(_repr_markdown_ failed: %r)" % (e,)
    if "text/markdown" not in data and "image/png" not in data:
        text = repr(obj)
        if len(text) > REPR_MAX:
            # Head and tail, with the marker the host merges into its own cut.
            keep = REPR_MAX // 2
            text = "%s\n… [cut: %d characters of the value not shown] …\n%s" % (
                text[:keep], len(text) - 2 * keep, text[-keep:])
        data["text/plain"] = text
    return data


def display(*objs, **kwargs):
    """Shows each object in the cell's output, as a notebook does."""
    for obj in objs:
        data = render(obj)
        with _out_lock:
            if _cell is not None:
                _cell.flush()
        send({"type": "display", "data": data})


def _flush_figures():
    if "matplotlib.pyplot" not in sys.modules:
        return
    plt = sys.modules["matplotlib.pyplot"]
    try:
        nums = list(plt.get_fignums())
    except Exception:
        return
    for num in nums:
        fig = plt.figure(num)
        png = _figure_png(fig)
        with _out_lock:
            if _cell is not None:
                _cell.flush()
        send({"type": "display", "data": {"image/png": _b64(png)}})
    plt.close("all")


# ---------------------------------------------------------------- the tool() bridge

class ToolError(Exception):
    """A bridged tool call failed; `kind` is the tool error kind (invalid_arguments,
    not_available, timed_out, rejected, internal)."""

    def __init__(self, message, kind="internal"):
        super().__init__(message)
        self.kind = kind


class ToolResult(str):
    """A bridged tool's text; `.structured` holds its structured result (or None)."""

    structured = None
    images = 0


def tool(name, args=None, **kwargs):
    """Calls another tool of this run, as the same surface, with the same guards."""
    global _bridge_id
    if not isinstance(name, str):
        raise TypeError("tool(name, args): name must be a str, e.g. tool('read', {'path': 'x'})")
    if args is None:
        args = kwargs
    elif kwargs:
        raise TypeError("tool(name, args): pass the arguments either as a dict or as keywords")
    if not isinstance(args, dict):
        raise TypeError("tool(name, args): args must be a dict, got %s" % type(args).__name__)
    try:
        json.dumps(args)
    except (TypeError, ValueError) as e:
        raise TypeError("tool(%r, ...): the arguments must be JSON-serialisable: %s" % (name, e)) from None
    if _cell is None:
        raise ToolError("tool() only works while a cell runs", "rejected")
    with _bridge_lock:
        _bridge_id += 1
        call_id = _bridge_id
        with _out_lock:
            if _cell is not None:
                _cell.flush()
        send({"type": "tool_call", "id": call_id, "name": name, "args": args})
        while True:
            msg = _reader.read()
            if msg is None:
                os._exit(0)
            if msg.get("type") == "tool_result" and msg.get("id") == call_id:
                break
    if msg.get("ok"):
        result = ToolResult(msg.get("text", ""))
        result.structured = msg.get("structured")
        result.images = msg.get("images", 0)
        return result
    raise ToolError(msg.get("error", "the tool failed"), msg.get("kind", "internal"))


# ---------------------------------------------------------------- magics

class _Magics:
    """What the host's magic rewriting turns `%pip`, `!cmd`, `%%bash`, … into."""

    def _ns(self):
        import __main__
        return __main__.__dict__

    def pip(self, argline):
        import importlib
        import shlex
        import subprocess
        args = shlex.split(argline)
        before = _dist_snapshot()
        with _out_lock:
            if _cell is not None:
                _cell.flush()
        proc = subprocess.Popen(
            [sys.executable, "-m", "pip", *args],
            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
        )
        for line in iter(proc.stdout.readline, b""):
            sys.stdout.write(line.decode("utf-8", "replace"))
        code = proc.wait()
        importlib.invalidate_caches()
        _forget_modules(args, before, _dist_snapshot())
        if code != 0:
            raise RuntimeError("%%pip %s failed (pip exited with code %d); see the output above" % (argline, code))

    def cd(self, path):
        path = path.strip()
        if len(path) >= 2 and path[0] == path[-1] and path[0] in "'\"":
            path = path[1:-1]
        target = os.path.expanduser(os.path.expandvars(path)) if path else os.path.expanduser("~")
        os.chdir(target)
        print(os.getcwd())

    def pwd(self):
        return os.getcwd()

    def sh(self, cmd, capture=False):
        import subprocess
        with _out_lock:
            if _cell is not None:
                _cell.flush()
        if capture:
            proc = subprocess.run(cmd, shell=True, stdout=subprocess.PIPE, stdin=subprocess.DEVNULL)
            return proc.stdout.decode("utf-8", "replace").splitlines()
        proc = subprocess.run(cmd, shell=True, stdin=subprocess.DEVNULL)
        if proc.returncode != 0:
            _drain_all_locked()
            sys.stderr.write("(exit code %d)\n" % proc.returncode)
        return None

    def bash(self, script):
        import subprocess
        proc = subprocess.run(["bash", "-c", script], stdin=subprocess.DEVNULL)
        if proc.returncode != 0:
            _drain_all_locked()
            sys.stderr.write("(bash exited with code %d)\n" % proc.returncode)

    def _compile(self, src, offset, mode):
        return compile("\n" * offset + src, _cell_filename, mode, flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)

    def time(self, src, offset=0):
        mode = "eval"
        try:
            ast.parse(src, mode="eval")
        except SyntaxError:
            mode = "exec"
        code = self._compile(src, offset, mode)
        c0, w0 = time.process_time(), time.perf_counter()
        try:
            value = eval(code, self._ns())
        finally:
            c1, w1 = time.process_time(), time.perf_counter()
            print("CPU time: %s, wall time: %s" % (_fmt_secs(c1 - c0), _fmt_secs(w1 - w0)))
        return value if mode == "eval" else None

    def timeit(self, src, setup="pass", number=None, repeat=None):
        import timeit as _timeit
        timer = _timeit.Timer(src, setup or "pass", globals=self._ns())
        if number is None:
            number, _ = timer.autorange()
        runs = timer.repeat(repeat=repeat or 5, number=number)
        per = [r / number for r in runs]
        mean = sum(per) / len(per)
        std = (sum((p - mean) ** 2 for p in per) / len(per)) ** 0.5
        print("%s ± %s per loop (mean ± std. dev. of %d runs, %d loops each)"
              % (_fmt_secs(mean), _fmt_secs(std), len(per), number))

    def env(self, arg):
        arg = arg.strip()
        if not arg:
            return dict(os.environ)
        if "=" in arg:
            name, _, value = arg.partition("=")
        elif " " in arg:
            name, _, value = arg.partition(" ")
        else:
            return os.environ.get(arg)
        name, value = name.strip(), value.strip()
        os.environ[name] = value
        print("env: %s=%s" % (name, value))
        return None

    def matplotlib(self, arg):
        return None


def _norm(name):
    import re
    return re.sub(r"[-_.]+", "_", name).lower()


def _dist_snapshot():
    """Every installed distribution on sys.path: normalised name -> (version, location, dist)."""
    try:
        import importlib.metadata as md
    except ImportError:
        return {}
    snap = {}
    for d in md.distributions():
        try:
            name = d.metadata["Name"]
        except Exception:
            continue
        if name:
            snap.setdefault(_norm(name), (d.version, str(getattr(d, "_path", "")), d))
    return snap


def _top_level(dist):
    tops = set()
    try:
        top = dist.read_text("top_level.txt")
    except Exception:
        top = None
    if top:
        tops.update(t.strip() for t in top.split() if t.strip())
    try:
        files = dist.files or ()
    except Exception:
        files = ()
    for f in files:
        parts = f.parts
        if not parts or parts[0] in ("..", "__pycache__") or parts[0].endswith((".dist-info", ".egg-info")):
            continue
        first = parts[0][:-3] if parts[0].endswith(".py") else parts[0]
        if first.isidentifier():
            tops.add(first)
    return tops


def _forget_modules(args, before, after):
    """Drops from sys.modules every module of a distribution that %pip added, changed or
    removed (and of any requirement named on the command line), so the next import loads
    what is installed now."""
    import re
    changed = {k for k in after if k not in before or before[k][:2] != after[k][:2]}
    changed |= {k for k in before if k not in after}
    for a in args[1:]:
        if a.startswith("-"):
            continue
        base = os.path.basename(a.rstrip("/"))
        if base.endswith(".whl"):
            base = base.split("-")[0]
        elif base.endswith((".tar.gz", ".zip", ".tar.bz2")):
            base = re.sub(r"-\d.*$", "", base)
        base = re.split(r"[\[<>=!~; @]", base)[0]
        if base:
            changed.add(_norm(base))
    tops = set()
    for key in changed:
        tops.add(key)
        for snap in (after, before):
            if key in snap:
                tops |= _top_level(snap[key][2])
    for mod in list(sys.modules):
        top = mod.split(".")[0]
        if top in tops or top.lower() in tops:
            sys.modules.pop(mod, None)


def _drain_all_locked():
    with _out_lock:
        _drain_all()


def _fmt_secs(s):
    if s >= 1:
        return "%.3g s" % s
    if s >= 1e-3:
        return "%.3g ms" % (s * 1e3)
    if s >= 1e-6:
        return "%.3g µs" % (s * 1e6)
    return "%.3g ns" % (s * 1e9)


def _no_input(*args, **kwargs):
    raise RuntimeError("input() is not available in eval: no terminal is attached; put the values in the code")


# ---------------------------------------------------------------- running a cell

def _trimmed(exc):
    te = traceback.TracebackException(type(exc), exc, exc.__traceback__, compact=True)
    _strip_driver(te, set())
    return "".join(te.format())


def _strip_driver(te, seen):
    if id(te) in seen:
        return
    seen.add(id(te))
    te.stack = traceback.StackSummary.from_list([f for f in te.stack if f.filename != DRIVER_FILE])
    for nxt in (te.__cause__, te.__context__):
        if nxt is not None:
            _strip_driver(nxt, seen)


def _run(code_obj, ns):
    global _loop
    res = eval(code_obj, ns)
    if code_obj.co_flags & 0x80:  # CO_COROUTINE: top-level await
        import asyncio
        if _loop is None:
            _loop = asyncio.new_event_loop()
        res = _loop.run_until_complete(res)
    return res


def run_cell(msg):
    global _cell, _cell_filename, _in_cell, _pending_interrupt
    import __main__
    ns = __main__.__dict__
    code = msg["code"]
    number = msg.get("cell", 0)
    _cell_filename = "<cell %d>" % number
    linecache.cache[_cell_filename] = (len(code), None, code.splitlines(True), _cell_filename)
    with _out_lock:
        _cell = _CellOutput(int(msg.get("head", _limits["head"])), int(msg.get("tail", _limits["tail"])))
        for name, text in _orphans.items:
            _cell.write(name, text)
        _orphans.items, _orphans.size = [], 0
    status = "ok"
    _pending_interrupt = False
    _in_cell = True
    try:
        try:
            tree = ast.parse(code, _cell_filename, "exec")
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr) and not code.rstrip().endswith(";"):
                last = ast.Expression(tree.body.pop().value)
            flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
            _run(compile(tree, _cell_filename, "exec", flags=flags), ns)
            if last is not None:
                value = _run(compile(last, _cell_filename, "eval", flags=flags), ns)
                if value is not None:
                    ns["_"] = value
                    _flush_figures()
                    data = render(value)
                    with _out_lock:
                        _cell.flush()
                    send({"type": "result", "data": data})
            _flush_figures()
        except BaseException as e:
            status = "interrupted" if isinstance(e, KeyboardInterrupt) else "error"
            try:
                text = _trimmed(e) if not isinstance(e, SyntaxError) else "".join(
                    traceback.format_exception_only(type(e), e))
            except BaseException:
                text = "%s: %s\n" % (type(e).__name__, e)
            try:
                _flush_figures()
            except BaseException:
                pass
            with _out_lock:
                _cell.flush()
            send({"type": "error", "ename": type(e).__name__, "evalue": str(e), "traceback": text})
    finally:
        _in_cell = False
        try:
            sys.stdout.flush()
        except Exception:
            pass
        with _out_lock:
            _drain_all()
            cell = _cell
            cell.finish()
            _cell = None
        send({"type": "done", "id": msg.get("id"), "status": status,
              "output_chars": cell.total, "cut_chars": cell.cut})


def _drain_after_child_waits():
    """A child's output sits in the fd 1/2 pipes until the pump thread wakes; once the cell
    has waited for the child, pull it in before the cell's next print, so the cell's output
    keeps the order in which things happened. Wrapping the waits costs prints nothing
    (draining inside every print would cost two system calls each)."""

    def draining(wait):
        def wrapped(*args, **kwargs):
            try:
                return wait(*args, **kwargs)
            finally:
                try:
                    _drain_all_locked()
                except Exception:
                    pass

        wrapped.__name__ = wait.__name__
        wrapped.__doc__ = wait.__doc__
        return wrapped

    # subprocess's wait()/run()/communicate() look os.waitpid up at call time.
    for name in ("system", "waitpid", "wait", "wait3", "wait4", "waitid"):
        real = getattr(os, name, None)
        if real is not None:
            setattr(os, name, draining(real))


def main():
    global _limits
    global _fault_log
    sys.argv = [""]
    for fd in (CMD_FD, MSG_FD, OUT_FD, ERR_FD, LOG_FD):
        # The kernel's own subprocesses must never hold the channel open.
        os.set_inheritable(fd, False)
    import faulthandler
    _fault_log = open(LOG_FD, "w", closefd=False)
    faulthandler.enable(file=_fault_log)
    os.set_blocking(OUT_FD, False)
    os.set_blocking(ERR_FD, False)
    sys.stdout = CellStream("stdout", 1)
    sys.stderr = CellStream("stderr", 2)
    signal.signal(signal.SIGINT, _on_sigint)
    os.environ.setdefault("MPLBACKEND", "Agg")
    import warnings
    warnings.filterwarnings("ignore", message=".*non-interactive.*")
    warnings.filterwarnings("ignore", message=".*cannot be shown.*")
    builtins.display = display
    builtins.tool = tool
    builtins.ToolError = ToolError
    builtins.ToolResult = ToolResult
    builtins.input = _no_input
    builtins.__kernel__ = _Magics()
    _real_exit = os._exit

    def _exit_flushing(code):
        # os._exit skips every cleanup: send what the cell printed so far first.
        try:
            with _out_lock:
                _drain_all()
                if _cell is not None:
                    _cell.finish()
        except BaseException:
            pass
        _real_exit(code)

    os._exit = _exit_flushing
    _drain_after_child_waits()
    sys.modules["__main__"].__dict__.setdefault("__builtins__", builtins)
    threading.Thread(target=_pump, name="eval-output-pump", daemon=True).start()
    send({"type": "ready", "language": "python", "version": sys.version.split()[0],
          "executable": sys.executable, "pid": os.getpid()})
    while True:
        try:
            msg = _reader.read()
            if msg is None:
                break
            kind = msg.get("type")
            if kind == "execute":
                run_cell(msg)
            elif kind == "shutdown":
                break
        except KeyboardInterrupt:
            continue
    os._exit(0)


main()
