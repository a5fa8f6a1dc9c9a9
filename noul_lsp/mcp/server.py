"""The MCP server (official `mcp` SDK, stdio): tools `find`, `status` and `reindex` over a `RootSet`.

`find` answers with the fewest files and line ranges for a description (retrieval/answer.py), as
compact JSON in the text content and the same object as structured content. A call the server cannot
answer as asked (bad arguments, a path outside the roots, a damaged index being rebuilt) gets an error
result (`isError`) with a message saying what to do; arguments of the wrong type are refused by the
SDK's schema check the same way. Either way the server goes on answering.
"""

from __future__ import annotations

import logging
from typing import Annotated, Literal

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import Field

from noul_lsp import __version__
from noul_lsp.mcp.roots import MAX_LIMIT, MAX_TOKEN_BUDGET, CallError, RootSet
from noul_lsp.retrieval.answer import DEFAULT_TOKEN_BUDGET, MIN_TOKEN_BUDGET, compact_json

logger = logging.getLogger(__name__)

INSTRUCTIONS = """\
noul finds code by describing it, locally (BM25 + embeddings over this machine's index). Call `find`
with a description ("where do we retry failed uploads with backoff", or a whole issue text) instead of
reading files one by one: it answers with the few files and line ranges that most likely hold it, each
with P(answer) and its role, and P(here), the chance that the code is in these roots at all (low:
probably not there). Read only the ranges you need. The answer fits `token_budget` (approximate
tokens, characters / 4); a larger budget adds the chosen files' further ranges (up to three a file) and
their source lines, never more files nor whole files: for every matching range of a file, ask with
`mode: "chunks"` and a larger `limit`."""

FIND_DESCRIPTION = f"""\
Find code by describing what it does. Answers with the minimal set of files and line ranges (best
first), each with its probability of being what you described (P(answer)) and its role (source, test,
docs, ...), P(here) for the whole answer, a few runner-up files, and what the index has not covered yet
(`pending`). Sized to `token_budget` (default {DEFAULT_TOKEN_BUDGET}; approximate tokens, characters / 4):
the files' best ranges and previews first, then their further ranges (up to three a file; `mode: "chunks"`
gives every matching range), then the ranges' source lines. The budget is a ceiling: the answer stops
where the chosen files end."""


def _text(body: dict) -> CallToolResult:
    return CallToolResult(content=[TextContent(type="text", text=compact_json(body))], structured_content=body)


#: what the instructions add when the server searches the organisation index too (`noul mcp --org`)
ORGANISATION_INSTRUCTIONS = """
A find without `path` also searches the team's organisation index (the repositories this server's store
role is granted): such a file names its `repository` instead of a root and comes with its code (it is not
on this machine). To keep to one repository, pass `include: ["OWNER/NAME:"]`."""


def build_server(roots: RootSet, *, default_token_budget: int = DEFAULT_TOKEN_BUDGET) -> MCPServer:
    instructions = INSTRUCTIONS + (ORGANISATION_INSTRUCTIONS if roots.settings.team.org else "")
    server = MCPServer("noul", instructions=instructions, version=__version__, log_level="WARNING",
                       warn_on_duplicate_tools=False)
    read_only = ToolAnnotations(read_only_hint=True, open_world_hint=False)

    @server.tool(name="find", description=FIND_DESCRIPTION, annotations=read_only, structured_output=False)
    def find(
        query: Annotated[str, Field(description="what the code does, in words, or an issue's text",
                                    json_schema_extra={"minLength": 1})],
        path: Annotated[str | None, Field(description="a root, or a folder or file inside one, to search; "
                                          "default: every root (and, when the server searches it, the "
                                          "organisation index, whose files name their `repository`)")] = None,
        limit: Annotated[int, Field(description=f"candidate files (or chunks) considered, 1 to {MAX_LIMIT}",
                                    strict=True, json_schema_extra={"minimum": 1, "maximum": MAX_LIMIT})] = 10,
        mode: Annotated[Literal["files", "chunks"], Field(description="rank files (default) or chunks")] = "files",
        include: Annotated[list[str] | None, Field(description="only paths matching these globs "
                                                   "(gitignore syntax, relative to the root)")] = None,
        exclude: Annotated[list[str] | None, Field(description="skip paths matching these globs")] = None,
        token_budget: Annotated[int, Field(description=f"approximate tokens of the answer, {MIN_TOKEN_BUDGET} "
                                           f"to {MAX_TOKEN_BUDGET}", strict=True,
                                           json_schema_extra={"minimum": MIN_TOKEN_BUDGET,
                                                              "maximum": MAX_TOKEN_BUDGET})] = default_token_budget,
    ) -> CallToolResult:
        try:
            return _text(roots.find(query, path=path, limit=limit, mode=mode, include=include, exclude=exclude,
                                    token_budget=token_budget))
        except CallError as error:
            raise ToolError(str(error)) from None

    @server.tool(name="status", description="What each root's index holds (files, chunks, embedded, pending), "
                 "whether indexing is running, the models, and recent indexing problems.",
                 annotations=read_only, structured_output=False)
    def status() -> CallToolResult:
        return _text(roots.status())

    @server.tool(name="reindex", description="Scan a root (or every root) again in the background, e.g. after a "
                 "branch switch; `find` keeps answering from the current index meanwhile.",
                 annotations=ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True,
                                             open_world_hint=False), structured_output=False)
    def reindex(
        path: Annotated[str | None, Field(description="a root or a path inside one; default: every root")] = None,
    ) -> CallToolResult:
        try:
            return _text(roots.reindex(path))
        except CallError as error:
            raise ToolError(str(error)) from None

    return server


def serve(roots: RootSet, *, default_token_budget: int = DEFAULT_TOKEN_BUDGET) -> None:
    """Serve MCP over stdin/stdout until the client closes the connection."""
    try:
        build_server(roots, default_token_budget=default_token_budget).run("stdio")
    finally:
        roots.close()
