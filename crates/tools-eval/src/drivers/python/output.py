# Part 2 of the Python kernel (after channel.py): what a cell prints. sys.stdout/sys.stderr
# feed the running cell, a pump thread reads back what reaches fds 1/2 directly, and each
# cell's output is bounded here (head forwarded as it comes, a rolling tail kept).

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


if _WINDOWS:
    import ctypes
    import msvcrt
    from ctypes import wintypes

    _peek = ctypes.windll.kernel32.PeekNamedPipe
    _peek.argtypes = [wintypes.HANDLE, ctypes.c_void_p, wintypes.DWORD, ctypes.c_void_p,
                      ctypes.POINTER(wintypes.DWORD), ctypes.c_void_p]
    _peek.restype = wintypes.BOOL

    def _read_now(fd):
        """What the pipe holds now (b"" once its writers are gone), None when it is empty:
        Windows pipes cannot be non-blocking, so the pipe is asked how much it holds."""
        held = wintypes.DWORD(0)
        if not _peek(msvcrt.get_osfhandle(fd), None, 0, None, ctypes.byref(held), None):
            return b""
        return os.read(fd, min(held.value, 1 << 16)) if held.value else None
else:
    def _read_now(fd):
        """What the non-blocking pipe holds now (b"" once its writers are gone), None when
        it is empty."""
        try:
            return os.read(fd, 1 << 16)
        except BlockingIOError:
            return None


def _drain(fd, name):
    import codecs
    dec = _decoders.get(fd)
    if dec is None:
        dec = _decoders[fd] = codecs.getincrementaldecoder("utf-8")("replace")
    while True:
        try:
            chunk = _read_now(fd)
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


def _interrupts():
    """Windows: each byte on the interrupts pipe is an interrupt, delivered as a Ctrl-C
    would be (through the SIGINT handler, which defers it while a frame is in flight)."""
    import _thread
    while True:
        try:
            if not os.read(INT_FD, 1):
                return
        except OSError:
            return
        _thread.interrupt_main()


def _pump():
    while True:
        try:
            if _WINDOWS:
                # select() takes only sockets on Windows: look every 50 ms.
                time.sleep(0.05)
                ready = (OUT_FD, ERR_FD)
            else:
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
