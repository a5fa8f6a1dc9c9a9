"""`python -m noul_lsp` runs the `noul` command line."""

from noul_lsp.cli import main

raise SystemExit(main())
