"""Runs a notebook's steps through ipykernel with jupyter_client and prints, as one JSON
line, what each code step produced as a notebook records it: the streams' text, each
display_data / execute_result (MIME types, text/plain, SHA-256 of text/html) and the error
its execute reply records.

argv[1]: a JSON file with the steps, each {"code": ...} or {"write": path, "content": ...}
(a file rewritten between cells, as an agent's edit would); the kernel runs in the current
directory."""

import hashlib
import json
import sys

from jupyter_client.manager import start_new_kernel


def run(kc, code):
    msg_id = kc.execute(code)
    streams, outputs, error = {}, [], None
    while True:
        msg = kc.get_iopub_msg(timeout=120)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            streams[content["name"]] = streams.get(content["name"], "") + content["text"]
        elif kind in ("display_data", "execute_result"):
            data = content["data"]
            html = data.get("text/html")
            outputs.append({
                "output_type": kind,
                "mime_types": sorted(data),
                "text": data.get("text/plain"),
                "html_sha256": hashlib.sha256(html.encode()).hexdigest() if html is not None else None,
            })
        elif kind == "status" and content["execution_state"] == "idle":
            break
    while True:
        reply = kc.get_shell_msg(timeout=120)
        if reply["parent_header"].get("msg_id") == msg_id:
            reply = reply["content"]
            break
    # The reply records every error, a UsageError of a magic too (which has no error message).
    if reply["status"] == "error":
        error = {"ename": reply["ename"], "evalue": reply["evalue"]}
    return {"streams": streams, "outputs": outputs, "error": error}


def main():
    steps = json.load(open(sys.argv[1]))
    km, kc = start_new_kernel(kernel_name="python3")
    try:
        results = []
        for step in steps:
            if "write" in step:
                with open(step["write"], "w") as f:
                    f.write(step["content"])
                results.append(None)
            else:
                results.append(run(kc, step["code"]))
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    print(json.dumps(results))


main()
