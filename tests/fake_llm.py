"""A scripted OpenAI-compatible server over real HTTP, for tests.

Each POST /v1/chat/completions takes the next step of the script. A step is a name:
  good            a SEARCH/REPLACE edit of the CUTOFF line found in the prompt (a valid, new kernel)
  rewrite         the whole sort.py in a fenced block, CUTOFF changed
  malformed       a block with a wrong opening marker
  noop            an edit that changes nothing
  break_build     an edit that makes sort.py a syntax error
  break_answer    an edit that returns the list reversed
  http429/http500 an error status (the client retries)
  hang            no answer until long after the client's timeout
  repair          puts back the colon that break_build removed (a fix that works)
  auto            for a crossover prompt (git could not merge two parents): CUTOFF set to the sum of the
                  two sides' values; for any other prompt: good
  real:<file>:<i> a real reply of a small model from tests/data
Requests and the steps they got are kept in `log`.

With `replay=FILE` (tests/data/qr_replies.json) every request is served from a file of proposals instead, as a
strong model would answer the real prompt: each new conversation takes the next proposal's first turn, and a
follow-up (a retry after a failed edit, the second turn after a SHOW) the next turn of the proposal it
continues. Standalone, for a run on a GPU machine: `python -m tests.fake_llm --replay FILE --port 8089`.
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.conftest import DATA


def _edit(path: str, search: str, replace: str, why: str) -> str:
    return f"{why}\n\n{path}\n```python\n<<<<<<< SEARCH\n{search}\n=======\n{replace}\n>>>>>>> REPLACE\n```\n"


def _source(messages: list[dict[str, str]]) -> str:
    user = next(m["content"] for m in messages if m["role"] == "user")
    match = re.search(r"```\n(.*?)\n```", user, re.S)
    return match.group(1) if match else ""


ATTACK = (Path(__file__).parent / "hostile_candidate.py").read_text().split("# --- the code ---\n", 1)[1].rstrip()


def reply_for(step: str, messages: list[dict[str, str]], counter: int) -> tuple[str, str]:
    """(content, finish_reason) of a scripted step."""
    source = _source(messages)
    cutoff = re.search(r"^CUTOFF = (\d+)", source, re.M)
    line = cutoff.group(0) if cutoff else "CUTOFF = 2"
    new_value = [3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 1][counter % 11]
    if new_value == int(cutoff.group(1) if cutoff else 2):
        new_value += 100
    new_line = f"CUTOFF = {new_value}"
    if step == "auto":
        user = next(m["content"] for m in messages if m["role"] == "user")
        theirs = re.findall(r"^\+CUTOFF = (\d+)", user, re.M)
        if "git could not merge" not in user or not cutoff or len(theirs) < 2:
            step = "good"
        else:
            mine, other = int(cutoff.group(1)), int(theirs[-1])
            return _edit("sort.py", line, f"CUTOFF = {mine + other}",
                         f"Keep both ideas: a cutoff of {mine} + {other}."), "stop"
    if step == "good":
        return _edit("sort.py", line, new_line, f"Use insertion sort below {new_value} elements."), "stop"
    if step == "rewrite":
        return f"Whole file:\n\nsort.py\n```python\n{source.replace(line, new_line)}\n```\n", "stop"
    if step == "malformed":
        return _edit("sort.py", line, new_line, "oops").replace("<<<<<<< SEARCH", ">>>>>>> SEARCH"), "stop"
    if step == "noop":
        return _edit("sort.py", line, line, "No change needed."), "stop"
    if step == "break_build":
        return _edit("sort.py", "def sort_list(values):", "def sort_list(values)", "Typo."), "stop"
    if step == "break_answer":
        return _edit("sort.py", "    return a\n", "    return a[::-1]\n", "Reverse.").replace(
            "    return a\n\n=======", "    _sort(a, 0, len(a), [None] * len(a))\n    return a\n=======").replace(
            "=======\n    return a[::-1]", "=======\n    _sort(a, 0, len(a), [None] * len(a))\n    return a[::-1]"), "stop"
    if step == "longname":  # a new file whose name no file system takes
        return _edit("n" * 300 + ".py", "", "X = 1", "A helper module."), "stop"
    if step == "nul":  # a NUL and a lone surrogate in the explanation, which becomes the commit message
        content, finish = reply_for("good", messages, counter)
        return "Faster\x00 and \ud800 better.\n\n" + content, finish
    if step == "attack":  # tests/test_hostile.py: import-time code that tries every door
        return _edit("sort.py", "def sort_list(values):", ATTACK + "\n\ndef sort_list(values):",
                     "Faster imports."), "stop"
    if step == "repair":
        return _edit("sort.py", "def sort_list(values)\n", "def sort_list(values):\n", "Restore the colon."), "stop"
    if step.startswith("real:"):
        _, name, index = step.split(":")
        item = json.loads((DATA / f"qwen2.5-coder-0.5b_{name}.json").read_text())[int(index)]
        return item["content"], item.get("finish_reason") or "stop"
    raise ValueError(step)


class Replay:
    """Proposals served conversation by conversation (module docstring)."""

    def __init__(self, path: Path) -> None:
        self.proposals = json.loads(path.read_text())["proposals"]
        self.next = 0
        self.turn_of: dict[str, tuple[int, int]] = {}  # a turn's text -> (proposal, turn)
        self.served: list[tuple[str, int]] = []

    def reply(self, messages: list[dict[str, str]]) -> str:
        said = [m["content"] for m in messages if m["role"] == "assistant"]
        if said and said[-1] in self.turn_of:
            index, turn = self.turn_of[said[-1]]
            turn += 1
        elif self.next < len(self.proposals):
            index, turn = self.next, 0
            self.next += 1
        else:
            return "I have no further change to propose."
        turns = self.proposals[index]["turns"]
        text: str = turns[min(turn, len(turns) - 1)]
        self.turn_of[text] = (index, turn)
        self.served.append((self.proposals[index]["name"], turn))
        return text


class FakeLLM:
    def __init__(self, script: list[str], hang_s: float = 4.0, by_model: dict[str, str] | None = None,
                 replay: Path | None = None, port: int = 0, context: int | None = None) -> None:
        """`script`: the steps in order of requests (then `good`); `by_model`: a fixed step per model name,
        which takes precedence; `replay`: a file of proposals that answers every request instead."""
        self.replay = Replay(replay) if replay else None
        self.context = context  # the context its models say they hold (GET /models), if any
        self.script = list(script)
        self.by_model = dict(by_model or {})
        self.hang_s = hang_s
        self.log: list[tuple[str, Any]] = []
        self._lock = threading.Lock()
        self._count = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                listed = [{"id": name, "object": "model", **({"max_model_len": server.context} if server.context else {})}
                          for name in ("fake", "fake-coder", "replayed-strong")]
                self._send(200, {"object": "list", "data": listed})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
                with server._lock:
                    step = server.by_model.get(body.get("model", "")) or (
                        server.script.pop(0) if server.script else "good")
                    server._count += 1
                    counter = server._count
                    server.log.append((step, body))
                if step == "hang":
                    time.sleep(server.hang_s)
                    return
                if step == "notjson":  # a 200 whose body is not JSON
                    self._send_raw(200, b"<html>gateway says hello</html>")
                    return
                if step == "trickle":  # headers, then a byte a second: no read timeout ever fires
                    self._trickle()
                    return
                if step in ("http429", "http500"):
                    code = int(step[4:])
                    self._send(code, {"error": {"message": f"scripted {code}", "type": "server_error"}},
                               {"retry-after": "0.1"} if code == 429 else {})
                    return
                if server.replay is not None:
                    with server._lock:
                        content, finish = server.replay.reply(body["messages"]), "stop"
                else:
                    content, finish = reply_for(step, body["messages"], counter)
                self._send(200, {
                    "id": f"chatcmpl-{counter}", "object": "chat.completion", "created": 1764500000,
                    "model": body["model"],
                    "choices": [{"index": 0, "finish_reason": finish,
                                 "message": {"role": "assistant", "content": content}}],
                    "usage": {"prompt_tokens": 1000, "completion_tokens": 200, "total_tokens": 1200}})

            def _send_raw(self, code: int, data: bytes) -> None:
                try:
                    self.send_response(code)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _trickle(self) -> None:
                try:
                    self.send_response(200)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", "100000")
                    self.end_headers()
                    for _ in range(int(server.hang_s * 3)):
                        self.wfile.write(b" ")
                        self.wfile.flush()
                        time.sleep(1.0)
                except (BrokenPipeError, ConnectionResetError):
                    pass

            def _send(self, code: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                try:
                    self.send_response(code)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(data)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self._thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "FakeLLM":
        self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


if __name__ == "__main__":  # a replay server on its own, for a run on another machine
    import argparse

    parser = argparse.ArgumentParser(description="a scripted OpenAI-compatible server that replays proposals")
    parser.add_argument("--replay", type=Path, required=True)
    parser.add_argument("--port", type=int, default=8089)
    args = parser.parse_args()
    with FakeLLM([], replay=args.replay, port=args.port) as llm:
        print(f"replaying {args.replay} at {llm.url}", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass
