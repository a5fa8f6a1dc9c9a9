"""The custom request `workspace/semanticFind` (alias `noul/semanticFind`), typed for pygls.

pygls structures every incoming message with the type `get_message_type` names. Our subclass names the
attrs classes below for our methods, so handlers receive typed params. A payload that does not fit them
(a missing query, a limit that is not a number) is answered at once with InvalidParams and a message
saying which field is wrong: pygls by itself would log the failure and never answer the request.
"""

from __future__ import annotations

import logging
from typing import Any

import attrs
import cattrs
from lsprotocol import types
from pygls.protocol import LanguageServerProtocol

SEMANTIC_FIND = "workspace/semanticFind"
SEMANTIC_FIND_ALIAS = "noul/semanticFind"
FIND_METHODS = (SEMANTIC_FIND, SEMANTIC_FIND_ALIAS)

logger = logging.getLogger(__name__)


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


@attrs.define
class FindIndexState:
    files: int
    chunks: int
    pending: int
    stale: bool
    embedded: int = 0
    device: str = ""


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
            try:
                return self._converter.structure(data, SemanticFindRequest)
            except (cattrs.ClassValidationError, cattrs.IterableValidationError, TypeError, ValueError) as error:
                details = "; ".join(cattrs.transform_error(error)) if isinstance(error, cattrs.BaseValidationError) else str(error)
                details = details.replace("$.params.", "").replace("$.params", "params")
                message = f"invalid {data['method']} params: {details}"
                logger.warning(message)
                self._send_response(data["id"], None, types.ResponseError(types.ErrorCodes.InvalidParams, message))
                return _Answered()
        return super().structure_message(data)


class _Answered:
    """A request that was answered during parsing; `handle_message` ignores it (not JSON-RPC 2.0)."""

    jsonrpc = "answered"
