# Part 4 of the Python kernel: tool(name, args), which calls the run's other tools over the
# kernel's own channel and waits for the host's answer.

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
