# Part 8 of the Python kernel, the last: installs the streams, the signal handler and the
# builtins, then serves the host's commands until it closes the channel.

def main():
    global _limits
    global _fault_log
    sys.argv = [""]
    for fd in (CMD_FD, MSG_FD, OUT_FD, ERR_FD, LOG_FD, INT_FD):
        # The kernel's own subprocesses must never hold the channel open.
        if fd is not None:
            os.set_inheritable(fd, False)
    import faulthandler
    _fault_log = open(LOG_FD, "w", closefd=False)
    faulthandler.enable(file=_fault_log)
    if not _WINDOWS:
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
    builtins.get_ipython = _get_ipython
    sys.meta_path.insert(0, _IPythonImportWatch())
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
    if INT_FD is not None:
        threading.Thread(target=_interrupts, name="eval-interrupts", daemon=True).start()
    send({"type": "ready", "language": "python", "version": sys.version.split()[0],
          "executable": sys.executable, "pid": os.getpid(),
          "ipython": _ipython_importable()})
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
