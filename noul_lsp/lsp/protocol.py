"""The custom request `workspace/semanticFind` (alias `noul/semanticFind`), typed for pygls, and the
reading of messages: every request that has an id gets an answer.

pygls structures every incoming message with the type `get_message_type` names. Our subclass names the
attrs classes below for our methods, so handlers receive typed params. Find params are checked strictly
before that (cattrs would turn `null` or `123` into the query "None" or "123"): a payload that does not
fit (a missing query, a limit that is not a positive integer) is answered at once with InvalidParams and
a message naming the field.

`serve` replaces pygls' reading loop, which answers nothing when a message fails to structure (a hover
at a negative position, `method: null`, `"jsonrpc": "1.0"`) and stops understanding the stream after a
frame with a bad Content-Length. Ours answers each such request with the JSON-RPC error that fits,
resynchronises on the next `Content-Length` header (also one glued to the junk before it), and never
puts a traceback in `error.data`.
"""

from __future__ import annotations

import functools
import json
import logging
import re
import sys
from typing import Any

import attrs
import cattrs
from lsprotocol import types
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.json_rpc import (
    JsonRpcException,
    JsonRpcInternalError,
    JsonRPCNotification,
    JsonRPCRequestMessage,
    JsonRPCResponseMessage,
    ResponseErrorMessage,
)

from noul_lsp.config import MAX_FIND_LIMIT

SEMANTIC_FIND = "workspace/semanticFind"
SEMANTIC_FIND_ALIAS = "noul/semanticFind"
FIND_METHODS = (SEMANTIC_FIND, SEMANTIC_FIND_ALIAS)
#: the longest query a find accepts (characters): several issue texts; beyond it a find takes seconds
MAX_QUERY_CHARS = 65_536
#: the most results one find returns
MAX_LIMIT = MAX_FIND_LIMIT
#: a frame declaring more than this is not believed (its bytes are skipped as junk)
MAX_FRAME_BYTES = 64 << 20

logger = logging.getLogger(__name__)


def _kind(value: Any) -> str:
    """A JSON value's type as a client would name it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    return "an object"


def _unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False


_UINTEGER = (1 << 31) - 1


def _uinteger_problem(value: Any, where: str) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= _UINTEGER:
        shown = repr(value) if isinstance(value, int) and not isinstance(value, bool) else _kind(value)
        return f"must be an integer from 0 to {_UINTEGER}, not {shown} @ {where}"
    return None


def hover_params_problem(params: Any) -> str | None:
    """Hover's params, checked strictly (lsprotocol's converter would read "1", 1.5 or true as line 1)."""
    if not isinstance(params, dict):
        return f"params must be an object, not {_kind(params)}"
    document = params.get("textDocument")
    if not isinstance(document, dict) or not isinstance(document.get("uri"), str):
        return "must be an object with a string uri @ textDocument"
    position = params.get("position")
    if not isinstance(position, dict):
        return f"must be an object, not {_kind(position)} @ position"
    return _uinteger_problem(position.get("line"), "position.line") or \
        _uinteger_problem(position.get("character"), "position.character")


def command_params_problem(params: Any) -> str | None:
    if not isinstance(params, dict):
        return f"params must be an object, not {_kind(params)}"
    if not isinstance(params.get("command"), str):
        return f"must be a string, not {_kind(params.get('command'))} @ command"
    if params.get("arguments") is not None and not isinstance(params["arguments"], list):
        return f"must be an array, not {_kind(params['arguments'])} @ arguments"
    return None


#: requests whose params are checked strictly before lsprotocol structures them
STRICT_PARAMS = {"textDocument/hover": hover_params_problem, "workspace/executeCommand": command_params_problem}


def find_params_problem(params: Any) -> str | None:
    """What is wrong with a find's params, naming the field (None when nothing is). Strict: no coercion."""
    if not isinstance(params, dict):
        return f"params must be an object, not {_kind(params)}"
    if "query" not in params:
        return "required field missing @ query"
    query = params["query"]
    if not isinstance(query, str):
        return f"must be a string, not {_kind(query)} @ query"
    if len(query) > MAX_QUERY_CHARS:
        return f"is {len(query)} characters, more than the {MAX_QUERY_CHARS} a query may have @ query"
    if not _unicode(query):
        return "is not valid Unicode (a lone surrogate) @ query"
    limit = params.get("limit")
    if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_LIMIT):
        shown = repr(limit) if isinstance(limit, (int, float)) and not isinstance(limit, bool) else _kind(limit)
        return f"must be an integer from 1 to {MAX_LIMIT}, not {shown} @ limit"
    mode = params.get("mode")
    if mode is not None and mode not in ("files", "chunks"):
        return f"mode must be \"files\" or \"chunks\", not {json.dumps(mode)[:40]} @ mode"
    for name in ("include", "exclude"):
        globs = params.get(name)
        if globs is None:
            continue
        if not isinstance(globs, list):
            return f"must be an array of glob strings, not {_kind(globs)} @ {name}"
        for number, glob in enumerate(globs):
            if not isinstance(glob, str) or not _unicode(glob):
                return f"must be a string, not {_kind(glob)} @ {name}[{number}]"
    token = params.get("workDoneToken")
    if token is not None and (isinstance(token, bool) or not isinstance(token, (int, str))):
        return f"must be an integer or a string, not {_kind(token)} @ workDoneToken"
    return None


