"""noul-lsp: find code by describing it, locally."""

__version__ = "0.1.0"
