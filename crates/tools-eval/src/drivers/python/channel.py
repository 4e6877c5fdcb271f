# The Python side of the eval kernel, part 1 of 8: the channel to the host.
#
# The kernel ships as one program run with `python -c`, so it cannot import modules of its
# own: the host joins the parts in order (channel, output, display, bridge, magics, ipython,
# cell, main) into one source, and each part uses what the parts before it define.
#
# On Unix the host starts `python -c BOOT DRIVER` with these file descriptors:
#   3  framed JSON commands from the host (execute, tool_result, shutdown)
#   4  framed JSON messages to the host (ready, stream, display, result, error, tool_call, done)
#   5  non-blocking read end of the pipe that is this process's fd 1
#   6  non-blocking read end of the pipe that is this process's fd 2
#   7  the kernel log (the host keeps its last lines for crash reports)
# On Windows it names three pipes in the environment instead (AGENT_TOOLS_CHANNEL_COMMANDS,
# _MESSAGES, _INTERRUPTS): the commands and messages as above, and one whose every byte is
# an interrupt (Windows has no SIGINT to send); the kernel makes its own pipes for fds 1
# and 2, and its log is its original stderr.
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

_WINDOWS = os.name == "nt"
_CHANNEL_NAMES = [os.environ.pop("AGENT_TOOLS_CHANNEL_" + part, None)
                  for part in ("COMMANDS", "MESSAGES", "INTERRUPTS")]


def _open_channel():
    """The channel's descriptors: inherited ones on Unix; on Windows the named pipes opened
    (the host checks that this process is the one that opened them), and fds 1 and 2 made
    pipes of our own, whose read ends we keep, with the original stderr kept as the log."""
    if not _CHANNEL_NAMES[0]:
        return 3, 4, 5, 6, 7, None
    binary = getattr(os, "O_BINARY", 0)
    cmd = os.open(_CHANNEL_NAMES[0], os.O_RDONLY | binary)
    msg = os.open(_CHANNEL_NAMES[1], os.O_WRONLY | binary)
    interrupts = os.open(_CHANNEL_NAMES[2], os.O_RDONLY | binary)
    log_fd = os.dup(2)
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    # dup2 onto 0-2 also makes them the process's standard handles, which the cell's
    # subprocesses inherit.
    os.dup2(out_w, 1)
    os.dup2(err_w, 2)
    os.close(out_w)
    os.close(err_w)
    return cmd, msg, out_r, err_r, log_fd, interrupts


CMD_FD, MSG_FD, OUT_FD, ERR_FD, LOG_FD, INT_FD = _open_channel()
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
