"""`agent-tools serve --status`: the operator's page driven in a real headless Chromium
(Debian's `chromium` and `chromium-driver`, through Selenium) against a real server with two
sessions (one running `eval` cells that sleep, one idle) and a pooled pyright. The page lists
both sessions and the server with its memory; a running call appears and disappears when it
ends; a failed call shows its error's first line; cancelling the running call from the page
stops it. Without the credential the page answers 401, from a foreign origin 403, and
neither the page nor its JSON shows the token, an environment value or a file's contents.
A pooled server killed under the sessions shows its crash and its restart.
Screenshots go to pytest's temporary directory."""

import os
import re
import shutil
import signal

import anyio
import httpx2
import pytest

from conftest import text
from serve_support import DESC, client, serve, workspace

pytestmark = pytest.mark.anyio

TOKEN = "status-page-token-5f1e2d3c4b5a"
ENV_SECRET = "env-secret-value-9a8b7c6d5e"
FILE_SECRET = "file-secret-contents-1357-2468"
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"


def need(path):
    if not os.path.exists(path):
        if os.environ.get("CI") == "true":
            pytest.fail(f"{path} is missing")
        pytest.skip(f"{path} is missing")


def browser(profile, scripting=True):
    """A headless Chromium whose every request to the server carries the bearer token (as
    a header-adding proxy or extension would for an operator), with a fresh profile in
    `profile`."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (
        "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        "--window-size=1400,1000", f"--user-data-dir={profile}",
    ):
        options.add_argument(flag)
    if not scripting:
        options.add_experimental_option("prefs", {"profile.managed_default_content_settings.javascript": 2})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.execute_cdp_cmd("Network.enable", {})
    driver.execute_cdp_cmd("Network.setExtraHTTPHeaders", {"headers": {"Authorization": f"Bearer {TOKEN}"}})
    return driver


def rows(driver, table):
    """The cells of each body row of a table, as text (read again when the page's script
    replaced the rows while they were read)."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.common.by import By

    while True:
        try:
            return [
                [td.text for td in tr.find_elements(By.TAG_NAME, "td")]
                for tr in driver.find_elements(By.CSS_SELECTOR, f"#{table} tbody tr")
            ]
        except StaleElementReferenceException:
            continue


def running_calls(driver):
    """The rows of the running calls' table, none when it says no call is running."""
    return [r for r in rows(driver, "running") if r != ["no call is running"]]


