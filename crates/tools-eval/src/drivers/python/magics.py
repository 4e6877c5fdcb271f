# Part 5 of the Python kernel: what the host's magic rewriting turns `%pip`, `!cmd`,
# `%%bash`, `%time`, `%%writefile`, ... into when IPython is not importable (with IPython,
# `%pip`, `%matplotlib`, `!cmd` and `%%writefile` still come here), and the module
# bookkeeping %pip needs. Timings print in IPython's own format.

class _Magics:
    """What the host's magic rewriting turns `%pip`, `!cmd`, `%%bash`, … into."""

    last_exit_code = 0

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
            self.last_exit_code = proc.returncode
            return proc.stdout.decode("utf-8", "replace").splitlines()
        proc = subprocess.run(cmd, shell=True, stdin=subprocess.DEVNULL)
        self.last_exit_code = proc.returncode
        if proc.returncode != 0:
            _drain_all_locked()
            sys.stderr.write("(exit code %d)\n" % proc.returncode)
        return None

    def writefile(self, line, body):
        """`%%writefile [-a] PATH` / `%%file`: the write goes through the run's `write` tool
        (the workspace jail, write guards and approval apply, as for the model's own write)."""
        import shlex
        args = shlex.split(line)
        append = False
        while args and args[0] in ("-a", "--append"):
            append = True
            args.pop(0)
        if len(args) != 1:
            raise ValueError("%%%%writefile takes one file name (and -a to append), got %r" % (line,))
        name = os.path.expanduser(args[0])
        path = os.path.abspath(name)
        exists = os.path.exists(path)
        content = body
        if append and exists:
            with open(path, encoding="utf-8") as f:
                content = f.read() + body
        try:
            tool("write", {"path": path, "content": content})
        except ToolError as e:
            raise ToolError("%%%%writefile writes through the run's `write` tool: %s" % (e,), e.kind) from None
        if append:
            print("Appending to %s" % name)
        else:
            print("%s %s" % ("Overwriting" if exists else "Writing", name))

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
        t0, w0 = os.times(), time.perf_counter()
        try:
            value = eval(code, self._ns())
        finally:
            t1, w1 = os.times(), time.perf_counter()
            user, system = t1.user - t0.user, t1.system - t0.system
            print("CPU times: user %s, sys: %s, total: %s" % (
                _fmt_secs(user), _fmt_secs(system), _fmt_secs(user + system)))
            print("Wall time: %s" % _fmt_secs(w1 - w0))
        return value if mode == "eval" else None

    def timeit(self, src, setup="pass", number=None, repeat=None):
        import timeit as _timeit
        timer = _timeit.Timer(src, setup or "pass", globals=self._ns())
        if number is None:
            # As IPython picks it: the first power of ten whose run takes 0.2 s.
            number = 1
            for index in range(10):
                number = 10 ** index
                if timer.timeit(number) >= 0.2:
                    break
        repeat = repeat or 7
        per = [r / number for r in timer.repeat(repeat=repeat, number=number)]
        mean = sum(per) / len(per)
        std = (sum((p - mean) ** 2 for p in per) / len(per)) ** 0.5
        print("%s ± %s per loop (mean ± std. dev. of %d run%s, %s loop%s each)" % (
            _fmt_secs(mean), _fmt_secs(std), repeat, "" if repeat == 1 else "s",
            "{:,}".format(number), "" if number == 1 else "s"))

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
    """A duration as IPython's %time and %timeit print it (three significant digits, μs)."""
    import math
    if s >= 60.0:
        parts = []
        for suffix, length in (("d", 86400), ("h", 3600), ("min", 60), ("s", 1)):
            value = int(s / length)
            if value > 0:
                s = s % length
                parts.append("%s%s" % (value, suffix))
            if s < 1:
                break
        return " ".join(parts)
    units = ["s", "ms", "\u03bcs", "ns"]
    order = min(-int(math.floor(math.log10(s)) // 3), 3) if s > 0.0 else 3
    return "%.*g %s" % (3, s * [1, 1e3, 1e6, 1e9][order], units[order])


def _no_input(*args, **kwargs):
    raise RuntimeError("input() is not available in eval: no terminal is attached; put the values in the code")
