# Part 6 of the Python kernel: IPython, where the kernel's interpreter can import it. Values
# are then formatted by IPython's own display formatter and magics run through IPython's own
# machinery, so a cell shows what a notebook shows. The shell is made on first need (a value
# that is not a plain scalar, display(), a magic, get_ipython(), or an import of IPython by
# the cell), never at start-up: importing IPython costs about a quarter of a second.
#
# Kept from our own side, because IPython's versions assume a terminal or a notebook front
# end: `%pip` (drops the modules it changed, so the next import sees the new version),
# `%matplotlib` (figures are always returned as images), `!cmd` (its output streams through
# the kernel's fds in order), and `%%writefile`/`%%file` (the write goes through the run's
# `write` tool, so the workspace jail and write guards apply).

# Values whose repr is exactly what IPython's formatter shows: displayed without IPython.
_PLAIN_TYPES = (int, float, bool, str, bytes, complex)

_ipy_shell = None
# None: not tried yet; False: IPython is not importable here (or failed to start).
_ipy_ok = None
_ipy_making = False
# Why IPython could not start, for the cell that needed it.
_ipy_error = None


def _ipython_importable():
    global _ipy_ok
    if _ipy_ok is None:
        import importlib.util
        try:
            found = importlib.util.find_spec("IPython") is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            _ipy_ok = False
    return _ipy_ok is not False


def _shell():
    """IPython's InteractiveShell for this kernel, made on first call; None without IPython."""
    global _ipy_shell, _ipy_ok, _ipy_making, _ipy_error
    if _ipy_shell is not None or _ipy_making or not _ipython_importable():
        return _ipy_shell
    _ipy_making = True
    try:
        _ipy_shell = _make_shell()
        _ipy_ok = True
    except Exception as e:
        _ipy_ok = False
        _ipy_error = "%s: %s" % (type(e).__name__, e)
        log("IPython could not start, so the kernel's own display and magics stay: %r" % (e,))
    finally:
        _ipy_making = False
    return _ipy_shell


def _make_shell():
    import __main__
    from traitlets.config import Config
    from IPython.core.interactiveshell import InteractiveShell
    from IPython.core.displaypub import DisplayPublisher

    class _HostPublisher(DisplayPublisher):
        """display() and rich outputs go to the host as display messages."""

        def publish(self, data, metadata=None, source=None, *, transient=None, update=False, **kwargs):
            _send_display("display", data)

    config = Config()
    config.HistoryManager.enabled = False
    config.InteractiveShell.colors = "nocolor"
    ns = __main__.__dict__
    kept = {name: ns[name] for name in ("exit", "quit") if name in ns}
    shell = InteractiveShell.instance(config=config, user_module=__main__, user_ns=ns)
    shell.display_pub = _HostPublisher(shell=shell)
    # IPython's `exit` would only set a flag here; the cell's own exit() raises SystemExit.
    for name in ("exit", "quit"):
        ns.pop(name, None)
    ns.update(kept)
    # The shell puts its own display() in builtins: ours sends to the host the same way.
    builtins.display = display
    shell.system = _system
    magics = builtins.__kernel__
    shell.register_magic_function(lambda line: magics.pip(line), "line", "pip")
    shell.register_magic_function(lambda line: magics.matplotlib(line), "line", "matplotlib")

    def writefile(line, cell):
        magics.writefile(line, cell)

    for name in ("writefile", "file"):
        shell.register_magic_function(writefile, "cell", name)
    png = shell.display_formatter.formatters["image/png"]
    png.for_type_by_name("matplotlib.figure", "Figure", _figure_png)
    return shell


def _system(cmd):
    """`!cmd` with IPython: the kernel's own runner, which keeps the output's order."""
    import __main__
    builtins.__kernel__.sh(cmd)
    __main__.__dict__["_exit_code"] = builtins.__kernel__.last_exit_code


def _get_ipython():
    """get_ipython() in a cell: the kernel's IPython shell (made now), or None without IPython."""
    return _shell()


def _pandas_as_in_a_notebook(pandas):
    """pandas decides at import whether it runs in a terminal, by asking get_ipython() for a
    Jupyter kernel; a terminal gets as many columns as fit its width, a notebook (like this
    kernel, whose output is read, not shown on a console) the first and last ten of them."""
    try:
        if pandas.get_option("display.max_columns") == 0:
            pandas.set_option("display.max_columns", 20)
    except Exception as e:
        log("pandas display options left as they are: %r" % (e,))


def _after_ipython_import(module):
    if _ipy_shell is None and not _ipy_making:
        _shell()


# What runs right after a cell first imports one of these top-level packages.
_AFTER_IMPORT = {"IPython": _after_ipython_import, "pandas": _pandas_as_in_a_notebook}


class _IPythonImportWatch:
    """Makes the shell as soon as a cell imports IPython, so IPython.display.display and
    friends (which print a plain repr when no shell exists) show what a notebook shows; and
    sets pandas up as in a notebook."""

    def find_spec(self, name, path=None, target=None):
        after = _AFTER_IMPORT.get(name)
        if after is None or _ipy_making:
            return None
        import importlib.machinery
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _ThenRun(spec.loader, after)
        return spec


class _ThenRun:
    def __init__(self, loader, after):
        self.loader = loader
        self.after = after

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        self.after(module)

    def __getattr__(self, name):
        # The module keeps this as its __loader__: get_source, get_resource_reader, … are
        # the real loader's.
        return getattr(self.loader, name)

    def __getattr__(self, name):
        return getattr(self.loader, name)


def _bundle_strings(data):
    """A formatter's bundle as MIME type -> text (images as base64, JSON as its text)."""
    out = {}
    for mime, value in data.items():
        if isinstance(value, bytes):
            out[mime] = _b64(value) if mime.startswith("image/") else value.decode("utf-8", "replace")
        elif isinstance(value, str):
            out[mime] = value
        else:
            out[mime] = json.dumps(value, default=str)
    return out


def _ipython_render(obj):
    """The bundle IPython's display formatter gives `obj`, or None without IPython."""
    shell = _shell()
    if shell is None:
        return None
    data, _ = shell.display_formatter.format(obj)
    return _bundle_strings(data)


def _send_display(kind, data):
    data = _cap_plain(_bundle_strings(data))
    with _out_lock:
        if _cell is not None:
            _cell.flush()
    send({"type": kind, "data": data})


_MAGIC_LINE = None


def _has_magic_syntax(code):
    """Whether a line of the cell looks like IPython syntax (`%`, `!`, `x = !cmd`, `obj?`)."""
    global _MAGIC_LINE
    if _MAGIC_LINE is None:
        import re
        _MAGIC_LINE = re.compile(
            r"^\s*(?:[%!]|[\w.,\s]+=\s*[%!](?!=))|^\s*[\w.]+\?\??\s*$", re.MULTILINE)
    return _MAGIC_LINE.search(code) is not None


def _ipython_transform(code):
    """The cell with its IPython syntax turned into plain Python by IPython's own input
    transformers (`%x` becomes get_ipython().run_line_magic(...), ...), or None without IPython."""
    if not _has_magic_syntax(code):
        return code
    shell = _shell()
    if shell is None:
        return None
    return shell.transform_cell(code)
