# Part 3 of the Python kernel: how a value, display() and matplotlib figures become MIME
# bundles for the host.

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
