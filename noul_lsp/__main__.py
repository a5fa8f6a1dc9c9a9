"""`python -m noul_lsp` starts the language server on stdio (what editors and pytest-lsp run);
`python -m noul_lsp find ...` and the other `noul` subcommands run the command line."""

import sys

from noul_lsp.cli import COMMANDS
from noul_lsp.cli import main as cli_main

if len(sys.argv) > 1 and sys.argv[1] in COMMANDS:
    raise SystemExit(cli_main(sys.argv[1:]))

from noul_lsp.lsp.server import main  # noqa: E402  (pygls is only imported when the server runs)

raise SystemExit(main())