@attrs.define
class SemanticFindParams:
    query: str
    limit: int | None = None
    mode: str | None = None
    include: list[str] = attrs.field(factory=list)
    exclude: list[str] = attrs.field(factory=list)
    work_done_token: int | str | None = None


@attrs.define
class FindSignals:
    bm25_rank: int | None = None
    dense_rank: int | None = None
    rerank_score: float | None = None
    #: what the hit's file is: source, test, docs, example, changelog, config, generated, notebook, other
    role: str | None = None
    static_rank: int | None = None


@attrs.define
class FindHit:
    uri: str
    range: types.Range
    rank: int
    score: float
    probability: float | None
    preview: str
    signals: FindSignals
    symbol: str | None = None
    #: the repository of an organisation hit (its uri is then `noul-org://REPOSITORY/PATH`, no file here)
    repository: str | None = None


@attrs.define
class FindIndexState:
    files: int
    chunks: int
    pending: int
    stale: bool
    embedded: int = 0
    device: str = ""
    #: chunks the static leg covers (`pending` counts those the transformer has not embedded yet)
    static: int = 0
    #: with `stale`: the server is looking over an index built before for what changed since (on opening a
    #: workspace), not building it
    checking: bool = False


@attrs.define
class SemanticFindResult:
    query: str
    here_probability: float | None
    results: list[FindHit]
    index: FindIndexState
    timings: dict[str, float]
    notes: list[str] = attrs.field(factory=list)
    #: how the answer was made: {"rerank": model id | "off" | "skipped", "rerankDevice"?, "rerankFallback"?}
    signals: dict[str, str] = attrs.field(factory=dict)


@attrs.define
class SemanticFindRequest:
    id: int | str
    params: SemanticFindParams
    method: str = SEMANTIC_FIND
    jsonrpc: str = "2.0"


@attrs.define
class SemanticFindResponse:
    id: int | str
    result: SemanticFindResult | None = None
    jsonrpc: str = "2.0"


