"""Long calls as tasks of the MCP tasks extension (`io.modelcontextprotocol/tasks`), through
the binary over stdio. The official SDK's client does not speak the extension, so these tests
speak JSON-RPC themselves: a 2026-07-28 client that declares the extension gets a task id for
`eval`, polls `tasks/get` to the result, and cancels a looping cell with `tasks/cancel`; a
2025-11-25 client that lists the extension (a protocol whose results have no task shape), a
client that does not declare it, and a quick tool get the call's own answer.
"""

import json
import subprocess
import time

from conftest import agent_tools_bin

TASKS = "io.modelcontextprotocol/tasks"
NEWEST = "2026-07-28"
DESC = "compute a small value for the task test"


class RawClient:
    """A JSON-RPC client on one `agent-tools mcp` process (newline-delimited messages). On
    2025-11-25 it shakes hands with `initialize`; on 2026-07-28 every request carries the
    protocol version and the client's capabilities in its `_meta`, as that protocol asks."""

    def __init__(self, root, extensions, version=NEWEST):
        self.proc = subprocess.Popen(
            [agent_tools_bin(), "mcp", "--no-daemon", "--root", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.next_id = 0
        self.version = version
        self.caps = {"extensions": extensions} if extensions else {}
        self.notifications = []
        if version < NEWEST:
            init = self.request(
                "initialize",
                {
                    "protocolVersion": version,
                    "capabilities": self.caps,
                    "clientInfo": {"name": "task-test", "version": "0"},
                },
            )
            assert init["result"]["protocolVersion"] == version, init
            self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        rid = self.next_id
        if self.version >= NEWEST:
            params = dict(params)
            params["_meta"] = {
                **params.get("_meta", {}),
                "io.modelcontextprotocol/protocolVersion": self.version,
                "io.modelcontextprotocol/clientCapabilities": self.caps,
                "io.modelcontextprotocol/clientInfo": {"name": "task-test", "version": "0"},
            }
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            assert line, f"the server closed its output while {method} was pending"
            msg = json.loads(line)
            if msg.get("id") == rid and "method" not in msg:
                return msg
            if "method" in msg and "id" not in msg:
                self.notifications.append(msg)

    def call(self, tool, args, meta=None):
        params = {"name": tool, "arguments": args}
        if meta:
            params["_meta"] = meta
        return self.request("tools/call", params)

    def poll(self, task_id, until, timeout=120):
        deadline = time.time() + timeout
        while time.time() < deadline:
            got = self.request("tasks/get", {"taskId": task_id})
            assert "result" in got, got
            if got["result"]["status"] in until:
                return got["result"]
            time.sleep(0.2)
        raise AssertionError(f"task {task_id} never reached {until}")

    def close(self):
        self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def result_text(result):
    return "\n".join(c.get("text", "") for c in result.get("content", []))


def test_eval_runs_as_a_task_polled_to_its_result(tmp_path):
    c = RawClient(tmp_path, {TASKS: {}})
    try:
        started = c.call("eval", {"code": "import time\ntime.sleep(1)\nx = 6\nx * 7", "description": DESC})
        r = started["result"]
        assert r["resultType"] == "task", r
        assert r["status"] == "working" and r["pollIntervalMs"] > 0, r
        done = c.poll(r["taskId"], {"completed", "failed", "cancelled"})
        assert done["status"] == "completed", done
        assert "42" in result_text(done["result"]), done
        assert done["statusMessage"] == "finished", done
        # The kernel is the run's: a later task sees the earlier cell's state.
        again = c.call("eval", {"code": "x + 1", "description": DESC})["result"]
        assert "7" in result_text(c.poll(again["taskId"], {"completed"})["result"])
        # A quick tool answers at once, as always.
        (tmp_path / "a.txt").write_text("hello\n")
        plain = c.call("read", {"path": "a.txt"})["result"]
        assert plain.get("resultType", "complete") != "task" and "hello" in result_text(plain), plain
    finally:
        c.close()


def test_tasks_cancel_stops_a_looping_cell_and_the_kernel_goes_on(tmp_path):
    c = RawClient(tmp_path, {TASKS: {}})
    try:
        r = c.call("eval", {"code": "n = 0\nwhile True:\n    n += 1", "description": DESC})["result"]
        assert r["resultType"] == "task", r
        time.sleep(1)
        assert c.poll(r["taskId"], {"working"})["status"] == "working"
        cancelled = c.request("tasks/cancel", {"taskId": r["taskId"]})
        assert "result" in cancelled, cancelled
        end = c.poll(r["taskId"], {"cancelled", "completed", "failed"})
        assert end["status"] == "cancelled", end
        after = c.call("eval", {"code": "n > 0", "description": DESC})["result"]
        assert "True" in result_text(c.poll(after["taskId"], {"completed"})["result"])
        unknown = c.request("tasks/get", {"taskId": "no-such-task"})
        assert "error" in unknown, unknown
    finally:
        c.close()


def test_a_client_without_the_extension_gets_the_ordinary_answer(tmp_path):
    c = RawClient(tmp_path, None)
    try:
        r = c.call("eval", {"code": "6 * 7", "description": DESC})["result"]
        assert r.get("resultType", "complete") != "task", r
        assert "42" in result_text(r), r
        refused = c.request("tasks/get", {"taskId": "anything"})
        assert "error" in refused, refused
    finally:
        c.close()


def test_a_2025_11_25_client_listing_the_extension_gets_the_cells_output_directly(tmp_path):
    # Tasks as results exist from 2026-07-28; a 2025-11-25 client (the Inspector's default)
    # that lists the extension would be handed a task it never polls. It gets the output,
    # with progress notifications while the cell runs.
    (tmp_path / "agent-tools.toml").write_text("[eval]\nprogress_interval_secs = 0.2\n")
    c = RawClient(tmp_path, {TASKS: {}}, version="2025-11-25")
    try:
        r = c.call(
            "eval",
            {"code": "import time\ntime.sleep(1.5)\n6 * 7", "description": DESC},
            meta={"progressToken": "cell-1"},
        )["result"]
        assert "resultType" not in r and "taskId" not in r, r
        assert r["content"] == [{"type": "text", "text": "42"}], r
        assert r["isError"] is False, r
        progress = [n["params"] for n in c.notifications if n["method"] == "notifications/progress"]
        assert progress and all(p["progressToken"] == "cell-1" for p in progress), c.notifications
        assert all(p["message"].startswith("python cell running for ") for p in progress), progress
        # No task was made: tasks/get knows none (the extension is the client's, but the
        # call was answered in place).
        unknown = c.request("tasks/get", {"taskId": "no-such-task"})
        assert "error" in unknown, unknown
    finally:
        c.close()


def test_a_task_id_of_another_session_is_refused_and_the_task_goes_on(tmp_path):
    owner = RawClient(tmp_path, {TASKS: {}})
    other = RawClient(tmp_path, {TASKS: {}})
    try:
        r = owner.call("eval", {"code": "import time\ntime.sleep(1)\n6 * 7", "description": DESC})["result"]
        task = r["taskId"]
        for method in ("tasks/get", "tasks/cancel"):
            refused = other.request(method, {"taskId": task})
            assert "result" not in refused, refused
            assert refused["error"]["code"] == -32602 and task in refused["error"]["message"], refused
        # Neither the look nor the cancel reached it: it finishes for its own session.
        done = owner.poll(task, {"completed", "failed", "cancelled"})
        assert done["status"] == "completed" and result_text(done["result"]) == "42", done
    finally:
        owner.close()
        other.close()
