"""agent-tools for Python harnesses.

    from agent_tools import Toolbox
    with Toolbox("path/to/project", surface="full") as tb:
        print([t["name"] for t in tb.tools()])
        result = tb.call("read", {"path": "README.md"})
        print(result.text)

`Toolbox(root, surface="full", config=None, approver=None)` opens one run. `config` is the
path of an `agent-tools.toml` (default: the one at the root, if any). `approver`, if given, is
a callable `approver(tool, tier, args) -> bool` asked before every write or exec call.
`call` returns a `ToolResult` (`text`, `structured`, `images` as PNG bytes, `is_error`,
`error_kind`); an unknown tool raises `KeyError`. Calls release the GIL while the tools work.
"""

from ._agent_tools import Toolbox, ToolResult

__all__ = ["Toolbox", "ToolResult"]