class NoulProtocol(LanguageServerProtocol):
    #: whether an `initialize` request has come (LSP: nothing but `exit` before it, and it comes once)
    initialize_seen = False

    def get_message_type(self, method: str) -> type | None:
        if method in FIND_METHODS:
            return SemanticFindRequest
        return super().get_message_type(method)

    def get_result_type(self, method: str) -> type | None:
        if method in FIND_METHODS:
            return SemanticFindResponse
        return super().get_result_type(method)

    def structure_message(self, data: dict[str, Any]):
        if data.get("method") in FIND_METHODS and "id" in data and "jsonrpc" in data:
            params = data.get("params")
            problem = find_params_problem(params)
            if problem is None:
                cleaned = {k: v for k, v in params.items() if v is not None or k == "query"}
                try:
                    return self._converter.structure({**data, "params": cleaned}, SemanticFindRequest)
                except (cattrs.BaseValidationError, TypeError, ValueError) as error:
                    problem = "; ".join(cattrs.transform_error(error)) if isinstance(error, cattrs.BaseValidationError) else str(error)
                    problem = problem.replace("$.params.", "").replace("$.params", "params")
            message = f"invalid {data['method']} params: {problem}"
            logger.warning(message)
            self._send_response(data["id"], None, types.ResponseError(types.ErrorCodes.InvalidParams, message))
            return _Answered()
        check = STRICT_PARAMS.get(data.get("method"))
        if check is not None and "id" in data and (problem := check(data.get("params"))) is not None:
            self._send_response(data["id"], None, types.ResponseError(
                types.ErrorCodes.InvalidParams, f"invalid {data['method']} params: {problem}"))
            return _Answered()
        return self._structure(data)

    def _structure(self, data: dict[str, Any]):
        """pygls' `structure_message` without its traceback in the log: a message that does not fit its type
        is the client's mistake, which `dispatch` reports in one line (and answers, when it is a request)."""
        if "jsonrpc" not in data:
            return data
        if "id" not in data:
            kind = self.get_message_type(data.get("method", "")) or JsonRPCNotification
        elif "error" in data:
            kind = ResponseErrorMessage
        elif "method" in data:
            kind = self.get_message_type(data["method"]) or JsonRPCRequestMessage
        else:
            kind = self._result_types.pop(data["id"], None) or JsonRPCResponseMessage
        return self._converter.structure(data, kind)

    def _handle_request(self, msg_id, method_name: str, params: Any) -> None:
        """As pygls, but an error a handler raises on purpose (a JsonRpcException: no folder open, an unknown
        command, bad arguments) is answered and logged in one line, with no traceback: it is the answer."""
        try:
            handler = self._get_handler(method_name)
            self._ctx_msg_id.set(msg_id)
            self._execute_handler(msg_id=msg_id, handler=handler, args=(params,),
                                  callback=functools.partial(self._send_handler_result, msg_id=msg_id))
        except JsonRpcException as error:
            logger.warning("request %s (%s): %s", msg_id, method_name, error.message)
            self._send_response(msg_id, None, error.to_response_error())
        except Exception:
            logger.exception("request %s (%s) failed", msg_id, method_name)
            self._send_response(msg_id, None, JsonRpcInternalError.of(sys.exc_info()).to_response_error())

    def _send_handler_result(self, future, *, msg_id) -> None:
        """As pygls, with the same one-line log for an error a handler raises on purpose (pygls puts a sync
        handler's error in the future too)."""
        if not future.cancelled() and isinstance(future.exception(), JsonRpcException):
            self._request_futures.pop(msg_id, None)
            error = future.exception()
            logger.warning("request %s: %s", msg_id, error.message)
            self._send_response(msg_id, error=error.to_response_error())
            return
        super()._send_handler_result(future, msg_id=msg_id)

    def _handle_notification(self, method_name: str, params: Any) -> None:
        """As pygls; a notification no handler serves is passed over in one line. (A handler's error reaches
        `NoulServer.report_server_error`, which logs it in one line and shows nothing.)"""
        if method_name != types.CANCEL_REQUEST and method_name not in self.fm.features and \
                method_name not in self.fm.builtin_features:
            logger.info("ignoring the notification %r: no handler", method_name)
            return
        super()._handle_notification(method_name, params)

    def _send_response(self, msg_id, result=None, error=None):
        """As pygls, but an error never carries a Python traceback to the client (it goes to the log)."""
        if error is not None and isinstance(error.data, dict) and "traceback" in error.data:
            logger.error("request %s failed: %s\n%s", msg_id, error.message, "".join(error.data["traceback"]))
            error = types.ResponseError(error.code, error.message)
        super()._send_response(msg_id, result, error)

    def answer_error(self, msg_id: Any, code: int, message: str) -> None:
        """Answer a request that will not reach a handler (its id unknown or invalid: `"id": null`, as
        JSON-RPC says, which pygls' converter would leave out)."""
        if _valid_id(msg_id):
            self._send_response(msg_id, None, types.ResponseError(code, message))
        else:
            self._send_data({"jsonrpc": "2.0", "id": None, "error": {"code": int(code), "message": message}})