def wait_for(driver, what, check, timeout=30):
    """Waits (in the browser's own time: the page refreshes itself) until `check(driver)`."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout, poll_frequency=0.2).until(check, message=what)


async def in_thread(fn, *args):
    return await anyio.to_thread.run_sync(fn, *args)


async def test_the_status_page_shows_sessions_servers_and_calls_live_in_a_browser(tmp_path, monkeypatch):
    need(CHROMIUM)
    need(CHROMEDRIVER)
    if shutil.which("pyright-langserver") is None:
        if os.environ.get("CI") == "true":
            pytest.fail("pyright-langserver is not on PATH")
        pytest.skip("pyright-langserver is not on PATH")
    (tmp_path / "ws").mkdir()
    root = workspace(tmp_path / "ws")
    (root / "pyproject.toml").write_text('[project]\nname = "w"\nversion = "0"\n')
    (root / "lib" / "area.py").write_text('def area(r: float) -> float:\n    """Disc area."""\n    return 3.14 * r * r\n')
    (root / "notes.txt").write_text(FILE_SECRET + "\n")
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    shots = tmp_path / "screenshots"
    shots.mkdir()
    monkeypatch.setenv("AGENT_TOOLS_E2E_SECRET", ENV_SECRET)
    with serve("--root", str(root), "--status", "--metrics-public", "--token-file", str(token_file)) as srv:
        async with httpx2.AsyncClient(timeout=10) as http:
            refused = await http.get(srv.url("/status"))
            assert refused.status_code == 401, refused.text
            refused = await http.get(srv.url("/status.json"))
            assert refused.status_code == 401, refused.text
            foreign = await http.get(
                srv.url("/status"), headers={"Authorization": f"Bearer {TOKEN}", "Origin": "http://evil.example"}
            )
            assert foreign.status_code == 403, foreign.text
            foreign = await http.post(
                srv.url("/status/calls/1/cancel"),
                headers={"Authorization": f"Bearer {TOKEN}", "Origin": "http://evil.example"},
            )
            assert foreign.status_code == 403, foreign.text

        async with client(srv.url(), token=TOKEN) as busy, client(srv.url(), token=TOKEN) as idle:
            r = await idle.call_tool("lsp", {"action": "hover", "file": "lib/area.py", "line": 1, "symbol": "area"})
            assert "Disc area" in text(r), text(r)
            r = await idle.call_tool("read", {"path": "notes.txt"})
            assert FILE_SECRET in text(r), text(r)
            code = f"import os\nprint(os.environ.get('AGENT_TOOLS_E2E_SECRET'), {TOKEN!r})"
            r = await busy.call_tool("eval", {"code": code, "description": DESC})
            assert not r.is_error, text(r)
            r = await busy.call_tool("read", {"path": "lib/missing.py"})
            assert r.is_error and text(r) == "invalid arguments (`path`): `lib/missing.py` does not exist", text(r)

            driver = await in_thread(browser, tmp_path / "chromium-live")
            try:
                await in_thread(driver.get, srv.url("/status"))
                sessions = await in_thread(
                    wait_for, driver, "both sessions listed", lambda d: len(rows(d, "sessions")) == 2 and rows(d, "sessions")
                )
                ids = [s[0] for s in sessions]
                for s in sessions:
                    assert re.fullmatch(r"[0-9a-f-]{8}", s[0]), s
                    assert s[1:5] == ["mcp 0.1.0", "2025-11-25", str(root), "untrusted"], s
                assert [s[8] for s in sessions] == ["2", "2"], sessions
                live = driver.find_element("id", "live").text
                assert live.startswith("(live, "), live
                server = await in_thread(
                    wait_for, driver, "pyright listed", lambda d: (r := rows(d, "servers")) and r[0][0] and r
                )
                assert len(server) == 1, server
                workspace_cell, name, trust, pid, memory, users, state = server[0][:7]
                assert (workspace_cell, name, trust) == (str(root), "pyright-langserver (python)", "untrusted"), server
                assert int(pid) > 1 and re.fullmatch(r"[1-9]\d* MiB", memory), server
                assert users in ids, (users, ids)
                assert state in ("loading", "indexing", "ready"), server
                failed = [r for r in rows(driver, "recent") if r[0] == "read" and r[3] == "error"]
                assert [r[4] for r in failed] == ["invalid arguments (`path`): `lib/missing.py` does not exist"], failed
                await in_thread(driver.save_screenshot, str(shots / "1-sessions-and-servers.png"))

                # A call that ends by itself appears while it runs and is gone after.
                async with anyio.create_task_group() as tg:
                    async def nap():
                        r = await busy.call_tool("eval", {"code": "import time\ntime.sleep(4)", "description": DESC})
                        assert not r.is_error, text(r)

                    tg.start_soon(nap)
                    running = await in_thread(
                        wait_for, driver, "the call shows as running", lambda d: (r := running_calls(d)) and r[0][1] == "eval" and r
                    )
                    assert running[0][2] in ids and re.fullmatch(r"\d+\.\d s", running[0][3]), running
                    await in_thread(driver.save_screenshot, str(shots / "2-running.png"))
                await in_thread(
                    wait_for, driver, "the ended call is gone", lambda d: rows(d, "running") == [["no call is running"]]
                )

                # A call cancelled from the page stops.
                async with anyio.create_task_group() as tg:
                    outcome = {}

                    async def long_nap():
                        with anyio.fail_after(20):
                            r = await busy.call_tool("eval", {"code": "import time\ntime.sleep(60)", "description": DESC})
                        outcome["error"], outcome["text"] = r.is_error, text(r)

                    tg.start_soon(long_nap)
                    await in_thread(
                        wait_for, driver, "the long call shows", lambda d: (r := running_calls(d)) and r[0][1] == "eval"
                    )
                    await in_thread(driver.save_screenshot, str(shots / "3-before-cancel.png"))
                    button = driver.find_element("css selector", "#running button[data-call]")
                    await in_thread(button.click)
                    await in_thread(
                        wait_for, driver, "the cancelled call is gone", lambda d: rows(d, "running") == [["no call is running"]]
                    )
                assert outcome["error"], outcome
                assert outcome["text"] == "rejected: the server's operator cancelled the call from its status page", outcome
                await in_thread(driver.save_screenshot, str(shots / "4-after-cancel.png"))

                # A shared server that crashed shows its crash and its restart.
                os.kill(int(pid), signal.SIGKILL)
                hover = {"action": "hover", "file": "lib/area.py", "line": 1, "symbol": "area"}
                r = await idle.call_tool("lsp", hover)
                if r.is_error:
                    # The call that meets the dead server says so; the next one restarts it.
                    assert text(r).endswith("the next call restarts it"), text(r)
                    r = await idle.call_tool("lsp", hover)
                assert "Disc area" in text(r), text(r)
                restarted = await in_thread(
                    wait_for, driver, "the restart shows", lambda d: (r := rows(d, "servers")) and r[0][9] != "-" and r[0]
                )
                new_pid = restarted[3]
                assert new_pid != pid and restarted[7:9] == ["1", "pyright-langserver exited (signal: 9 (SIGKILL))"], restarted
                assert re.fullmatch(
                    rf"\d+s ago: the python server \(pyright-langserver\) for root \., shared by 1 session\(s\), exited "
                    rf"\(pid {pid}\) and was restarted once for all of them \(pid {new_pid}\); open files were sent to it again",
                    restarted[9],
                ), restarted
                await in_thread(driver.save_screenshot, str(shots / "4b-restarted.png"))
                await in_thread(driver.get, srv.url("/status?order=slowest"))
                slowest = await in_thread(wait_for, driver, "recent calls", lambda d: rows(d, "recent"))
                assert slowest[0][0] == "eval" and slowest[0][2].endswith(" s"), slowest
                page = driver.page_source
            finally:
                await in_thread(driver.quit)

            # Without scripting the page is a plain table of the same facts.
            plain = await in_thread(browser, tmp_path / "chromium-plain", False)
            try:
                await in_thread(plain.get, srv.url("/status"))
                assert plain.find_element("id", "live").text == "(reload to refresh)"
                assert sorted(r[0] for r in rows(plain, "sessions")) == sorted(ids)
                await in_thread(plain.save_screenshot, str(shots / "5-without-scripting.png"))
            finally:
                await in_thread(plain.quit)

            async with httpx2.AsyncClient(timeout=10) as http:
                as_json = (await http.get(srv.url("/status.json"), headers={"Authorization": f"Bearer {TOKEN}"})).text
            for secret in (TOKEN, ENV_SECRET, FILE_SECRET):
                assert secret not in page, secret
                assert secret not in as_json, secret
    assert sorted(p.name for p in shots.iterdir()) == [
        "1-sessions-and-servers.png", "2-running.png", "3-before-cancel.png", "4-after-cancel.png", "4b-restarted.png",
        "5-without-scripting.png",
    ]
