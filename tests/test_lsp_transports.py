"""The server starts the way editors start it: vscode-languageclient appends `--stdio` (and, for a Node
module, `--clientProcessId=N`) to the command, or asks the server to connect to a socket or a named pipe it
listens on. Each test runs the real `python -m noul_lsp` and completes an `initialize` round trip."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest


def frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def read_message(stream) -> dict:
    length = None
    while True:
        line = stream.readline()
        if not line:
            raise AssertionError("the server closed the stream before answering")
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(stream.read(length))


def initialize(root: Path) -> dict:
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize",
            "params": {"processId": None, "rootUri": root.as_uri(), "capabilities": {},
                       "initializationOptions": {"noul": {"cacheDir": str(root / ".cache")}}}}


def answer_of(reader, writer) -> dict:
    while True:
        message = read_message(reader)
        if message.get("id") == 1:
            return message
        assert "method" in message, message  # notifications (log messages) may come first


def shut_down(writer, process: subprocess.Popen) -> None:
    writer.write(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
    writer.write(frame({"jsonrpc": "2.0", "method": "exit"}))
    writer.flush()
    assert process.wait(timeout=30) == 0


def test_stdio_flag_and_client_process_id_are_accepted(tmp_path: Path):
    process = subprocess.Popen([sys.executable, "-m", "noul_lsp", "--stdio", "--clientProcessId=4242"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        process.stdin.write(frame(initialize(tmp_path)))
        process.stdin.flush()
        answer = answer_of(process.stdout, process.stdin)
        assert answer["result"]["serverInfo"]["name"] == "noul-lsp"
        shut_down(process.stdin, process)
    finally:
        process.kill()


@pytest.mark.parametrize("transport", ["socket", "pipe"])
def test_the_server_connects_to_the_clients_socket_or_pipe(tmp_path: Path, transport: str):
    if transport == "pipe":
        address = str(tmp_path / "client.sock")
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(address)
        argument = f"--pipe={address}"
    else:
        listener = socket.create_server(("127.0.0.1", 0))
        argument = f"--socket={listener.getsockname()[1]}"
    listener.listen(1)
    listener.settimeout(30)
    process = subprocess.Popen([sys.executable, "-m", "noul_lsp", argument], stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        connection, _ = listener.accept()
        with connection, connection.makefile("rb") as reader, connection.makefile("wb") as writer:
            writer.write(frame(initialize(tmp_path)))
            writer.flush()
            assert answer_of(reader, writer)["result"]["serverInfo"]["name"] == "noul-lsp"
            shut_down(writer, process)
    finally:
        listener.close()
        process.kill()


def test_an_unreachable_socket_is_one_error_line(tmp_path: Path):
    unused = socket.create_server(("127.0.0.1", 0))
    port = unused.getsockname()[1]
    unused.close()
    done = subprocess.run([sys.executable, "-m", "noul_lsp", f"--socket={port}"], capture_output=True, text=True,
                          timeout=30)
    assert done.returncode == 1
    assert done.stderr.startswith("noul-lsp: error: cannot connect to the client's socket")
    assert "Traceback" not in done.stderr


def test_the_log_file_never_holds_the_shared_stores_password(tmp_path: Path):
    """pygls logs the initialisation options whole; a `sharedStore` setting holds a database password."""
    log = tmp_path / "server.log"
    process = subprocess.Popen([sys.executable, "-m", "noul_lsp", "--log-file", str(log)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        message = initialize(tmp_path)
        message["params"]["initializationOptions"]["noul"]["sharedStore"] = "postgresql://alice:S3cret-pw!@127.0.0.1:1/db"
        message["params"]["trace"] = "verbose"
        process.stdin.write(frame(message))
        process.stdin.write(frame({"jsonrpc": "2.0", "method": "workspace/didChangeConfiguration", "params": {
            "settings": {"noul": {"sharedStore": "host=127.0.0.1 port=1 user=bob password=An0ther-pw"}}}}))
        process.stdin.flush()
        answer_of(process.stdout, process.stdin)
        shut_down(process.stdin, process)
    finally:
        process.kill()
    text = log.read_text()
    assert "postgresql://alice:***@127.0.0.1:1/db" in text  # the setting is logged, without its password
    assert "S3cret-pw" not in text and "An0ther-pw" not in text


def test_a_folder_whose_index_cannot_open_is_said_once_and_named_in_the_status(tmp_path: Path):
    """Each folder change reconciles every folder: a folder that cannot be indexed was shown again each time."""
    blocker = tmp_path / "not-a-folder"
    blocker.write_text("")
    first, second = tmp_path / "one", tmp_path / "two"
    first.mkdir()
    second.mkdir()
    process = subprocess.Popen([sys.executable, "-m", "noul_lsp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    try:
        message = initialize(first)
        message["params"]["initializationOptions"]["noul"]["cacheDir"] = str(blocker / "cache")
        process.stdin.write(frame(message))
        process.stdin.flush()
        shown = []
        while (reply := read_message(process.stdout)).get("id") != 1:
            if reply.get("method") == "window/showMessage":
                shown.append(reply["params"]["message"])
        process.stdin.write(frame({"jsonrpc": "2.0", "method": "workspace/didChangeWorkspaceFolders", "params": {
            "event": {"added": [{"uri": second.as_uri(), "name": "two"}], "removed": []}}}))
        process.stdin.write(frame({"jsonrpc": "2.0", "id": 7, "method": "workspace/executeCommand",
                                   "params": {"command": "noul.status"}}))
        process.stdin.flush()
        while True:
            reply = read_message(process.stdout)
            if reply.get("method") == "window/showMessage":
                shown.append(reply["params"]["message"])
            if reply.get("id") == 7:
                status = reply["result"]
                break
        shut_down(process.stdin, process)
    finally:
        process.kill()
    cannot = [m for m in shown if "cannot index" in m]
    assert len(cannot) == 2 and any(str(first) in m for m in cannot) and any(str(second) in m for m in cannot), shown
    assert [u["folder"] for u in status["unopened"]] == [str(first.resolve()), str(second.resolve())]


def test_an_editor_that_quits_mid_request_leaves_one_line_in_the_log_not_tracebacks(tmp_path: Path):
    """Neovim quit while `noul.status` was in flight: pygls logged each answer it could not send, and the error
    answer it tried instead, with a BrokenPipeError's traceback."""
    log = tmp_path / "server.log"
    process = subprocess.Popen([sys.executable, "-m", "noul_lsp", "--log-file", str(log)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        process.stdin.write(frame(initialize(tmp_path)))
        process.stdin.flush()
        answer_of(process.stdout, process.stdin)
        process.stdout.close()  # the editor is gone: what the server writes next meets a closed pipe
        for number in range(3):
            process.stdin.write(frame({"jsonrpc": "2.0", "id": 10 + number, "method": "workspace/executeCommand",
                                       "params": {"command": "noul.status"}}))
        process.stdin.flush()
        process.stdin.close()
        process.wait(timeout=60)
    finally:
        process.kill()
    text = log.read_text()
    assert "Traceback" not in text and "BrokenPipeError" not in text
    assert text.count("the client closed the connection") == 1