class _Answered:
    """A request that was answered during parsing; `handle_message` ignores it (not JSON-RPC 2.0)."""

    jsonrpc = "answered"


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


#: a Content-Length header at the end of a line (possibly after junk: the body of a bad frame before it)
_LENGTH = re.compile(rb"content-length[ \t]*:[ \t]*(\d{1,12})[ \t]*\r?\n?\Z", re.IGNORECASE)


class FrameReader:
    """LSP frames from a stream with `readline()` / `readexactly(n)` coroutines, with a pushback buffer so
    that the frames a bad body swallowed can be read again."""

    def __init__(self, stream) -> None:
        self.stream = stream
        self._buffer = b""

    def push_back(self, data: bytes) -> None:
        self._buffer = data + self._buffer

    async def _readline(self) -> bytes:
        if self._buffer:
            end = self._buffer.find(b"\n")
            if end >= 0:
                line, self._buffer = self._buffer[: end + 1], self._buffer[end + 1 :]
                return line
            line, self._buffer = self._buffer, b""
            return line + await self.stream.readline()
        return await self.stream.readline()

    async def _read(self, count: int) -> bytes:
        taken, self._buffer = self._buffer[:count], self._buffer[count:]
        if len(taken) < count:
            taken += await self.stream.readexactly(count - len(taken))
        return taken

    async def frame(self, junk=lambda line: None) -> bytes | None:
        """The next frame's body; None at the end of the stream. Lines that are not headers are given to
        `junk` (the body of a frame whose header was bad may be among them)."""
        while True:
            length = None
            while True:
                line = await self._readline()
                if not line:
                    return None
                found = _LENGTH.search(line)
                if found:
                    if found.start():
                        junk(line[: found.start()])
                    length = int(found.group(1))
                elif not line.strip():
                    if length is not None:
                        break
                elif b":" not in line or line.lstrip().startswith((b"{", b"[")):
                    junk(line)
            if length > MAX_FRAME_BYTES:
                logger.warning("a frame declared %d bytes: skipped", length)
                continue
            try:
                return await self._read(length)
            except Exception:  # asyncio.IncompleteReadError: the stream ended inside the body
                return None


async def serve(reader, protocol: NoulProtocol, stop_event) -> None:
    """Read and dispatch messages until the stream ends or the server stops (see the module's docstring)."""
    frames = FrameReader(reader)

    def orphan(data: bytes) -> None:
        """Junk between frames: a request in it (its frame's header was bad) is answered, not dropped."""
        try:
            message = json.loads(data)
        except ValueError:
            return
        if isinstance(message, dict) and _valid_id(message.get("id")) and "method" in message:
            protocol.answer_error(message["id"], types.ErrorCodes.InvalidRequest,
                                  "the frame of this request has no valid Content-Length header")

    while not stop_event.is_set():
        body = await frames.frame(orphan)
        if body is None:
            break
        try:
            data = json.loads(body)
        except ValueError as error:  # JSONDecodeError, UnicodeDecodeError
            protocol.answer_error(None, types.ErrorCodes.ParseError, f"not JSON: {error}")
            swallowed = body.lower().find(b"content-length")
            if swallowed >= 0:  # the declared length ran into the frames after it: read them again
                frames.push_back(body[swallowed:])
            continue
        try:
            dispatch(protocol, data)
        except Exception as error:  # a bug of ours or pygls': answered, logged, and the server goes on
            logger.exception("cannot handle a message")
            if isinstance(data, dict) and _valid_id(data.get("id")) and "method" in data:
                protocol.answer_error(data["id"], types.ErrorCodes.InternalError, f"{type(error).__name__}: {error}")


