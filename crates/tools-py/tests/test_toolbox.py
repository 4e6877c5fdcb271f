"""The Python bindings against real files (and, as families arrive, real servers)."""

import os
import threading

import pytest

from agent_tools import Toolbox


def test_tools_surfaces_and_a_write_round_trip(tmp_path):
    with Toolbox(str(tmp_path)) as tb:
        names = {t["name"]: t for t in tb.tools()}
        assert names["read"]["tier"] == "read" and names["write"]["tier"] == "write"
        assert names["write"]["input_schema"]["type"] == "object"
        r = tb.call("write", {"path": "a.txt", "content": "hello\n"})
        assert not r.is_error and "Created a.txt" in r.text
        assert r.structured["created"] is True
        r = tb.call("read", {"path": "a.txt"})
        assert r.text == "     1\thello\n" and r.images == []
        r = tb.call("read", {"path": "../escape"})
        assert r.is_error and r.error_kind == "invalid_arguments" and "outside the workspace" in r.text
        with pytest.raises(KeyError):
            tb.call("no_such_tool", {})
    with Toolbox(str(tmp_path), surface="plan") as plan:
        assert "write" not in {t["name"] for t in plan.tools()}
        with pytest.raises(KeyError):
            plan.call("write", {"path": "b.txt", "content": "x"})
    assert not (tmp_path / "b.txt").exists()


def test_a_python_approver_gates_writes(tmp_path):
    asked = []

    def approver(tool, tier, args):
        asked.append((tool, tier, args["path"]))
        return args["path"] != "denied.txt"

    with Toolbox(str(tmp_path), approver=approver) as tb:
        assert not tb.call("write", {"path": "ok.txt", "content": "1"}).is_error
        r = tb.call("write", {"path": "denied.txt", "content": "2"})
        assert r.is_error and r.error_kind == "rejected" and "declined" in r.text
        tb.call("read", {"path": "ok.txt"})  # read tools never ask
    assert asked == [("write", "write", "ok.txt"), ("write", "write", "denied.txt")]
    assert (tmp_path / "ok.txt").exists() and not (tmp_path / "denied.txt").exists()

    def raising(tool, tier, args):
        raise RuntimeError("boom")

    with Toolbox(str(tmp_path), approver=raising) as tb:
        r = tb.call("write", {"path": "x.txt", "content": "3"})
        assert r.is_error and "boom" in r.text
    assert not (tmp_path / "x.txt").exists()


def test_calls_release_the_gil_and_closed_toolboxes_refuse(tmp_path):
    tb = Toolbox(str(tmp_path))
    results = []
    threads = [
        threading.Thread(target=lambda i=i: results.append(tb.call("write", {"path": f"f{i}.txt", "content": "x"})))
        for i in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(results) == 8 and not any(r.is_error for r in results)
    tb.close()
    tb.close()
    with pytest.raises(RuntimeError, match="closed"):
        tb.call("read", {"path": "f0.txt"})
    with pytest.raises(ValueError, match="unknown surface"):
        Toolbox(str(tmp_path), surface="bogus")
    with pytest.raises(ValueError):
        Toolbox(str(tmp_path / "missing"))


def test_ast_grep_eval_and_diagnostics_on_write(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "agent-tools.toml").write_text('[lsp.servers.python]\ncommand = ["pyright-langserver", "--stdio"]\n')
    (tmp_path / "app.py").write_text("def close(x):\n    if x is None:\n        return 1\n    return x.dispose()\n")
    with Toolbox(str(tmp_path)) as tb:
        r = tb.call("ast_grep", {"pattern": "$X.dispose()", "path": "app.py"})
        assert not r.is_error, r.text
        assert "app.py:4:12" in r.text, r.text
        r = tb.call("eval", {"code": "x = 20\nx + 22", "description": "add two numbers in the kernel"})
        assert not r.is_error and "42" in r.text, r.text
        r = tb.call("eval", {"code": "x * 2", "description": "state survives between the cells"})
        assert "40" in r.text, r.text
        r = tb.call("write", {"path": "broken.py", "content": "print(nowhere_defined)\n"})
        assert not r.is_error, r.text
        assert "## diagnostics" in r.text and "nowhere_defined" in r.text, r.text


def test_a_python_question_gate_answers_ask_user(tmp_path):
    cards = []

    def gate(card):
        cards.append(card)
        if card["question"].startswith("Skip"):
            return None
        return {"selected": [card["options"][1]["label"]]}

    with Toolbox(str(tmp_path), question_gate=gate) as tb:
        assert "ask_user" in {t["name"] for t in tb.tools()}
        r = tb.call("ask_user", {"question": "Which database?", "options": [{"label": "sqlite"}, {"label": "postgres"}]})
        assert not r.is_error, r.text
        assert r.structured["selected"] == ["postgres"] and r.structured["card"] == 1
        r = tb.call("ask_user", {"question": "Skip this one?", "options": [{"label": "a"}, {"label": "b"}]})
        assert not r.is_error and r.structured["outcome"] == "skipped", r.text
        r = tb.call("ask_user", {"question": "", "options": []})
        assert r.is_error and r.error_kind == "invalid_arguments"
    assert [c["number"] for c in cards] == [1, 2]
    assert cards[0]["options"][0]["label"] == "sqlite"
    with Toolbox(str(tmp_path)) as tb:
        assert "ask_user" not in {t["name"] for t in tb.tools()}


def test_trust_is_the_users_call_not_the_repositorys(tmp_path):
    # The repository's file names an interpreter: ignored unless the caller trusts the root.
    (tmp_path / "agent-tools.toml").write_text('[eval]\npython = "tools/python"\n')

    def trust_line(tb):
        return next(e["detail"] for e in tb.doctor() if e["family"] == "trust")

    with Toolbox(str(tmp_path)) as tb:
        line = trust_line(tb)
        assert "untrusted workspace" in line and "eval.python" in line, line
    with Toolbox(str(tmp_path), trusted=True) as tb:
        assert trust_line(tb).startswith("trusted"), trust_line(tb)
