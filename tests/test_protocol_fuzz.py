"""Protocol fuzz over stdio: hundreds of malformed messages from a fixed seed against `python -m noul_lsp`.

Raw bytes on a pipe (not a client library: the point is messages no client library would send). Every
request that arrives in a readable frame with a valid id gets exactly one answer with the error code its
fault calls for, no answer carries a traceback, a bad frame costs at most its own message, and a find
sent after every malformed message works.
"""

from __future__ import annotations

import json
import os
import queue
import random
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

FIXTURE = Path(__file__).parent / "fixtures" / "polyglot"
FILES = ("src/net/retry.py", "src/store/cookies.py", "native/config.c")
FIND = "workspace/semanticFind"
SEED = 20240513
MALFORMED = 320
INVALID_PARAMS, INVALID_REQUEST, METHOD_NOT_FOUND, PARSE_ERROR = -32602, -32600, -32601, -32700


def frame(body: bytes, *, length: int | None = None, header: bytes | None = None) -> bytes:
    if header is None:
        header = b"Content-Length: %d\r\n" % (len(body) if length is None else length)
    return header + b"\r\n" + body


def encode(message) -> bytes:
    return json.dumps(message).encode()


class Server:
    def __init__(self, root: Path, cache: Path, stderr=subprocess.DEVNULL) -> None:
        env = {**os.environ, "NOUL_CACHE_DIR": str(cache)}
        self.process = subprocess.Popen([sys.executable, "-m", "noul_lsp"], stdin=subprocess.PIPE,
                                        stdout=subprocess.PIPE, stderr=stderr, env=env)
        self.replies: queue.Queue = queue.Queue()
        self.by_id: dict = {}
        self.messages: list[str] = []  # window/showMessage texts
        threading.Thread(target=self._read, daemon=True).start()
        self.root = root

    def _read(self) -> None:
        stream = self.process.stdout
        while True:
            length = None
            while True:
                line = stream.readline()
                if not line:
                    return
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
                elif not line.strip():
                    break
            message = json.loads(stream.read(length))
            if "id" in message and "method" not in message:
                self.replies.put(message)
            elif message.get("method") == "window/showMessage":
                self.messages.append(message["params"]["message"])

    def send(self, data: bytes) -> None:
        self.process.stdin.write(data)
        self.process.stdin.flush()

    def wait_for(self, ids: set, timeout: float) -> dict:
        """Collect replies until every id in `ids` has one (or the time is up)."""
        deadline = time.monotonic() + timeout
        while not ids <= self.by_id.keys() and time.monotonic() < deadline:
            try:
                reply = self.replies.get(timeout=0.5)
            except queue.Empty:
                continue
            key = json.dumps(reply["id"])
            self.by_id.setdefault(key, []).append(reply)
        return self.by_id

    def request(self, msg_id, method: str, params, timeout: float = 60) -> dict:
        self.send(frame(encode({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})))
        key = json.dumps(msg_id)
        self.wait_for({key}, timeout)
        assert key in self.by_id, f"no reply to {method}"
        return self.by_id[key][-1]