def dispatch(protocol: NoulProtocol, data: Any) -> None:
    """One parsed message: checked as JSON-RPC 2.0, structured, handed to pygls; a request that cannot
    reach a handler is answered with the error that says why."""
    if not isinstance(data, dict):
        protocol.answer_error(None, types.ErrorCodes.InvalidRequest, f"a message must be an object, not {_kind(data)}")
        return
    has_id = "id" in data
    msg_id = data.get("id")
    if has_id and not _valid_id(msg_id):
        protocol.answer_error(None, types.ErrorCodes.InvalidRequest, f"id must be an integer or a string, not {_kind(msg_id)}")
        return
    is_request = has_id and "method" in data
    if data.get("jsonrpc") != "2.0":
        if has_id:
            protocol.answer_error(msg_id, types.ErrorCodes.InvalidRequest, 'jsonrpc must be "2.0"')
        return
    if "method" in data and not isinstance(data["method"], str):
        if has_id:
            protocol.answer_error(msg_id, types.ErrorCodes.InvalidRequest, f"method must be a string, not {_kind(data['method'])}")
        return
    if has_id and not is_request and "result" not in data and "error" not in data:
        protocol.answer_error(msg_id, types.ErrorCodes.InvalidRequest, "a request needs a method")
        return
    if "params" in data and data["params"] is not None and not isinstance(data["params"], (dict, list)):
        if is_request:
            protocol.answer_error(msg_id, types.ErrorCodes.InvalidParams, f"params must be an object or an array, not {_kind(data['params'])}")
        return
    if is_request and protocol._shutdown and data["method"] != "exit":
        protocol.answer_error(msg_id, types.ErrorCodes.InvalidRequest, "the server is shutting down")
        return
    method = data.get("method")
    if method is not None and not protocol.initialize_seen and method not in ("initialize", "exit"):
        # LSP: before `initialize`, a request is answered ServerNotInitialized and a notification dropped
        if is_request:
            protocol.answer_error(msg_id, types.ErrorCodes.ServerNotInitialized,
                                  "the server is not initialized: send initialize first")
        return
    if is_request and method == "initialize" and protocol.initialize_seen:
        protocol.answer_error(msg_id, types.ErrorCodes.InvalidRequest, "initialize was sent already")
        return
    try:
        message = protocol.structure_message(data)
    except Exception as error:
        cause = error.__cause__ or error
        if isinstance(cause, cattrs.BaseValidationError):
            details = "; ".join(cattrs.transform_error(cause)).replace("$.params.", "").replace("$.params", "params")
        else:
            details = f"{type(cause).__name__}: {cause}"
        logger.warning("cannot structure %s: %s", data.get("method", "a message"), details)
        if is_request:
            protocol.answer_error(msg_id, types.ErrorCodes.InvalidParams, f"invalid {data['method']} params: {details}")
        return
    if isinstance(message, dict):  # pygls leaves what it does not know as a dict
        if is_request:
            protocol.answer_error(msg_id, types.ErrorCodes.InvalidRequest, "not a JSON-RPC request")
        return
    if isinstance(message, _Answered):  # answered while structured (bad find or hover params)
        return
    if is_request and method == "initialize":
        protocol.initialize_seen = True
    protocol.handle_message(message)
