"""`noul mcp`: the engine for coding agents over the Model Context Protocol (stdio).

`roots.py` keeps the roots, their indexes and the background indexing (no MCP in it); `server.py` is the
MCP server, the only module that imports the `mcp` SDK (the `mcp` extra).
"""
