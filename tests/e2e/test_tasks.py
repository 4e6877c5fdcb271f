"""Long calls as tasks of the MCP tasks extension (`io.modelcontextprotocol/tasks`), through
the binary over stdio. The official SDK's client does not speak the extension, so these tests
speak JSON-RPC themselves: a client that declares the extension gets a task id for `eval`,
polls `tasks/get` to the result, and cancels a looping cell with `tasks/cancel`; a client that
does not declare it, and a quick tool, get the ordinary answer.
"""

import json
import subprocess
import time

from conftest import agent_tools_bin

TASKS = "io.modelcontextprotocol/tasks"
DESC = "compute a small value for the task test"


class RawClient:
    """A JSON-RPC client on one `agent-tools mcp` process (newline-delimited messages)."""

    def __init__(self, root, extensions):
        self.proc = subprocess.Popen(
            [agent_tools_bin(), "mcp", "--root", str(root)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        self.next_id = 0
        caps = {"extensions": extensions} if extensions else {}
        init = self.request(
            "initialize",
            {
                "protocolVersion": "2025-11-25",
                "capabilities": caps,
                "clientInfo": {"name": "task-test", "version": "0"},
            },
        )
        self.server_caps = init["result"]["capabilities"]
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, msg):
        self.proc.stdin.write(json.dumps(msg) + "\n")
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        rid = self.next_id
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            assert line, f"the server closed its output while {method} was pending"
            msg = json.loads(line)
            if msg.get("id") == rid and "method" not in msg:
                return msg

    def call(self, tool, args):
        return self.request("tools/call", {"name": tool, "arguments": args})

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
        assert TASKS in c.server_caps.get("extensions", {}), c.server_caps
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
