# Part 3 of the Python kernel: how a value, display() and matplotlib figures become MIME
# bundles for the host (through IPython's formatter, part 6, where IPython is importable).

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


def _close_figure(obj):
    """A figure shown as a value or by display() is not shown again when the cell ends."""
    try:
        import matplotlib.pyplot as plt
        plt.close(obj)
    except Exception:
        pass


def _is_figure(obj):
    mod = type(obj).__module__ or ""
    return mod.startswith("matplotlib") and hasattr(obj, "savefig") and hasattr(obj, "get_size_inches")


def _cap_plain(data):
    """Holds a bundle's text to REPR_MAX characters: its head and tail, with the marker the
    host merges into its own cut."""
    text = data.get("text/plain")
    if text is not None and len(text) > REPR_MAX:
        keep = REPR_MAX // 2
        data["text/plain"] = "%s\n… [cut: %d characters of the value not shown] …\n%s" % (
            text[:keep], len(text) - 2 * keep, text[-keep:])
    return data


def render(obj):
    """The display data of one object: a dict of MIME type -> data. IPython's display
    formatter decides it where IPython is importable (plain scalars aside, whose repr is
    what it would show); the kernel's own rendering otherwise."""
    if type(obj) not in _PLAIN_TYPES:
        data = _ipython_render(obj)
        if data is not None:
            if _is_figure(obj):
                _close_figure(obj)
            return _cap_plain(data)
    if _is_figure(obj):
        data = {"image/png": _b64(_figure_png(obj)), "text/plain": repr(obj)}
        _close_figure(obj)
        return data
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
        data["text/plain"] = repr(obj)
    return _cap_plain(data)


def display(*objs, **kwargs):
    """Shows each object in the cell's output, as a notebook does (through IPython's own
    display() where IPython is importable, with its include/exclude/raw options)."""
    if _shell() is not None:
        from IPython.display import display as ipython_display
        for obj in objs:
            if _is_figure(obj):
                _close_figure(obj)
        return ipython_display(*objs, **kwargs)
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
        send({"type": "display", "data": {"image/png": _b64(png), "text/plain": repr(fig)}})
    plt.close("all")
