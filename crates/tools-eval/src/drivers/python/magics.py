# Part 5 of the Python kernel: what the host's magic rewriting turns `%pip`, `!cmd`,
# `%%bash`, `%time`, ... into, and the module bookkeeping %pip needs.

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