def malformed_messages(rng: random.Random, uri: str):
    """(bytes to send, id key whose reply is required or None, the error code it must carry or None)."""
    counter = iter(range(10**6))

    def request(method, params, *, code, **envelope):
        msg_id = envelope.pop("id", f"fz-{next(counter)}")
        message = {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params, **envelope}
        for part in ("params", "method"):
            if message.pop(f"drop_{part}", False):
                del message[part]
        valid_id = isinstance(msg_id, str) or (isinstance(msg_id, int) and not isinstance(msg_id, bool))
        return frame(encode(message)), json.dumps(msg_id) if valid_id else "null", code  # a bad id: answered to null

    bad_values = [None, 123, -1, 0, 1.5, True, False, "", "5", [], ["retry"], {}, {"a": 1}, 2**31, -2**31, 10**20]
    position = lambda line, char: {"textDocument": {"uri": uri}, "position": {"line": line, "character": char}}  # noqa: E731

    kinds = []
    # find params: every field, wrong types, strictly
    for value in bad_values:
        if not isinstance(value, str):
            kinds.append(lambda v=value: request(FIND, {"query": v}, code=INVALID_PARAMS))
        if not (isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 1000) and value is not None:
            kinds.append(lambda v=value: request(FIND, {"query": "retry", "limit": v}, code=INVALID_PARAMS))
        if value is not None:
            kinds.append(lambda v=value: request(FIND, {"query": "retry", "mode": v}, code=INVALID_PARAMS))
        if not isinstance(value, list) and value is not None:
            kinds.append(lambda v=value: request(FIND, {"query": "retry", "include": v}, code=INVALID_PARAMS))
            kinds.append(lambda v=value: request(FIND, {"query": "retry", "exclude": v}, code=INVALID_PARAMS))
        if isinstance(value, (list, dict, float)):
            kinds.append(lambda v=value: request(FIND, {"query": "retry", "workDoneToken": v}, code=INVALID_PARAMS))
        if not isinstance(value, (dict, list)) and value is not None:
            kinds.append(lambda v=value: request(FIND, v, code=INVALID_PARAMS))
    kinds += [
        lambda: request(FIND, {"query": "retry", "include": [1, "x"]}, code=INVALID_PARAMS),
        lambda: request(FIND, {"query": "retry", "exclude": ["x", None]}, code=INVALID_PARAMS),
        lambda: request(FIND, {"query": "\ud800 retry"}, code=INVALID_PARAMS),
        lambda: request(FIND, {"query": "retry " * 20_000}, code=INVALID_PARAMS),
        lambda: request(FIND, {}, code=INVALID_PARAMS),
        lambda: request(FIND, None, code=INVALID_PARAMS, drop_params=True),
        lambda: request("noul/semanticFind", {"query": ["retry"]}, code=INVALID_PARAMS),
        # hover: bad positions and params (answered, never left waiting)
        lambda: request("textDocument/hover", position(-1, 0), code=INVALID_PARAMS),
        lambda: request("textDocument/hover", position(0, -5), code=INVALID_PARAMS),
        lambda: request("textDocument/hover", position(2**31, 0), code=INVALID_PARAMS),
        lambda: request("textDocument/hover", position("1", 0), code=INVALID_PARAMS),
        lambda: request("textDocument/hover", position(1.5, 0), code=INVALID_PARAMS),
        lambda: request("textDocument/hover", position(0, True), code=INVALID_PARAMS),
        lambda: request("textDocument/hover", {"textDocument": {"uri": 5}, "position": {"line": 0, "character": 0}},
                        code=INVALID_PARAMS),
        lambda: request("textDocument/hover", {"position": {"line": 0, "character": 0}}, code=INVALID_PARAMS),
        lambda: request("textDocument/hover", None, code=INVALID_PARAMS, drop_params=True),
        lambda: request("textDocument/hover", position(2**31 - 1, 2**31 - 1), code=None),
        # commands
        lambda: request("workspace/executeCommand", {}, code=INVALID_PARAMS),
        lambda: request("workspace/executeCommand", {"command": 3}, code=INVALID_PARAMS),
        lambda: request("workspace/executeCommand", {"command": "noul.nope"}, code=INVALID_PARAMS),
        lambda: request("workspace/executeCommand", {"command": "noul.status", "arguments": "x"}, code=INVALID_PARAMS),
        # methods the server does not serve
        lambda: request("textDocument/definition", position(0, 0), code=METHOD_NOT_FOUND),
        lambda: request("workspace/symbol", {"query": "x"}, code=METHOD_NOT_FOUND),
        lambda: request("textDocument/completion", position(0, 0), code=METHOD_NOT_FOUND),
        lambda: request("noul/nothing", {}, code=METHOD_NOT_FOUND),
        lambda: request("", {}, code=METHOD_NOT_FOUND),
        # the envelope
        lambda: request(FIND, {"query": "retry"}, code=INVALID_REQUEST, jsonrpc="1.0"),
        lambda: request(None, {"query": "retry"}, code=INVALID_REQUEST),
        lambda: request(123, {"query": "retry"}, code=INVALID_REQUEST),
        lambda: request(FIND, "query", code=INVALID_PARAMS),
        lambda: request(None, None, code=INVALID_REQUEST, drop_params=True, drop_method=True),
        lambda: request(FIND, {"query": "retry"}, code=INVALID_REQUEST, id=True),
        lambda: request(FIND, {"query": "retry"}, code=INVALID_REQUEST, id=1.5),
        lambda: request(FIND, {"query": "retry"}, code=INVALID_REQUEST, id={"a": 1}),
        lambda: (frame(b"[1, 2, 3]"), "null", INVALID_REQUEST),
        lambda: (frame(b"42"), "null", INVALID_REQUEST),
        # bad JSON, well framed: a parse error with id null
        lambda: (frame(b'{"jsonrpc": "2.0", "id": 1, "method": '), "null", PARSE_ERROR),
        lambda: (frame(b"\xff\xfe not utf-8 at all"), "null", PARSE_ERROR),
        lambda: (frame(b"{'single': 'quotes'}"), "null", PARSE_ERROR),
        lambda: (frame(b" "), "null", PARSE_ERROR),
        # notifications with junk: no answer due, the server must live on
        lambda: (frame(encode({"jsonrpc": "2.0", "method": "workspace/didChangeWatchedFiles", "params": {"changes": 5}})), None, None),
        lambda: (frame(encode({"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": {"settings": {"noul": {"limit": "x"}}}})), None, None),
        lambda: (frame(encode({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": None}})), None, None),
        lambda: (frame(encode({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": []})), None, None),
        lambda: (frame(encode({"jsonrpc": "2.0", "method": None})), None, None),
        # framing: the message may be lost, the stream must not be
        lambda: (frame(encode({"jsonrpc": "2.0", "id": "lost-1", "method": FIND, "params": {"query": "x"}}),
                       header=b"Content-Type: application/json\r\n"), None, None),
        lambda: (frame(encode({"jsonrpc": "2.0", "method": "noul/x"}), header=b"Content-Length: abc\r\n"), None, None),
        lambda: (frame(encode({"jsonrpc": "2.0", "method": "noul/x"}), header=b"Content-Length: -5\r\n"), None, None),
        lambda: (frame(encode({"jsonrpc": "2.0", "method": "noul/x"}), length=7), None, None),
        lambda: (frame(encode({"jsonrpc": "2.0", "method": "noul/x"}), length=40 + rng.randrange(60)), None, None),
        lambda: (b"garbage line\r\n\r\n\r\n", None, None),
        lambda: (b"Content-Length: 99999999999\r\n\r\n", None, None),
        lambda: lowercase_header(request("noul/nothing", {}, code=METHOD_NOT_FOUND)),
    ]
    def lowercase_header(made):
        data, key, code = made
        return data.replace(b"Content-Length", b"content-length", 1), key, code

    for _ in range(MALFORMED):
        yield rng.choice(kinds)()


@pytest.fixture
def server(tmp_path):
    root = tmp_path / "ws"
    for name in FILES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(FIXTURE / name, root / name)
    running = Server(root, tmp_path / "cache")
    yield running
    if running.process.poll() is None:
        running.process.kill()
    running.process.wait(timeout=10)


def start(server: Server, capabilities: dict | None = None) -> None:
    """initialize, initialized, and wait until a find has results (BM25 answers once files are scanned)."""
    uri = server.root.as_uri()
    init = server.request("init", "initialize", {"processId": None, "rootUri": uri, "capabilities": capabilities or {},
                                                 "workspaceFolders": [{"uri": uri, "name": "ws"}]})
    assert "result" in init
    server.send(frame(encode({"jsonrpc": "2.0", "method": "initialized", "params": {}})))
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        found = server.request(f"warm-{time.monotonic()}", FIND, {"query": "retry with backoff"})
        if found.get("result", {}).get("results"):
            return
        time.sleep(0.3)
    raise AssertionError("find never returned results")


def test_the_order_of_the_protocol_is_kept_and_ordinary_errors_leave_no_traceback(tmp_path):
    """LSP: a request before `initialize` is answered ServerNotInitialized, `initialize` comes once, `exit`
    without `shutdown` exits 1. Errors a client causes (no folder open, an unknown command, a change to a
    document never opened, notifications that do not fit their type) are answered or logged in one line:
    no traceback on stderr, no "Error in server" shown to the user."""
    log = tmp_path / "stderr.log"
    with open(log, "wb") as stderr:
        server = Server(tmp_path, tmp_path / "cache", stderr=stderr)
        try:
            early = server.request("early", FIND, {"query": "retry"})
            assert early["error"]["code"] == -32002, early
            hover = server.request("early-hover", "textDocument/hover", {
                "textDocument": {"uri": "file:///x.py"}, "position": {"line": 0, "character": 0}})
            assert hover["error"]["code"] == -32002, hover
            assert "result" in server.request("init", "initialize", {"processId": None, "capabilities": {}})
            again = server.request("init-again", "initialize", {"processId": None, "capabilities": {}})
            assert again["error"]["code"] == INVALID_REQUEST, again
            server.send(frame(encode({"jsonrpc": "2.0", "method": "initialized", "params": {}})))
            nothing_open = server.request("no-folder", FIND, {"query": "retry"})
            assert nothing_open["error"]["code"] == INVALID_PARAMS
            assert "no workspace folder is open" in nothing_open["error"]["message"]
            unknown = server.request("nope", "workspace/executeCommand", {"command": "noul.nope"})
            assert "error" in unknown
            for method, params in (
                    ("textDocument/didChange", {"textDocument": {"uri": "file:///never/opened.py", "version": 2},
                                                "contentChanges": [{"text": "x"}]}),
                    ("workspace/didChangeWatchedFiles", {"changes": [{"uri": "file:///a.py", "type": 7}]}),
                    ("$/cancelRequest", {}), ("$/setTrace", {"value": "loud"})):
                server.send(frame(encode({"jsonrpc": "2.0", "method": method, "params": params})))
            status = server.request("status", "workspace/executeCommand", {"command": "noul.status"})
            assert status["result"]["roots"] == []
            server.send(frame(encode({"jsonrpc": "2.0", "method": "exit"})))
            assert server.process.wait(timeout=20) == 1  # no shutdown before it
        finally:
            if server.process.poll() is None:
                server.process.kill()
    written = log.read_text(errors="replace")
    assert "Traceback" not in written and "Unknown message" not in written, written[-3000:]
    assert not [m for m in server.messages if "Error in server" in m], server.messages


def test_a_client_that_never_answers_the_servers_requests_still_gets_an_index(server):
    """This client says it shows progress and watches files for the server, then answers neither request
    (the progress token's creation, the watch registration): indexing waited for both before."""
    start(server, {"window": {"workDoneProgress": True},
                   "workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}}})
    status = server.request("status", "workspace/executeCommand", {"command": "noul.status"})
    assert status["result"]["roots"][0]["files"] == len(FILES)


def test_a_truncated_index_is_set_aside_and_the_user_told_once(tmp_path):
    from noul_lsp import cli

    root = tmp_path / "ws"
    for name in FILES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(FIXTURE / name, root / name)
    cache = tmp_path / "cache"
    assert cli.main(["index", str(root), "--cache-dir", str(cache), "--quiet", "--no-embed"]) == 0
    (data,) = (cache / "indexes").glob("*/data.mdb")
    os.truncate(data, data.stat().st_size // 2)
    server = Server(root, cache)
    try:
        start(server)  # no SIGBUS during initialize; the rebuilt index answers
        damaged = [m for m in server.messages if "was damaged" in m]
        assert len(damaged) == 1 and "truncated" in damaged[0] and "moved to" in damaged[0]
        status = server.request("status", "workspace/executeCommand", {"command": "noul.status"})
        assert status["result"]["roots"][0]["files"] == len(FILES)
    finally:
        server.process.kill()
        server.process.wait(timeout=10)
    assert len(list((cache / "indexes").glob("*.damaged-*"))) == 1


def test_every_malformed_request_is_answered_and_find_keeps_working(server):
    uri = server.root.as_uri()
    start(server)

    rng = random.Random(SEED)
    expected: dict[str, int | None] = {}
    finds: list[str] = []
    parse_errors = invalid_ids = 0
    for number, (data, key, code) in enumerate(malformed_messages(rng, uri + "/src/net/retry.py")):
        if key == "null":
            parse_errors += code == PARSE_ERROR
            invalid_ids += code == INVALID_REQUEST
        elif key is not None:
            expected[key] = code
        after = f"after-{number}"
        finds.append(json.dumps(after))
        server.send(data + frame(encode({"jsonrpc": "2.0", "id": after, "method": FIND,
                                         "params": {"query": "retry failed requests", "limit": 3}})))
    replies = server.wait_for(set(expected) | set(finds), timeout=120)

    missing = [k for k in list(expected) + finds if k not in replies]
    assert missing == []
    for key, code in expected.items():
        assert len(replies[key]) == 1, key
        reply = replies[key][0]
        if code is not None:
            assert reply.get("error", {}).get("code") == code, (key, reply)
    for key in finds:
        assert replies[key][-1].get("result", {}).get("results"), (key, replies[key])
    nulls = [r for r in replies.get("null", [])]
    assert sum(r["error"]["code"] == PARSE_ERROR for r in nulls) >= parse_errors
    assert sum(r["error"]["code"] == INVALID_REQUEST for r in nulls) >= invalid_ids
    for reply in (r for rs in replies.values() for r in rs):
        error = reply.get("error")
        if error is not None:
            assert "Traceback" not in json.dumps(error) and not (error.get("data") or {}).get("traceback")

    shutdown = server.request("bye", "shutdown", None)
    assert "result" in shutdown
    late = server.request("late", FIND, {"query": "retry"})
    assert late["error"]["code"] == INVALID_REQUEST  # answered, not left waiting
    server.send(frame(encode({"jsonrpc": "2.0", "method": "exit"})))
    assert server.process.wait(timeout=20) == 0
