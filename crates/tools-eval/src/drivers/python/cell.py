# Part 7 of the Python kernel: running one cell (its last expression displayed, tracebacks
# trimmed to the user's frames) and keeping the order of a child's output.

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


def _shell_event(stage, code, result=None):
    """Tells IPython's event listeners (autoreload's among them) that a cell starts or
    ended, as IPython's own run_cell would; nothing before the shell exists."""
    shell = _ipy_shell
    if shell is None:
        return None
    try:
        from IPython.core.interactiveshell import ExecutionInfo, ExecutionResult
        if stage == "pre":
            info = ExecutionInfo(code, False, False, True, None)
            shell.events.trigger("pre_execute")
            shell.events.trigger("pre_run_cell", info)
            return info
        res = ExecutionResult(result)
        shell.events.trigger("post_execute")
        shell.events.trigger("post_run_cell", res)
    except Exception as e:
        log("an IPython event hook failed: %r" % (e,))
    return None


def _usage_error(exc):
    """IPython's UsageError (a bad magic or its arguments) is shown as one line, as a
    notebook shows it."""
    return type(exc).__name__ == "UsageError" and type(exc).__module__.startswith("IPython")


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
    info = None
    try:
        try:
            if msg.get("ipython"):
                plain = _ipython_transform(code)
                if plain is None:
                    raise RuntimeError(
                        "IPython is importable in this interpreter but could not start (%s), so this "
                        "cell's magics cannot run; `reset: true` starts a fresh kernel" % (_ipy_error,))
                code = plain
            info = _shell_event("pre", msg["code"])
            tree = ast.parse(code, _cell_filename, "exec")
            last = None
            if tree.body and isinstance(tree.body[-1], ast.Expr) and not code.rstrip().endswith(";"):
                last = ast.Expression(tree.body.pop().value)
            flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
            _run(compile(tree, _cell_filename, "exec", flags=flags), ns)
            if last is not None:
                value = _run(compile(last, _cell_filename, "eval", flags=flags), ns)
                if value is not None:
                    # The value first, then the figures the cell drew, as a notebook shows them.
                    ns["_"] = value
                    data = render(value)
                    with _out_lock:
                        _cell.flush()
                    send({"type": "result", "data": data})
            _flush_figures()
        except BaseException as e:
            status = "interrupted" if isinstance(e, KeyboardInterrupt) else "error"
            try:
                if _usage_error(e):
                    text = "UsageError: %s\n" % (e,)
                elif isinstance(e, SyntaxError):
                    text = "".join(traceback.format_exception_only(type(e), e))
                else:
                    text = _trimmed(e)
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
        if info is not None:
            _shell_event("post", None, info)
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
