"""Chunk boundaries per language on the fixture files, with a small size budget so that classes are
split into their methods; notebooks located on their cells' source lines. Every grammar the index
chunks with is exercised here, through the installed grammar wheel."""

import json
import re
from pathlib import Path

import numpy as np
import pytest

from noul_lsp.chunking import FileChunker
from noul_lsp.config import IndexSettings
from noul_lsp.retrieval.result import preview
from noul_lsp.retrieval.roles import file_role

FIXTURE = Path(__file__).parent / "fixtures" / "polyglot"
SMALL = IndexSettings(chunk_max_chars=400)

EXPECTED = {
    "src/net/retry.py": [
        ("", "module", 1, 4), ("RetryPolicy", "class", 7, 8), ("RetryPolicy.__init__", "method", 10, 13),
        ("RetryPolicy.delay_for", "method", 15, 18), ("upload_with_retry", "function", 21, 30)],
    "src/store/cookies.py": [
        ("", "module", 1, 4), ("CookieJar", "class", 7, 8), ("CookieJar.__init__", "method", 10, 11),
        ("CookieJar.set_from_response", "method", 13, 16), ("CookieJar.header_for_request", "method", 18, 19),
        ("CookieJar.save", "method", 21, 23), ("CookieJar.load", "method", 25, 29)],
    "web/src/rateLimiter.ts": [
        ("", "module", 1, 1), ("BucketOptions", "interface", 3, 6), ("TokenBucket", "class", 8, 10),
        ("TokenBucket.constructor", "method", 12, 15), ("TokenBucket.refill", "method", 17, 21),
        ("TokenBucket.tryRemoveToken", "method", 23, 30), ("throttleMiddleware", "function", 33, 38)],
    "web/src/SearchBox.tsx": [("", "module", 1, 1), ("SearchBox", "function", 3, 10)],
    "web/src/debounce.js": [
        ("", "module", 1, 1), ("debounce", "function", 3, 9), ("logKeystrokes", "function", 11, 13),
        ("", "module", 15, 15)],
    "services/export/csv.go": [
        ("", "module", 1, 7), ("Invoice", "type", 9, 14), ("WriteInvoicesCSV", "function", 16, 30),
        ("Invoice.Sum", "method", 32, 39)],  # a Go method is its receiver's
    "crates/auth/src/token.rs": [
        ("", "module", 1, 3), ("Claims", "struct", 5, 8), ("Verifier", "trait", 10, 12),
        ("HmacVerifier", "struct", 14, 16), ("HmacVerifier (impl)", "impl", 18, 18), ("HmacVerifier.new", "method", 19, 21),
        ("HmacVerifier.check_expiry", "method", 23, 30), ("Verifier for HmacVerifier (impl)", "impl", 33, 33),
        ("Verifier for HmacVerifier.verify", "method", 34, 42)],
    "java/com/example/imaging/Thumbnailer.java": [
        ("", "module", 1, 3), ("Thumbnailer", "class", 5, 7), ("Thumbnailer.constructor", "constructor", 9, 11),
        ("Thumbnailer.scaleDown", "method", 13, 18), ("Thumbnailer.scaleDown", "method", 19, 23)],
    "native/config.c": [
        ("", "module", 1, 2), ("setting", "struct", 4, 7), ("parse_ini_line", "function", 9, 20),
        ("parse_ini_line", "function", 21, 24)],
    "native/lru.cpp": [
        ("", "module", 1, 5), ("cache.LruCache", "class", 7, 9),
        ("cache.LruCache.LruCache", "method", 10, 10), ("cache.LruCache.get", "method", 12, 18),
        ("cache.LruCache.put", "method", 20, 27), ("cache.LruCache", "class", 29, 33)],
    "scripts/markdown.rb": [("Markup", "module", 1, 2), ("Markup.Renderer", "class", 3, 20)],
}

MORE = Path(__file__).parent / "fixtures" / "more_languages"
#: the grammars whose definitions are not plain node types: Elixir's calls (`def`, `defp` clauses joined,
#: `@doc` and `@spec` kept with their function), Lua's assigned functions, Zig's struct constants and tests,
#: Haskell's signature with its equations
MORE_EXPECTED = {
    "bash/tmux.plugin.sh": [
        ("", "module", 1, 2), ("_omb_plugin_tmux_session_exists", "function", 4, 6),
        ("_omb_plugin_tmux_autoattach", "function", 8, 15), ("", "module", 17, 17)],
    "csharp/CookieJar.cs": [
        ("", "module", 1, 4), ("CookieJar", "class", 5, 8), ("CookieJar.constructor", "constructor", 10, 10),
        ("CookieJar.SetFromResponse", "method", 12, 18), ("CookieJar.HeaderForRequest", "method", 20, 23),
        ("ICookieStore", "interface", 26, 26)],
    "elixir/decoder.ex": [
        ("Acme.JSON.Decoder", "module", 1, 4), ("Acme.JSON.Decoder.decode", "method", 6, 10),
        ("Acme.JSON.Decoder.parse_value", "method", 12, 19), ("Acme.JSON.Encoder", "protocol", 22, 24)],
    "haskell/Runner.hs": [
        ("", "module", 1, 8), ("Summary", "data", 9, 12), ("runSpecs", "function", 14, 20),
        ("Reporter", "class", 22, 23), ("Reporter for ()", "instance", 25, 26)],
    "kotlin/RetryPolicy.kt": [
        ("", "module", 1, 3), ("RetryPolicy", "class", 5, 6), ("RetryPolicy.delayFor", "method", 7, 10),
        ("RetryPolicy.shouldRetry", "method", 12, 13), ("RetryPolicy.companion", "companion", 15, 17),
        ("uploadWithRetry", "function", 20, 30)],
    "lua/statusline.lua": [
        ("M.render_section", "function", 3, 10), ("mode_name", "function", 12, 14), ("M.refresh", "function", 16, 19),
        ("M:setup", "function", 21, 24)],
    "php/MountManager.php": [
        ("MountManager", "class", 5, 10), ("MountManager.mount", "method", 12, 15),
        ("MountManager.read", "method", 17, 24), ("mount_all", "function", 27, 32)],
    "scala/OptionParser.scala": [
        ("Read", "trait", 3, 6), ("Read", "object", 8, 11), ("OptionParser", "class", 13, 25),
        ("Config", "class", 27, 27)],
    "swift/ImageCache.swift": [
        ("", "module", 1, 1), ("ImageCache", "class", 3, 7), ("ImageCache.init", "init", 9, 11),
        ("ImageCache.image", "method", 13, 18), ("ImageCache.store", "method", 20, 26),
        ("CacheSerializer", "protocol", 29, 31)],
    "zig/router.zig": [
        ("", "module", 1, 1), ("Router", "struct", 3, 14), ("", "module", 16, 16), ("notFound", "function", 18, 20),
        ("an unknown path has no handler", "test", 22, 25)],
}


@pytest.mark.parametrize("path", sorted(EXPECTED))
def test_definition_boundaries(path):
    chunks = FileChunker(SMALL).chunk(path, (FIXTURE / path).read_text())
    assert [(c.symbol, c.kind, c.start_line, c.end_line) for c in chunks] == EXPECTED[path]


@pytest.mark.parametrize("path", sorted(EXPECTED))
def test_chunk_text_is_exactly_its_lines(path):
    lines = (FIXTURE / path).read_text().split("\n")
    for chunk in FileChunker(SMALL).chunk(path, (FIXTURE / path).read_text()):
        assert chunk.text == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])


@pytest.mark.parametrize("path", sorted(MORE_EXPECTED))
def test_definition_boundaries_of_the_other_grammars(path):
    text = (MORE / path).read_text()
    chunker = FileChunker(SMALL)
    chunks = chunker.chunk(path, text)
    assert chunker.warnings == []  # the grammar loaded: no fallback to line windows
    assert [(c.symbol, c.kind, c.start_line, c.end_line) for c in chunks] == MORE_EXPECTED[path]
    lines = text.split("\n")
    assert all(c.text == "\n".join(lines[c.start_line - 1 : c.end_line]) for c in chunks)
    assert {c.language for c in chunks} == {path.split("/")[0]}


def test_a_script_with_no_extension_is_chunked_by_its_shebang():
    text = "#!/usr/bin/env bash\n# Runs one test file.\n\nbats_run_file() {\n  source \"$1\"\n}\n"
    chunks = FileChunker(IndexSettings()).chunk("libexec/bats-core/bats-exec-file", text)
    assert [(c.symbol, c.kind, c.language) for c in chunks] == [("", "module", "bash"),
                                                              ("bats_run_file", "function", "bash")]
    plain = FileChunker(IndexSettings()).chunk("LICENSE", "#!/not/a/script\nMIT licence text\n")
    assert [c.language for c in plain] == ["text"]


def test_a_magic_comment_alone_is_no_chunk_but_a_comment_that_says_something_is():
    """`# frozen_string_literal: true` heads nearly every Ruby file: as a chunk of its own it would be a
    copy in every file (the ranking stage's duplicate share) and a cosine to average over."""
    ruby = "# frozen_string_literal: true\n\nmodule Grape\n  class SameAsValidator\n    def check(a, b)\n" \
           "      a == b\n    end\n  end\nend\n"
    chunks = FileChunker(IndexSettings()).chunk("lib/grape/same_as.rb", ruby)
    assert [(c.symbol, c.start_line) for c in chunks] == [("Grape.SameAsValidator", 3)]  # (the namespace it is in)
    python = "# -*- coding: utf-8 -*-\n#!/usr/bin/env python\n\n\ndef f():\n    return 1\n"
    assert [c.symbol for c in FileChunker(IndexSettings()).chunk("a.py", python)] == ["f"]
    said = "# encoding: utf-8\n# Parses the retry settings of a job.\n\nmodule Jobs\n  X = 1\nend\n"
    assert FileChunker(IndexSettings()).chunk("lib/jobs.rb", said)[0].text.startswith("# encoding: utf-8\n# Parses")


def test_members_carry_their_container_signature_where_the_grammar_names_no_body():
    """Kotlin's class body and Elixir's `do` block are no `body` field: the header stops before them."""
    headers = {}
    for path in ("kotlin/RetryPolicy.kt", "elixir/decoder.ex"):
        headers.update({c.symbol: c.header for c in FileChunker(SMALL).chunk(path, (MORE / path).read_text())})
    assert headers["RetryPolicy.delayFor"] == "class RetryPolicy(private val baseMillis: Long, private val maxAttempts: Int)"
    assert headers["Acme.JSON.Decoder.parse_value"] == "defmodule Acme.JSON.Decoder"


def test_members_carry_their_container_signature_and_split_parts_are_numbered():
    chunks = FileChunker(SMALL).chunk("java/com/example/imaging/Thumbnailer.java",
                                      (FIXTURE / "java/com/example/imaging/Thumbnailer.java").read_text())
    scale = [c for c in chunks if c.symbol == "Thumbnailer.scaleDown"]
    assert scale[0].header.startswith("public class Thumbnailer\npublic BufferedImage scaleDown(BufferedImage source)")
    assert scale[0].header.endswith("(part 1 of 2)") and scale[1].header.endswith("(part 2 of 2)")
    assert scale[0].embed_text.startswith(scale[0].header + "\n")


def test_typescript_overloads_belong_to_their_implementation():
    """The overload signatures and their doc comment above an implementation of the same name are its first
    lines, at a file's level and in a class cut into its members; a signature with none stays apart."""
    text = ("import { x } from 'y'\n\n/** Picks a thing. */\nexport function pick(a: string): string\n"
            "export function pick(a: number): number\nexport function pick(a: any): any {\n  return a\n}\n\n"
            "function solo(a: string): string;\n\nexport class Client {\n  constructor() { this.x = 1 }\n"
            "  /** @deprecated use fetchY */\n  fetchX(a: string): Promise<void>\n\n  fetchX(a: number): Promise<void>\n"
            "  fetchX(a: any) {\n    return fetch(a)\n  }\n  plain() { return 1 }\n}\n")
    chunks = FileChunker(IndexSettings(chunk_max_chars=120)).chunk("src/pick.ts", text)
    def lines_of(symbol):
        return sorted(row for c in chunks if c.symbol == symbol for row in range(c.start_line, c.end_line + 1))
    assert lines_of("pick") == list(range(3, 9)) and lines_of("Client.fetchX") == list(range(14, 21))
    assert not any(c.symbol == "Client" and c.start_line >= 15 for c in chunks)  # no leftover lines of the class
    assert any(c.start_line <= 10 <= c.end_line and c.symbol != "pick" for c in chunks)  # `solo` has no body below
    # a decorator between the signatures and the implementation (Angular's, NestJS's) is the method's too
    decorated = ("export class Api {\n  constructor() { this.x = 1 }\n  /** Fetches one. */\n  get(id: string): Item\n"
                 "  @Get(':id')\n  get(id: any) {\n    return this.items.find((item) => item.id === id)\n  }\n"
                 "  plain() { return 1 }\n}\n")
    chunks = FileChunker(IndexSettings(chunk_max_chars=120)).chunk("src/api.ts", decorated)
    assert sorted(row for c in chunks if c.symbol == "Api.get" for row in range(c.start_line, c.end_line + 1)) \
        == list(range(3, 9))


def test_an_anonymous_default_export_is_named_by_its_module():
    """A Next.js page or route handler (`export default () => ...`) and a dayjs plugin had no name at all."""
    def named(path, text):
        return [(c.symbol, c.kind) for c in FileChunker(IndexSettings()).chunk(path, text) if c.symbol]
    assert named("pages/about.tsx", "export default () => {\n  return <div>About</div>\n}\n") == [("about", "function")]
    assert named("pages/api/projects.ts", "export default async function (req, res) {\n  res.json([])\n}\n") \
        == [("projects", "function")]
    assert named("src/plugin/advancedFormat/index.js", "export default (o, c) => {\n  c.prototype.format = 1\n}\n") \
        == [("advancedFormat", "function")]
    assert named("src/config.ts", "export default { retries: 3 }\n") == []  # a value, not code: no definition


def test_a_large_arrow_functions_parts_carry_its_head_not_its_first_statements():
    body = "".join(f"  const step{i} = compute{i}(props)\n" for i in range(40))
    chunks = FileChunker(SMALL).chunk("src/Devtools.tsx", f"export const ContentView = (props: Props) => {{\n{body}}}\n")
    assert len(chunks) > 1 and all(c.header.startswith("const ContentView = (props: Props) =>") for c in chunks)


def test_default_budget_keeps_small_classes_whole():
    chunks = FileChunker(IndexSettings()).chunk("src/store/cookies.py", (FIXTURE / "src/store/cookies.py").read_text())
    assert [(c.symbol, c.start_line, c.end_line) for c in chunks] == [("", 1, 4), ("CookieJar", 7, 29)]
    # its methods are not chunks of their own, but the chunk lists them: the symbol table knows them
    assert chunks[1].names == ("CookieJar.__init__", "CookieJar.set_from_response", "CookieJar.header_for_request",
                               "CookieJar.save", "CookieJar.load")
    assert chunks[1].content_hash == chunks[1].__class__(*[getattr(chunks[1], f) for f in (
        "path", "start_line", "end_line", "text", "symbol", "language", "kind", "header")]).content_hash  # not embedded


def test_notebook_cells_land_on_their_source_lines_and_outputs_are_dropped():
    raw = (FIXTURE / "notebooks/sales.ipynb").read_text()
    chunks = FileChunker(IndexSettings()).chunk("notebooks/sales.ipynb", raw)
    lines = raw.split("\n")
    # a code cell is cut by the Python grammar: its function is a definition, found by its name as in a .py
    # (a cell's lines with no name of their own are named by the section above them)
    assert [(c.symbol, c.kind) for c in chunks] == [
        ("Sales analysis", "markdown-cell"), ("Sales analysis (cell 2)", "code-cell"),
        ("monthly_revenue_median", "function"), ("Sales analysis (cell 3)", "code-cell")]
    imports, function = chunks[1], chunks[2]
    assert json.loads(lines[imports.start_line - 1].strip().rstrip(",")) == "import statistics\n"
    assert function.text.startswith("def monthly_revenue_median(rows):")
    assert json.loads(lines[function.start_line - 1].strip().rstrip(",")).startswith("def monthly_revenue_median")
    assert json.loads(lines[function.end_line - 1].strip().rstrip(",")).startswith("    return statistics.median")
    assert all("OUTPUT_SHOULD_NOT_BE_INDEXED" not in c.text for c in chunks)


def test_broken_notebook_json_falls_back_to_lines():
    chunks = FileChunker(IndexSettings()).chunk("bad.ipynb", '{"cells": [ not json')
    assert len(chunks) == 1 and chunks[0].language == "json"


def test_markdown_windows_take_their_heading():
    text = "# Top\n\n" + "\n".join(f"line {i}" for i in range(60)) + "\n## Later\n" + "\n".join(f"more {i}" for i in range(60))
    chunks = FileChunker(IndexSettings(window_lines=40, window_overlap=8)).chunk("guide.md", text)
    assert chunks[0].symbol == "Top" and chunks[0].start_line == 1
    assert chunks[1].start_line == chunks[0].end_line - 7  # 8 lines of overlap
    # a window that long lines cut short overlaps the next by a quarter of itself at most: a README's table of
    # long rows went on a line at a time, and two windows whose blank first line was trimmed were the same
    table = "# Inputs\n\n" + "\n".join(f"| `input_{i}` | {'a long description of the input ' * 8} | `null` |"
                                       for i in range(60)) + "\n"
    rows = [(c.start_line, c.end_line) for c in FileChunker(IndexSettings()).chunk("README.md", table)]
    assert len(rows) == len(set(rows)) and len(rows) < 35
    assert all(b[0] > a[0] + (a[1] - a[0]) // 2 for a, b in zip(rows, rows[1:], strict=False))
    assert chunks[-1].symbol == "Later"
    # a page's front matter titles its first lines (TanStack's 495 pages: `---` / `id: ...` / `title: ...`)
    page = "---\nid: window-focus-refetching\ntitle: 'Window Focus Refetching'\n---\n\nIf a user leaves the app...\n"
    assert [c.symbol for c in FileChunker(IndexSettings()).chunk("docs/guides/focus.md", page)] == ["Window Focus Refetching"]
    template = "---\nname: Feature request\ntitle: ''\nlabels: enhancement\n---\n\n**Is your feature request related**\n"
    assert [c.symbol for c in FileChunker(IndexSettings()).chunk(".github/ISSUE_TEMPLATE/feature.md", template)] == [""]


def test_page_windows_name_their_section_path():
    """A window's header is the path of sections down to its heading: a changelog's `### Fixed` is found by the
    version it is under (typer's and mkdocs' release notes were windows titled "Internal", "Fixed"); a heading
    shown in a code fence is no section; reStructuredText's titles (Sphinx's pages) count as Markdown's do."""
    notes = ("# Release Notes\n\n## 0.27.1\n\n### Fixes\n\n* Fix `serve --open`.\n\n```markdown\n"
             "## Heading producing an anchor\n```\n\n* Fix the reload.\n\n### Internal\n\n* Refactor.\n")
    windows = FileChunker(IndexSettings(window_lines=4, window_overlap=1)).chunk("docs/release-notes.md", notes)
    assert [(c.start_line, c.symbol, c.header) for c in windows] == [(1, "Release Notes", "Release Notes")] + [
        (row, "Fixes", "Release Notes › 0.27.1 › Fixes") for row in (5, 7, 10, 13)] + [
        (17, "Internal", "Release Notes › 0.27.1 › Internal")]
    # the front matter's title and a `# Title` that repeats it are one; a setext heading is a heading
    page = "---\ntitle: Password Prompt\n---\n\n# Password prompt\n\nAsk twice.\n\nConfirmation\n------------\n\nText.\n"
    assert [c.header for c in FileChunker(IndexSettings(window_lines=3, window_overlap=0)).chunk("docs/pw.md", page)
            ][-1] == "Password Prompt › Confirmation"
    rst = ("==========\nQuickstart\n==========\n\nMake a Request\n--------------\n\nText::\n\n    code\n    ====\n\n"
           "Parameters\n^^^^^^^^^^\n\nMore.\n\nCookies\n-------\n\nText again.\n")
    sections = FileChunker(IndexSettings(window_lines=4, window_overlap=0)).chunk("docs/quickstart.rst", rst)
    assert [(c.start_line, c.symbol, c.header) for c in sections] == [
        (1, "", ""), (5, "Make a Request", "Quickstart › Make a Request"),
        (10, "Make a Request", "Quickstart › Make a Request"),  # an indented `====` is a literal block's
        (13, "Parameters", "Quickstart › Make a Request › Parameters"), (18, "Cookies", "Quickstart › Cookies"),
        (21, "Cookies", "Quickstart › Cookies")]


def test_invalid_utf8_and_garbage_never_crash():
    chunker = FileChunker(IndexSettings())
    for path in ("a.py", "a.ts", "a.go", "a.rs", "a.c", "a.rb", "a.txt", "a.kt", "a.cs", "a.swift", "a.php",
                 "a.scala", "a.lua", "a.ex", "a.hs", "a.zig", "a.sh"):
        chunks = chunker.chunk(path, "def \ufffd(:\n  {{{ ]] \x00\n" * 50)
        assert chunks and all(c.start_line <= c.end_line for c in chunks)


def test_half_written_definitions_of_the_other_grammars_never_crash():
    """What the definition readers meet while a file is being typed: a `defimpl` with no arguments, a
    Lua assignment with no name, a Zig constant with no value, a Haskell signature with no type."""
    chunker = FileChunker(IndexSettings())
    for path, text in [("a.ex", "defimpl do end"), ("a.ex", "defimpl"), ("a.ex", "defmodule do\n def x\nend"),
                       ("a.ex", "def (x) when do"), ("a.lua", "M. = function"), ("a.lua", "local = function() end"),
                       ("a.zig", "const = struct {"), ("a.zig", "test {"), ("a.hs", "x :: \nx ="),
                       ("a.kt", "class {"), ("a.swift", "extension {"), ("a.php", "<?php class {")]:
        lines = text.split("\n")
        for chunk in chunker.chunk(path, text):
            assert chunk.text == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])


def test_a_definition_reader_that_fails_on_a_file_leaves_its_lines_findable(monkeypatch):
    import dataclasses

    import noul_lsp.chunking.languages as languages

    def broken(node):
        raise AttributeError("a node this reader did not expect")

    monkeypatch.setitem(languages.LANGUAGES, "elixir", dataclasses.replace(languages.LANGUAGES["elixir"],
                                                                           named_definition=broken))
    chunker = FileChunker(IndexSettings())
    text = (MORE / "elixir/decoder.ex").read_text()
    chunks = chunker.chunk("lib/decoder.ex", text)
    assert chunks and {c.kind for c in chunks} == {"text"} and "def decode(text)" in chunks[0].text
    assert chunker.warnings == ["lib/decoder.ex: elixir definitions unreadable (AttributeError: a node this "
                                "reader did not expect); cut into line windows"]



def test_a_class_kept_whole_but_cut_by_its_doc_comment_lists_its_methods_per_window():
    """The size test of a definition leaves out the comment above it; with the comment the chunk is cut
    into windows all the same, and each must still list the methods that start in it."""
    comment = "\n".join(["// a comment line that is rather long to push this class over the size limit of a chunk ok"] * 8)
    body = "\n".join(f"  method{i}(a, b) {{ return a + b + {i} * 1000000 + 'padding padding padding padding'; }}"
                     for i in range(20))
    chunks = FileChunker(IndexSettings()).chunk("big.js", f"{comment}\nclass Big {{\n{body}\n}}\n")
    assert len(chunks) > 1 and all(c.symbol == "Big" for c in chunks)
    listed = [name for c in chunks for name in c.names]
    assert listed == [f"Big.method{i}" for i in range(20)]


def test_a_long_line_is_cut_into_pieces_and_definitions_sharing_it_are_one():
    """A bundle or minified script not named *.min.js: thousands of definitions on one line. A chunk per
    definition held the whole line (quadratic: an 860 KB line held up a workspace's first index for
    minutes). The definitions sharing the line are one, and the line is cut into overlapping pieces."""
    from noul_lsp.chunking.text import PIECE_OVERLAP

    settings = IndexSettings()
    line = "function f(a){return a+1};" * 33_000  # ~860 KB
    chunks = FileChunker(settings).chunk("static/js/app.bundle.js", "// bundle\n" + line + "\nexport default f;\n")
    pieces = [c for c in chunks if c.start_line == c.end_line == 2]
    assert len(pieces) == -(-(len(line) - PIECE_OVERLAP) // (settings.chunk_max_chars - PIECE_OVERLAP))
    assert all(len(c.text) <= settings.chunk_max_chars for c in chunks)
    assert pieces[0].text + "".join(c.text[PIECE_OVERLAP:] for c in pieces[1:]) == line
    assert {c.symbol for c in pieces} == {"f"} and re.fullmatch(r"f \(part \d+ of \d+\)", pieces[1].header)


def test_one_long_literal_leaves_the_rest_of_a_file_as_it_was():
    """An inline SVG or a long SQL string in a source file: its line is cut into pieces, and the file's
    definitions stay definitions."""
    source = 'import os\n\nLOGO = "' + "a" * 8000 + '"\n\n\ndef find_user(name):\n    return db.get(name)\n'
    chunks = FileChunker(IndexSettings()).chunk("app/users.py", source)
    assert [(c.symbol, c.start_line, c.end_line) for c in chunks][-1] == ("find_user", 6, 7)
    assert {(c.start_line, c.end_line) for c in chunks if len(c.text) > 1000} == {(3, 3)}


def test_a_notebooks_image_output_is_neither_read_nor_cut():
    """A notebook keeps an image output as one base64 line: the notebook chunker reads the cells' sources
    only, and a long line elsewhere must not turn the notebook into windows of its JSON."""
    notebook = {"cells": [{"cell_type": "code", "source": ["import matplotlib\n", "plot(x)\n"],
                           "outputs": [{"data": {"image/png": "A" * 20_000}}]}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    chunks = FileChunker(IndexSettings()).chunk("analysis.ipynb", json.dumps(notebook, indent=1))
    assert [c.symbol for c in chunks] == ["cell 1"] and "AAAA" not in chunks[0].text
    # normal code keeps its definitions, as before
    assert FileChunker(IndexSettings()).chunk("app.js", "function f(a){return a+1};" * 20)[0].symbol == "f"


def test_a_rust_items_attributes_belong_to_it():
    """`#[derive(...)]` and `#[cfg(...)]` above an item are part of it, as its doc comment is: apart, the best
    range of a cfg-gated function was its attribute line alone. A crate's inner attributes stay with the
    crate's own lines."""
    source = ('//! crate docs\n#![allow(dead_code)]\n\n/// A point.\n#[derive(Debug, Clone)]\n'
              'pub struct Point { x: f64, y: f64 }\n\n#[cfg(feature = "nightly")]\nmod nightly;\n')
    chunks = FileChunker(IndexSettings()).chunk("src/lib.rs", source)
    # (a `mod nightly;` declares a file's module: it defines nothing here, its lines are the crate's)
    assert [(c.symbol, c.start_line, c.end_line) for c in chunks] == [("", 1, 2), ("Point", 4, 6), ("", 8, 9)]


def test_a_notebook_cell_saved_as_one_string_is_located_on_its_line():
    """Some tools save a cell's source as one string: its definitions landed on the JSON lines after it
    (`"execution_count"`, another cell)."""
    notebook = {"cells": [{"cell_type": "code", "source": "import os\n\ndef expire_sessions(db):\n    return db\n",
                           "metadata": {}, "outputs": [], "execution_count": 1},
                          {"cell_type": "markdown", "source": ["# Notes\n", "more\n"], "metadata": {}}],
                "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    raw = json.dumps(notebook, indent=1)
    lines = raw.split("\n")
    chunks = FileChunker(IndexSettings()).chunk("n.ipynb", raw)
    source_line = next(number for number, line in enumerate(lines, 1) if '"source": "import os' in line)
    definition = next(chunk for chunk in chunks if chunk.symbol == "expire_sessions")
    assert definition.start_line == definition.end_line == source_line
    notes = next(chunk for chunk in chunks if chunk.kind == "markdown-cell")
    assert json.loads(lines[notes.start_line - 1].strip().rstrip(",")) == "# Notes\n"


def test_namespaces_enum_states_and_private_names_are_named_as_people_type_them():
    """grape's files (`module Grape; module Validations; class SameAsValidator`) were each one chunk named
    `Grape`; jsoup's tokenizer states (`enum TokeniserState { Data { void read(...) } }`) were 70 chunks all
    named `TokeniserState.read`; ky's `#parseJson` was defined under a name no query produces."""
    chunker = FileChunker(IndexSettings())
    ruby = ("module Grape\n  module Validations\n    # Checks that two fields are equal.\n"
            "    class SameAsValidator < Base\n      def validate_param!(a, b)\n        a == b\n      end\n"
            "    end\n  end\nend\n")
    [whole] = chunker.chunk("lib/grape/validations/same_as_validator.rb", ruby)
    assert (whole.symbol, whole.kind) == ("Grape.Validations.SameAsValidator", "class")
    assert "Grape.Validations.SameAsValidator.validate_param!" in whole.names
    # a module with more than the one class it wraps keeps its own name
    more = "module Jobs\n  LIMIT = 3\n  TIMEOUT = 5\n  RETRIES = 2\n  BACKOFF = 1.5\n  JITTER = 0.1\n" \
           "  class Runner\n    def go\n    end\n  end\nend\n"
    assert [c.symbol for c in chunker.chunk("lib/jobs.rb", more)] == ["Jobs"]
    body = "\n".join(f"            x{n} = reader.consume({n});" for n in range(60))
    java = ("enum TokeniserState {\n    Data {\n        void read(Tokeniser t, CharacterReader r) {\n" + body +
            "\n        }\n    },\n    TagOpen {\n        void read(Tokeniser t, CharacterReader r) {\n" + body +
            "\n        }\n    },\n    Plain;\n    abstract void read(Tokeniser t, CharacterReader r);\n}\n")
    symbols = {c.symbol for c in chunker.chunk("TokeniserState.java", java)}
    # each state's method under the state's name (a plain constant, `Plain;`, stays part of its enum)
    assert symbols == {"TokeniserState", "TokeniserState.Data.read", "TokeniserState.TagOpen.read",
                       "TokeniserState.read"}


def test_a_private_name_is_defined_as_people_type_it(tmp_path):
    from noul_lsp.retrieval.symbols import build_symbol_table

    table = build_symbol_table(symbols=["Ky.#parseJson", "Ky.retry"], files=["source/core/Ky.ts"],
                               row_file=np.zeros(2, dtype=np.int32), codes=np.arange(2, dtype=np.uint64),
                               file_bm25=None)
    assert "parsejson" in table.definitions and "#parsejson" not in table.definitions


def test_a_helper_inside_a_function_too_large_for_one_chunk_is_defined_in_its_window():
    """got's `asPromise` (five windows) defines `makeRequest`: no chunk held that name."""
    body = "\n".join(f"    x{n} = compute({n})" for n in range(150))
    text = f"def outer(a):\n{body}\n    def helper_inside(b):\n        return b * 2\n    return helper_inside(a)\n"
    windows = FileChunker(IndexSettings()).chunk("m.py", text)
    assert [(c.symbol, c.names) for c in windows] == [("outer", ()), ("outer", ("outer.helper_inside",))]
    assert "def helper_inside" in windows[1].text


def test_a_test_frameworks_titled_blocks_are_tests_named_by_their_titles():
    """ky's, got's and grape's tests were 1,800-character windows cut between tests, 37-42% of their chunks
    with no symbol, and an option set inside a test (`hooks: {parseJson(text) {...}}`) defined `parseJson` 21
    times there, never in the source. A titled `test`/`it`/`describe` block is a test now, named by its title
    in quotes, which keeps the title and what is nested in it out of the symbol table."""
    from noul_lsp.retrieval.symbols import build_symbol_table

    chunker = FileChunker(IndexSettings())
    cases = "\n".join(f"\tit('case {n}', async () => {{\n\t\tawait check({n}, {{retries: {n}}});\n\t\texpect(value).toBe({n});\n\t}});"
                      for n in range(40))
    ts = ("import test from 'ava';\n\ntest('hooks can be async', async t => {\n\tconst ky = create({hooks: {\n"
          "\t\tparseJson(text) {\n\t\t\treturn JSON.parse(text);\n\t\t},\n\t}});\n\tt.true(await ky.get('x'));\n});\n\n"
          f"describe.only('retry', () => {{\n{cases}\n}});\n\nconst pattern = /a/;\npattern.test('abc');\n")
    chunks = chunker.chunk("test/hooks.ts", ts)
    by_symbol = {c.symbol: c for c in chunks}
    assert by_symbol['test "hooks can be async"'].kind == "test"
    assert by_symbol['test "hooks can be async"'].names == ('test "hooks can be async".parseJson',)
    # a group too large for one chunk: each test its own chunk under the group's line, named within it
    case = by_symbol['describe "retry".it "case 7"']
    assert case.kind == "test" and case.header == "describe.only('retry', () =>" and "check(7," in case.text
    assert not any("pattern.test" in c.symbol for c in chunks)  # a regular expression's `.test` is a call
    # node:test's floating promises marked as meant (`void describe(...)`) are titled tests too (juice-shop's
    # were chunks of a `module`)
    voided = chunker.chunk("test/insecurity.test.ts", "import { describe, it } from 'node:test'\n\n"
                           "void describe('hmac', () => {\n  void it('returns a digest', () => {\n"
                           "    assert.equal(hmac('x').length, 64)\n  })\n})\n")
    assert 'describe "hmac"' in {c.symbol for c in voided}
    stepped = chunker.chunk("e2e/login.spec.ts", "test('signs in', async ({ page }) => {\n"
                            "  await test.step('opens the form', async () => {\n    await page.goto('/login')\n  })\n})\n")
    assert {c.symbol for c in stepped} == {'test "signs in"'}  # a step awaited inside its test, not beside it
    table = build_symbol_table(symbols=["\n".join((c.symbol, *c.names)) for c in chunks], files=["test/hooks.ts"],
                               row_file=np.zeros(len(chunks), dtype=np.int32),
                               codes=np.arange(len(chunks), dtype=np.uint64), file_bm25=None)
    assert "parsejson" not in table.definitions and not any(" " in key for key in table.definitions)
    ruby = ("RSpec.describe Grape::Endpoint do\n  it 'answers 404 when nothing matches' do\n    get '/none'\n"
            "    expect(last_response.status).to eq 404\n  end\nend\n")
    [spec] = chunker.chunk("spec/grape/endpoint_spec.rb", ruby)
    assert (spec.symbol, spec.kind) == ('describe "Grape::Endpoint"', "describe")
    assert spec.names == ('describe "Grape::Endpoint".it "answers 404 when nothing matches"',)
    lua = 'describe("sorter", function()\n  it("keeps the best", function()\n    assert(true)\n  end)\nend)\n'
    assert [c.symbol for c in chunker.chunk("lua/tests/sorter_spec.lua", lua)] == ['describe "sorter"']


@pytest.mark.parametrize(("path", "head", "kept"), [
    ("src/Polly/CircuitBreaker/CircuitBreakerConstants.cs",
     "// Licensed to the .NET Foundation under one or more agreements.\n\nnamespace Polly.CircuitBreaker;\n", ""),
    ("src/Filesystem.php", "<?php\n\ndeclare(strict_types=1);\n\nnamespace League\\Flysystem;\n", ""),
    ("src/main/kotlin/TypeSpec.kt", "/*\n * Copyright (C) 2015 Square, Inc.\n *\n * Licensed under the Apache License, "
     "Version 2.0\n */\npackage com.squareup.kotlinpoet\n\nimport java.io.Closeable\n", "package com.squareup.kotlinpoet"),
    ("cJSON.h", "/*\n  Copyright (c) 2009-2017 Dave Gamble and cJSON contributors\n*/\n\n#ifndef cJSON__h\n#define cJSON__h\n"
     "\n#include <stddef.h>\n", "#ifndef cJSON__h"),
    ("lib/router.js", "'use strict'\n", ""),
])
def test_licences_and_directives_that_name_nothing_are_no_chunk(path, head, kept):
    """Polly's 386 chunks of only `namespace X;`, flysystem's `<?php declare(strict_types=1); namespace X;`
    head, kotlinpoet's licence opening every file: each made its file look half copied to the ranker and
    was a chunk nobody searches. Imports stay: they say what a file works with."""
    code = {"cs": "public static class Constants\n{\n    public const int Threshold = 5;\n}\n",
            "php": "function mount(string $name): void\n{\n    echo $name;\n}\n",
            "js": "function route(path) {\n  return path;\n}\n", "kt": "class TypeSpec {\n  fun build() = 1\n}\n",
            "h": "typedef struct cJSON {\n    int type;\n} cJSON;\n"}[path.rsplit(".", 1)[1]]
    chunks = FileChunker(IndexSettings()).chunk(path, head + "\n" + code)
    heads = [c for c in chunks if c.start_line <= head.count("\n")]
    if kept:
        assert [c.text.split("\n")[0] for c in heads] == [kept]  # the licence cut off, the imports kept
    else:
        assert heads == []
    prose = FileChunker(IndexSettings()).chunk(path, "// How the pieces fit together, for a reader new to them.\n\n"
                                                     + head + "\n" + code)
    assert prose[0].start_line == 1  # a comment that is no licence is kept with the lines below it


def test_swift_and_kotlin_types_are_of_the_kind_their_keyword_says():
    """Every Swift struct, enum, extension and actor, and every Kotlin interface and enum class, was `class`."""
    chunker = FileChunker(IndexSettings())
    swift = "struct Size { var width: Int }\nenum Mode { case fit }\nextension String { func trimmed() -> String { self } }\n"
    assert [(c.symbol, c.kind) for c in chunker.chunk("Sources/Types.swift", swift)] == [
        ("Size", "struct"), ("Mode", "enum"), ("String (extension)", "extension")]
    kotlin = "interface Naming { fun name(): String }\nenum class Mode { FIT }\nclass Spec\n"
    assert [(c.symbol, c.kind) for c in chunker.chunk("src/Types.kt", kotlin)] == [
        ("Naming", "interface"), ("Mode", "enum"), ("Spec", "class")]


def test_a_kotlin_nested_class_with_its_constructor_on_the_next_line_is_parsed():
    """kotlinpoet writes `public class Builder` and `internal constructor(` on two lines; tree-sitter-kotlin
    1.1.0 ended the nested class there, and TypeSpec.kt was 1,022 of its 1,060 lines in one error node: its
    Builder's methods were defined nowhere. The chunks keep the file's own lines."""
    kotlin = ("public class TypeSpec\nprivate constructor(\n  builder: Builder,\n) {\n"
              "  public fun toBuilder(): Builder = Builder(name)\n\n"
              "  public class Builder\n  internal constructor(\n    internal val name: String?,\n  ) {\n"
              "    public fun addFunction(funSpec: String): Builder = apply {\n      println(funSpec)\n    }\n"
              "  }\n}\n")
    chunker = FileChunker(IndexSettings(chunk_max_chars=120))
    chunks = chunker.chunk("src/TypeSpec.kt", kotlin)
    symbols = {c.symbol: c for c in chunks}
    assert {"TypeSpec.toBuilder", "TypeSpec.Builder.addFunction"} <= set(symbols)
    lines = kotlin.split("\n")
    for chunk in chunks:
        assert chunk.text == "\n".join(lines[chunk.start_line - 1 : chunk.end_line])
    assert symbols["TypeSpec.Builder.addFunction"].start_line == 11
    # the same with Windows line endings
    crlf = {c.symbol for c in chunker.chunk("src/TypeSpec.kt", kotlin.replace("\n", "\r\n"))}
    assert "TypeSpec.Builder.addFunction" in crlf


def test_tests_and_equations_of_bats_haskell_and_elixir():
    """What a chunk audit of oh-my-bash, pyenv, rbenv, hspec, jason and http.zig found (docs/benchmarks.md):
    bats tests were 40-line windows; ExUnit test titles were definitions beside the code they test (a Zig
    test's title stays one: it lives in the file it tests); Haskell's function types
    were nested definitions named `function`, an equation's `where` helpers were lost, and an instance was a
    definition of its class."""
    chunker = FileChunker(IndexSettings())
    bats = ('#!/usr/bin/env bats\n\nload test_helper\n\n@test "fails with invalid version" {\n  run rbenv-exec ruby -v\n'
            '  assert_failure "rbenv: version \\`2.0\' is not installed"\n}\n\n@test \'lists executables\' {\n  run ls\n}\n')
    assert [(c.symbol, c.kind, c.start_line, c.end_line) for c in chunker.chunk("test/exec.bats", bats)][1:] == [
        ('test "fails with invalid version"', "test", 5, 8), ('test "lists executables"', "test", 10, 12)]
    assert chunker.chunk("test/exec.bats", bats)[1].text.startswith('@test "fails')  # the file's own lines
    long_test = '@test "fails with invalid version" {\n' + "".join(f"  run cmd{i} --flag\n" for i in range(150)) + "}\n"
    windows = chunker.chunk("test/exec.bats", long_test)
    assert len(windows) > 1 and all(c.header.startswith('@test "fails with invalid version"') for c in windows)
    haskell = ("module M where\n\nfailWith :: Int -> (String -> IO a) -> IO a\nfailWith n k = do\n  x <- k (show n)\n"
               "  go x\n  where\n    go x = pure x\n\ninstance Example (a -> Result) where\n  evaluateExample e = e\n\n"
               "a `shouldYield` b = a == b\n")
    assert [(c.symbol, c.kind, c.names) for c in chunker.chunk("src/M.hs", haskell)] == [
        ("failWith", "function", ("failWith.go",)),  # `x <- k (show n)` defines nothing
        ("Example for (a -> Result)", "instance", ("Example for (a -> Result).evaluateExample",)),
        ("shouldYield", "function", ())]
    elixir = 'defmodule Jason.EncodeTest do\n  use ExUnit.Case\n\n  test "atom" do\n    assert 1 == 1\n  end\nend\n'
    assert [c.names for c in chunker.chunk("test/encode_test.exs", elixir)] == [('Jason.EncodeTest.test "atom"',)]


def test_hspec_and_tasty_tests_are_tests_named_by_their_titles():
    """hspec's `spec = do describe "x" $ do it "y" $ ...`: RunnerSpec.hs's 1,027-line `spec` was 20 windows
    headed `spec (part N of 20)`, no test named. A spec too large for one chunk is cut by its groups and
    tests, as a JavaScript `describe` is; tasty's `testGroup "x" [testCase "y" $ ..., testProperty "z" f]`
    the same; a test's title is quoted (it defines nothing)."""
    body = "".join(f"      x{i} <- run ({i} :: Int)\n      x{i} `shouldBe` {i}\n" for i in range(40))
    hspec = ('module RunnerSpec (spec) where\n\nspec :: Spec\nspec = do\n  describe "hspec" $ do\n'
             '    it "runs finalizers" $ do\n' + body + '\n    context "with --rerun" $ do\n'
             '      it "reuses the same seed" $\n        True `shouldBe` True\n')
    chunks = FileChunker(IndexSettings()).chunk("test/RunnerSpec.hs", hspec)
    tests = [(c.symbol, c.kind, c.start_line, c.names) for c in chunks if c.kind in ("test", "describe")]
    assert tests == [('spec.describe "hspec"', "describe", 5, ()),
                     ('spec.describe "hspec".it "runs finalizers"', "test", 6, ()),
                     ('spec.describe "hspec".context "with --rerun"', "describe", 88,
                      ('spec.describe "hspec".context "with --rerun".it "reuses the same seed"',))]
    assert chunks[-1].header == 'describe "hspec" $' and chunks[-1].text.startswith('    context "with --rerun"')
    assert not any("part" in c.header for c in chunks)
    # small enough for one chunk: kept whole, its tests listed in it
    small = "spec :: Spec\nspec = describe \"parse\" $ it \"reads a number\" $ parse \"1\" `shouldBe` Just 1\n"
    assert [(c.symbol, c.names) for c in FileChunker(IndexSettings()).chunk("test/ParseSpec.hs", small)] == [
        ("spec", ('spec.describe "parse"', 'spec.describe "parse".it "reads a number"'))]
    tasty = ('tests :: TestTree\ntests = testGroup "Properties"\n  [ testCase "encodes nulls" $ encode Null @?= "null"\n'
             '  , QC.testProperty "roundtrip" prop_roundtrip\n  ]\n')
    assert [c.names for c in FileChunker(IndexSettings()).chunk("tests/Properties.hs", tasty)] == [
        ('tests.testGroup "Properties"', 'tests.testGroup "Properties".testCase "encodes nulls"',
         'tests.testGroup "Properties".testProperty "roundtrip"')]
    # a function applied to a string is no test
    plain = 'greet :: IO ()\ngreet = putStrLn "hello" >> print (length "abc")\n'
    assert [c.names for c in FileChunker(IndexSettings()).chunk("src/Greet.hs", plain)] == [()]


def test_bash_whose_expansions_break_the_parse_is_read_again_without_them():
    """tree-sitter-bash 0.25.1 errs on some expansions and extglobs, and the error took the function in:
    oh-my-bash's `_svn` completion (1,421 rows) was windows with no name, `omb-prompt-colors.sh` one error."""
    chunker = FileChunker(IndexSettings())
    completion = ('_svn() {\n  local cur\n  case $prev in\n    @(<|>|>>|[12]>|[12]>>))\n      return 0;;\n  esac\n}\n\n'
                  '_svn_helper() {\n  echo "x"\n}\n')
    assert [(c.symbol, c.start_line, c.end_line) for c in chunker.chunk("completions/svn.completion.sh", completion)] \
        == [("_svn", 1, 7), ("_svn_helper", 9, 11)]
    colors = '_construct_sgr() {\n  local out=\n  out=${out:+$out;}1\n  echo "$out"\n}\n\n_color_prompt() {\n  echo p\n}\n'
    chunks = chunker.chunk("lib/omb-prompt-colors.sh", colors)
    assert [(c.symbol, c.start_line, c.end_line) for c in chunks] == [("_construct_sgr", 1, 5), ("_color_prompt", 7, 9)]
    assert "${out:+$out;}1" in chunks[0].text  # the file's own lines


def test_a_scala_method_ends_at_its_code_and_the_next_ones_doc_is_the_next_ones():
    """tree-sitter-scala's `def f =` body runs on to the next member's indentation: scopt's `programName` held
    `/** adds usage text. */` and the line of `def head`, which was `head`'s first line too."""
    scala = ("abstract class OParserBuilder[C] {\n  def programName(x: String): OParser[Unit, C] =\n"
             "    wrap(makeDef[Unit](OptionDefKind.ProgramName, \"\")).text(x)\n\n  /** adds usage text. */\n"
             "  def head(xs: String*): OParser[Unit, C] =\n    wrap(makeDef[Unit](OptionDefKind.Head, \"\"))\n}\n")
    chunks = FileChunker(IndexSettings(chunk_max_chars=150)).chunk("src/OParser.scala", scala)
    assert [(c.symbol, c.start_line, c.end_line) for c in chunks if "." in c.symbol] == [
        ("OParserBuilder.programName", 2, 3), ("OParserBuilder.head", 5, 7)]
    # a comment on the code's last line, or one a blank line above the next doc, stays with the code
    notes = "class A {\n  def f: Int =\n    1 // one\n    // still f\n\n  /** g's doc */\n  def g: Int = 2\n}\n"
    assert [(c.symbol, c.start_line, c.end_line) for c in FileChunker(IndexSettings(chunk_max_chars=60)).chunk(
        "src/A.scala", notes) if "." in c.symbol] == [("A.f", 2, 4), ("A.g", 6, 7)]
    # its tests are tests, and what a test builds inside it is no member of the test class
    spec = ('class ParserSpec extends munit.FunSuite {\n  test("parse nothing") {\n'
            '    val parser = new OptionParser[Config]("scopt") {\n      override def terminate(): Unit = ()\n    }\n'
            '    assert(parser.parse(Nil).isDefined)\n  }\n  "A Stack" should "pop values" in {\n    assert(1 == 1)\n  }\n}\n')
    chunks = FileChunker(IndexSettings(chunk_max_chars=150)).chunk("src/test/scala/ParserSpec.scala", spec)
    assert list(dict.fromkeys(c.symbol for c in chunks if c.kind == "test")) == [
        'ParserSpec.test "parse nothing"', 'ParserSpec.test "A Stack should pop values"']
    assert not any(c.symbol.endswith("terminate") for c in chunks)


def test_what_names_a_type_is_its_declaration_not_its_constructors_or_extensions():
    """A C#/Swift developer's walkthrough (docs/benchmarks.md): `BrokenCircuitException` was found on its
    constructors (`X.X` defined the class's name), `ImageDownloader` on `extension ImageDownloader {` in another
    file, and Polly's member headers carried `#pragma warning restore`."""
    chunker = FileChunker(IndexSettings(chunk_max_chars=150))
    csharp = ("public class BrokenCircuitException : Exception\n#pragma warning restore CA1724\n{\n"
              "    public BrokenCircuitException(string message)\n        : base(message)\n    {\n    }\n\n"
              "    public TimeSpan RetryAfter { get; }\n\n    public void Reset()\n    {\n        Count = 0;\n    }\n}\n")
    chunks = chunker.chunk("src/BrokenCircuitException.cs", csharp)
    assert [(c.symbol, c.kind) for c in chunks if c.kind != "class"] == [
        ("BrokenCircuitException.constructor", "constructor"), ("BrokenCircuitException.Reset", "method")]
    assert all("#pragma" not in c.header for c in chunks)
    java = "class Element {\n  Element(String tag) {\n    this.tag = tag;\n  }\n}\n"
    assert [c.names for c in FileChunker(IndexSettings()).chunk("src/Element.java", java)] == [("Element.constructor",)]
    swift = "extension ImageDownloader {\n    func livePhoto() {}\n}\n"
    assert [(c.symbol, c.kind, c.names) for c in chunker.chunk("Sources/ImageDownloader+LivePhoto.swift", swift)] == [
        ("ImageDownloader (extension)", "extension", ("ImageDownloader.livePhoto",))]


def test_the_members_a_type_declares_in_a_line_are_its_chunks_definitions():
    """A C#/Swift developer's walkthrough: `MaxRetryAttempts`, `.forceRefresh`, `OPTION_VISIBILITY` were defined
    nowhere (Polly's 390 properties, Kingfisher's 714), and asked by name were "probably not here". A
    function's locals are no members. Python's constants (`DEFAULT_PORTS`, a class's `MAX_REDIRECTS`), Go's,
    Rust's and JavaScript's are members too."""
    def names(path, text, **settings):
        return [(c.symbol, c.names) for c in FileChunker(IndexSettings(**settings)).chunk(path, text)]

    csharp = ("public class RetryStrategyOptions {\n    public const int DefaultRetryAttempts = 3;\n"
              "    private readonly int _count, _max;\n    public int MaxRetryAttempts { get; set; } = 3;\n"
              "    public void Reset() { int local = 1; }\n}\npublic enum CircuitState { Closed, HalfOpen }\n")
    assert names("src/Options.cs", csharp) == [
        ("RetryStrategyOptions", ("RetryStrategyOptions.DefaultRetryAttempts", "RetryStrategyOptions._count",
                                  "RetryStrategyOptions._max", "RetryStrategyOptions.MaxRetryAttempts",
                                  "RetryStrategyOptions.Reset")),
        ("CircuitState", ("CircuitState.Closed", "CircuitState.HalfOpen"))]
    # a type cut by its members: the lines no member chunk holds list what they declare
    assert names("src/Options.cs", csharp, chunk_max_chars=90)[:2] == [
        ("RetryStrategyOptions", ("RetryStrategyOptions.DefaultRetryAttempts",)),
        ("RetryStrategyOptions", ("RetryStrategyOptions._count", "RetryStrategyOptions._max",
                                  "RetryStrategyOptions.MaxRetryAttempts"))]
    swift = ("public enum KingfisherOptionsInfoItem {\n    case forceRefresh\n    case processor(ImageProcessor), "
             "cacheOriginalImage\n}\npublic struct Config {\n    public var sizeLimit: UInt = 0\n"
             "    func f() { let local = 1 }\n}\n")
    assert names("Sources/Options.swift", swift) == [
        ("KingfisherOptionsInfoItem", ("KingfisherOptionsInfoItem.forceRefresh", "KingfisherOptionsInfoItem.processor",
                                       "KingfisherOptionsInfoItem.cacheOriginalImage")),
        ("Config", ("Config.sizeLimit", "Config.f"))]
    kotlin = ("class TypeName(val tags: Int, other: Int) {\n    val isNullable: Boolean = false\n    init { val i = 1 }\n"
              "    fun f() { val local = 1 }\n}\nenum class KModifier { PUBLIC }\n")
    assert names("src/TypeName.kt", kotlin) == [("TypeName", ("TypeName.tags", "TypeName.isNullable", "TypeName.f")),
                                                ("KModifier", ("KModifier.PUBLIC",))]
    python = ('"""Doc."""\nimport os\nDEFAULT_TIMEOUT = 30\nDEFAULT_PORTS, _KT = {}, 2\nx.Y_Z = 5\n__all__ = ["A"]\n'
              'try:\n    import chardet\nexcept ImportError:\n    chardet = None\nif TYPE_CHECKING:\n    CACHE_DIR = "x"\n'
              'class Session:\n    MAX_REDIRECTS: int = 30\n    trust_env = True\n'
              '    def send(self):\n        LOCAL = 1\n        self.SENT = True\n')
    assert names("src/sessions.py", python) == [  # a constant's name, not `chardet`'s fallback, `x.Y_Z` or a dunder
        ("", ("DEFAULT_TIMEOUT", "DEFAULT_PORTS", "_KT", "CACHE_DIR")),
        ("Session", ("Session.MAX_REDIRECTS", "Session.send"))]
    # a class body's fields in any case: made by a call (Django's, SQLAlchemy's) or typed (a dataclass's)
    model = ("class Check(models.Model):\n    grace = models.DurationField(default=GRACE)\n    timeout: float = 1.0\n"
             "    tags: list[str]\n    trust_env = True\n    __slots__ = ('a',)\n\n    def f(self):\n"
             "        local = call()\n        return local\n")
    assert names("hc/api/models.py", model) == [
        ("Check", ("Check.grace", "Check.timeout", "Check.tags", "Check.f"))]
    go = 'package cobra\n\nconst FlagSetByCobraAnnotation = "cobra_annotation"\nconst (\n  A = iota\n  B, _ = 1, 2\n)\n' \
         'var v = 1\nvar (\n  errNoUpstream = errors.New("x")\n  _ Module = (*T)(nil)\n)\nfunc f() { const L = 1; var w = 2 }\n'
    # a package's variables are its names too (sentinel errors, defaults); an interface guard and a function's
    # own are not
    assert names("cobra.go", go) == [("", ("FlagSetByCobraAnnotation", "A", "B", "v", "errNoUpstream")), ("f", ())]
    rust = 'pub const MAX: usize = 3;\nstatic NAME: &str = "x";\nimpl Foo { const ID: u8 = 1; fn f() { const L: u8 = 2; } }\n'
    assert names("src/lib.rs", rust) == [("", ("MAX", "NAME")), ("Foo (impl)", ("Foo.ID", "Foo.f"))]
    typescript = ("export const MAX_RETRIES = 3;\nconst DEFAULT_OPTIONS = {a: 1};\nconst app = express();\n"
                  "const f = () => 1;\nvar C_D = 3, e = 4;\nfunction g() {\n  const LOCAL_X = 1;\n  const helper = () => 2;\n"
                  "  return helper;\n}\n")
    assert names("src/options.ts", typescript) == [  # capitals only; a function's constants and helpers are its own
        ("", ("MAX_RETRIES", "DEFAULT_OPTIONS")), ("f", ()), ("", ("C_D",)), ("g", ("g.helper",))]
    # what a module exports is a name in any case: a context, a singleton, a symbol (not an unexported `local`)
    exported = ("export const QueryClientContext = React.createContext(undefined)\nconst local = makeThing()\n"
                "export const focusManager = new FocusManager(), skipToken = Symbol()\n")
    assert names("src/context.tsx", exported) == [("", ("QueryClientContext", "focusManager", "skipToken"))]
    # and each name a destructuring export binds (not the key it renames, not an unexported pattern's)
    destructured = ("export const { useQuery, useMutation: useMut, opts = {}, ...rest } = createHooks()\n"
                    "export const [first, , second] = pair()\nconst { hidden, MAX_DEPTH } = other()\n")
    assert names("src/hooks.js", destructured) == [
        ("", ("useQuery", "useMut", "opts", "rest", "first", "second", "MAX_DEPTH"))]
    # the cap of names is each chunk's: a file's 70 constants above a function leave the 10 below it theirs
    many = "".join(f"C{i:03d} = {i}\n" for i in range(70)) + "\ndef f():\n    return 1\n\n" + "D000 = 0\nD001 = 1\n"
    assert [len(found) for _, found in names("src/many.py", many)] == [64, 0, 2]
    # a short member between two methods is no left-over line to drop
    short = "class A {\n    fun f(): Int {\n        return 1\n    }\n    var x = 0\n    fun g(): Int {\n        return 2\n    }\n}\n"
    assert ("A", ("A.x",)) in names("src/A.kt", short, chunk_max_chars=60)
    php = ("<?php\nclass Config {\n    public const OPTION_VISIBILITY = 'visibility';\n    private string $location;\n"
           "    public function __construct(private string $root, int $n) {}\n    public function f() { $local = 1; }\n}\n")
    assert names("src/Config.php", php) == [("Config", ("Config.OPTION_VISIBILITY", "Config.location",
                                                        "Config.__construct", "Config.root", "Config.f"))]
    # and what a file declares at its top (kotlinpoet's `ANY`, `UNIT` ... were three windows of no name)
    top = 'package x\n\n@JvmField val ANY: ClassName = ClassName("kotlin", "Any")\n\nfun f() {\n  val local = 2\n}\n'
    assert names("src/TypeName.kt", top) == [("", ("ANY",)), ("f", ())]
    assert names("Sources/Options.swift", "import UIKit\n\npublic typealias KingfisherOptionsInfo = [Item]\n") == [
        ("", ("KingfisherOptionsInfo",))]


def test_lua_functions_held_in_a_tables_fields_are_definitions():
    """lualine's diagnostics sources (`M.sources = { coc = function() ... end, ... }`) were in no chunk of their
    own, and `local f = function` listed itself inside itself (`f.f`)."""
    lua = ("local M = {}\nM.sources = {\n  nvim_lsp = function()\n    return 1\n  end,\n"
           "  ['coc'] = function()\n    return 2\n  end,\n}\n\nlocal f = function()\n"
           "  local g = function() return 1 end\n  return g\nend\nreturn M\n")
    chunks = FileChunker(IndexSettings(chunk_max_chars=60)).chunk("lua/sources.lua", lua)
    assert [(c.symbol, c.start_line, c.end_line) for c in chunks if c.symbol.startswith("M.")] == [
        ("M.sources.nvim_lsp", 3, 5), ("M.sources.coc", 6, 8)]
    # a table passed to a call holds options, not the module's functions: the call at the top level is the chunk
    called = "require('x').setup({\n  on_attach = function(client)\n    return client\n  end,\n})\n"
    assert [c.symbol for c in FileChunker(IndexSettings()).chunk("lua/init.lua", called)] == ['require(\'x\').setup ""']
    assert [c.names for c in FileChunker(IndexSettings()).chunk("lua/f.lua", lua[lua.index("local f"):])][0] \
        == ("f.g",)


def test_a_neovim_configurations_plugin_specs_and_setup_calls_are_named_chunks():
    """LazyVim's plugin specs were windows named nothing, cut across two plugins, and its autocommands one window of
    70 lines whose first 128 tokens the embedder read."""
    specs = ('return {\n  {\n    "folke/which-key.nvim",\n    opts = { preset = "helix" },\n  },\n'
             '  {\n    "gitsigns.nvim",\n    opts = function()\n      return {}\n    end,\n  },\n'
             '  { "x", opts = {} },\n}\n')
    chunks = FileChunker(IndexSettings()).chunk("lua/plugins/editor.lua", specs)
    assert [(c.symbol, c.kind, c.start_line, c.end_line) for c in chunks if c.kind == "plugin"] == [
        ('plugin "folke/which-key.nvim"', "plugin", 2, 5), ('plugin "gitsigns.nvim"', "plugin", 6, 11)]
    single = 'return {\n  "stevearc/conform.nvim",\n  opts = {\n    formatters = {},\n  },\n}\n'
    assert [c.symbol for c in FileChunker(IndexSettings()).chunk("lua/plugins/conform.lua", single)] == [
        'plugin "stevearc/conform.nvim"']
    autocmds = ('vim.api.nvim_create_autocmd("TextYankPost", {\n  group = augroup("highlight_yank"),\n'
                '  callback = function()\n    vim.hl.on_yank()\n  end,\n})\n\n'
                'vim.api.nvim_create_autocmd("BufReadPost", {\n  desc = "go to last loc",\n'
                '  callback = function() end,\n})\nvim.opt.number = true\n')
    cut = FileChunker(IndexSettings()).chunk("lua/autocmds.lua", autocmds)
    assert [(c.symbol, c.start_line, c.end_line) for c in cut if c.kind == "call"] == [
        ('vim.api.nvim_create_autocmd "highlight_yank"', 1, 6),
        ('vim.api.nvim_create_autocmd "go to last loc"', 8, 11)]


def test_a_lua_window_that_starts_inside_a_named_table_is_headed_by_its_key_path():
    """LazyVim's `defaults` was cut at line 80 inside `icons.kinds`, and the window of every completion kind's
    icon said "icons" nowhere."""
    kinds = "".join(f'      Kind{i} = "x{i}",\n' for i in range(40))
    lua = ('local M = {}\n\nlocal defaults = {\n  colorscheme = "tokyonight",\n  icons = {\n'
           f'    misc = {{ dots = "o" }},\n    kinds = {{\n{kinds}    }},\n  }},\n}}\n\nreturn M\n')
    chunks = FileChunker(IndexSettings(chunk_max_chars=400)).chunk("lua/config/init.lua", lua)
    assert [(c.start_line, c.header) for c in chunks] == [
        (1, ""), (21, "defaults.icons.kinds"), (39, "defaults.icons.kinds")]  # the first begins outside any table
    assert chunks[1].embed_text.startswith("defaults.icons.kinds\n")
    # a table a plugin spec holds is named from its plugin; a key that is no name ends the path
    from noul_lsp.chunking.languages import LANGUAGES, parser_for

    spec = ('return {\n  {\n    "folke/snacks.nvim",\n    opts = {\n      dashboard = {\n        preset = {\n'
            '          keys = {},\n        },\n      },\n      ["<leader>"] = {\n        x = {\n        },\n      },\n'
            '    },\n  },\n}\n')
    root = parser_for("lua").parse(spec.encode()).root_node
    paths = {name for _, _, name in LANGUAGES["lua"].table_paths(root)}
    assert paths == {'"folke/snacks.nvim".opts', '"folke/snacks.nvim".opts.dashboard',
                     '"folke/snacks.nvim".opts.dashboard.preset', "x"}


def test_xcodes_file_header_above_a_licence_goes_with_the_licence():
    """Kingfisher's files open with Xcode's header (the file's name, the project, "Created by"), then the MIT
    notice: the cut stopped at the header, and 145 of 211 files kept a licence chunk."""
    head = ("//\n//  Resource.swift\n//  Kingfisher\n//\n//  Created by Wei Wang on 15/4/6.\n//\n"
            "//  Copyright (c) 2019 Wei Wang <onevcat@gmail.com>\n//\n"
            "//  Permission is hereby granted, free of charge, to any person obtaining a copy\n\n")
    chunks = FileChunker(IndexSettings()).chunk("Sources/Resource.swift", head + "import Foundation\n\n"
                                                "public struct Resource {\n    let url: URL\n}\n")
    assert chunks[0].text == "import Foundation"
    # a description before the notice is the file's own words, and stays
    described = ("//\n// Resource: a downloadable image with the key its cache knows it by, and where to get it.\n//\n"
                 "// Copyright (c) 2019 Wei Wang\n\nimport Foundation\n")
    assert FileChunker(IndexSettings()).chunk("Sources/R.swift", described)[0].start_line == 2
    short = "//\n//  Image cache helpers\n//\n//  Copyright (c) 2019 Wei Wang\n\nimport Foundation\n"
    assert FileChunker(IndexSettings()).chunk("Sources/R.swift", short)[0].start_line == 2
    # a long line in such a paragraph is read once (the first pattern for it was quadratic: 33 s on 100 KB)
    spaced = "//\n//" + " " * 100_000 + "! abc\n//\n// Copyright (c) 2020 X\n\nimport Foundation\n"
    assert FileChunker(IndexSettings()).chunk("Sources/A.swift", spaced)[0].start_line == 2


def test_a_cpp_header_is_read_as_cpp_and_namespaces_are_scopes():
    """leveldb's `.h` files went through the C grammar: `namespace leveldb {` read as a function named
    `leveldb`, one of 74 classes found; a namespace held in one chunk was named by the namespace, and every
    test was `leveldb.TEST`."""
    chunker = FileChunker(IndexSettings())
    header = ("// Copyright (c) 2011 The LevelDB Authors. All rights reserved.\n#ifndef STORAGE_LEVELDB_DB_H_\n"
              "#define STORAGE_LEVELDB_DB_H_\n\n#include <string>\n\nnamespace leveldb {\n\n"
              "// A DB is a persistent ordered map from keys to values.\nclass LEVELDB_EXPORT DB {\n public:\n"
              "  virtual Status Put(const WriteOptions& options, const Slice& key) = 0;\n};\n\n"
              "}  // namespace leveldb\n\n#endif  // STORAGE_LEVELDB_DB_H_\n")
    chunks = chunker.chunk("include/leveldb/db.h", header)
    assert [(c.symbol, c.kind, c.language) for c in chunks if c.symbol] == [("leveldb.DB", "class", "cpp")]
    assert "Copyright" not in chunks[0].text and "#include <string>" in chunks[0].text
    c_header = "#ifndef cJSON__h\n#define cJSON__h\n\ntypedef struct cJSON {\n    int type;\n} cJSON;\n\n#endif\n"
    assert [(c.symbol, c.language) for c in chunker.chunk("cJSON.h", c_header)] == [("cJSON", "c")]
    source = ("namespace leveldb {\nnamespace {\nint Helper(int x) { return x + 1; }\n}  // namespace\n\n"
              "const Slice& Key(const Slice& s) { return s; }\n\nTEST(SkipTest, InsertAndLookup) {\n"
              "  ASSERT_TRUE(true);\n}\n\n}  // namespace leveldb\n")
    assert [(c.symbol, c.kind) for c in chunker.chunk("db/skiplist_test.cc", source)] == [
        ("leveldb.Helper", "function"), ("leveldb.Key", "function"), ("leveldb.SkipTest.InsertAndLookup", "test")]
    # a struct named in a parameter or a forward declaration defines nothing
    uses = "struct inst;\nint run(struct jv_parser *parser, struct inst *code) {\n  return 0;\n}\n"
    assert [(c.symbol, c.names) for c in chunker.chunk("src/execute.c", uses)] == [("run", ())]


def test_c_whose_conditionals_break_the_parse_is_read_by_one_branch_of_each():
    """`#if` inside an initializer list made leveldb's `class Limiter` run to the end of env_posix.cc, and
    jq's `jv_dtoa.c` was one error node: the rows are read with the first branch of each conditional."""
    text = ("class Limiter {\n public:\n  Limiter(int max)\n#if !defined(NDEBUG)\n      : max_(max), acquires_(0) {\n"
            "#else\n      : acquires_(0) {\n#endif\n  }\n  int max_;\n  int acquires_;\n};\n\n"
            "Status PosixEnv::Schedule(void (*function)(void*)) {\n  return Status::OK();\n}\n")
    chunks = FileChunker(IndexSettings()).chunk("util/env_posix.cc", text)
    assert [(c.symbol, c.start_line, c.end_line) for c in chunks] == [("Limiter", 1, 12), ("PosixEnv::Schedule", 14, 16)]
    assert "#else" in chunks[0].text  # the chunk shows the file as it is


def test_a_members_header_starts_at_its_types_name_not_its_attributes():
    """`#if !NETCOREAPP [Serializable] #endif` was the whole header of BrokenCircuitException's members (43
    of Polly's headers lacked the class's name); jsoup's 228 began with `@SuppressWarnings(...)`."""
    methods = "\n".join(f"    public int Attempt{n}() {{ return {n} * 2; }}" for n in range(80))
    csharp = f"#if !NETCOREAPP\n[Serializable]\n#endif\npublic class BrokenCircuitException : Exception\n{{\n{methods}\n}}\n"
    members = [c for c in FileChunker(IndexSettings()).chunk("src/BrokenCircuitException.cs", csharp) if c.kind == "method"]
    assert members and {c.header for c in members} == {"public class BrokenCircuitException : Exception"}


def test_what_the_review_of_the_c_and_test_rules_found():
    """A function-like macro ended on the next line (each of a run of macros held the next one's line); an
    export macro's rule took `struct RGB` for one; a conditional with no error was read by its first branch
    all the same, and an `#else` branch's function lost its name; `context.on(...)` was a test group."""
    chunker = FileChunker(IndexSettings())
    macros = "#define MIN(a, b) ((a) < (b) ? (a) : (b))\n#define MAX(a, b) ((a) > (b) ? (a) : (b))\n"
    assert [(c.symbol, c.kind, c.start_line, c.end_line) for c in chunker.chunk("util.h", macros)] == [
        ("MIN", "macro", 1, 1), ("MAX", "macro", 2, 2)]
    cpp = ("struct RGB c{1, 2, 3};\nclass FOO final : public Base {\n  int x;\n};\n"
           "class FMT_API format_error : public std::runtime_error {\n  int code;\n};\n")
    assert [c.symbol for c in chunker.chunk("colour.cpp", cpp) if c.kind == "class"] == ["FOO", "format_error"]
    platform = ("#ifdef _WIN32\nstatic int helper_windows(void) {\n  return 1;\n}\n#else\n"
                "static int helper_posix(void) {\n  return 2;\n}\n#endif\n\nint broken( {\n")
    assert {"helper_windows", "helper_posix"} <= {c.symbol for c in chunker.chunk("src/platform.c", platform)}
    js = ("context.on('close', () => {\n  cleanup();\n});\nsuite.add('RegExp#test', function () {\n  /o/.test('Hello');\n});\n"
          "test.describe.parallel('uploads', () => {\n  test('retries', async () => {\n    await upload();\n  });\n});\n")
    chunks = chunker.chunk("tests/upload.spec.ts", js)
    assert [(c.symbol, c.kind) for c in chunks if c.symbol] == [('describe "uploads"', "describe")]
    from noul_lsp.chunking.languages import holds_cpp
    assert holds_cpp("namespace absl {\nint f();\n}\n") and holds_cpp("template <typename T>\nT max(T a);\n")
    assert not holds_cpp("/* a class of errors, see namespace docs */\nint f(void);\n")
    assert not holds_cpp('const char *s = "a/*";\n' * 20000)  # an unclosed `/*` ends the text, quickly


def test_c_enumerators_macros_and_function_pointer_typedefs_are_named():
    """jq's `typedef void (*jv_nomem_handler_f)(void *)` was a type named by its whole declarator, and the
    enumerators of C's enums (`JV_PARSE_SEQ` of an anonymous `enum { ... }`) and its macros with a value
    (`#define JV_PRINT_PRETTY 1`) were defined nowhere; C++'s enumerators are its enum's."""
    chunker = FileChunker(IndexSettings())
    header = ("typedef void (*jv_nomem_handler_f)(void *);\ntypedef int arr_t[10];\n"
              "enum {\n  JV_PARSE_SEQ = 1,\n  JV_PARSE_STREAMING = 2,\n};\nenum jv_kind { JV_KIND_INVALID, JV_KIND_NULL };\n")
    assert [(c.symbol, c.names) for c in chunker.chunk("src/jv.h", header)] == [
        ("jv_nomem_handler_f", ()), ("arr_t", ()), ("enum", ("enum.JV_PARSE_SEQ", "enum.JV_PARSE_STREAMING")),
        ("jv_kind", ("jv_kind.JV_KIND_INVALID", "jv_kind.JV_KIND_NULL"))]
    cpp = "namespace leveldb {\nenum class CompressionType : unsigned char { kNoCompression = 0x0 };\n}\n"
    assert [(c.symbol, c.names) for c in chunker.chunk("include/options.h", cpp)] == [
        ("leveldb.CompressionType", ("leveldb.CompressionType.kNoCompression",))]
    # a macro with a value at the file's level, in or out of an include guard, is a name; the guard is not
    guarded = ("#ifndef JV_H\n#define JV_H\n#include <stdio.h>\n#define JV_PRINT_PRETTY 1\n#define JV_PRINT_ASCII 2\n"
               "#define JV_MAX(a) (a)\nint jv_f(int x);\n#endif\n")
    assert [(c.symbol, c.names) for c in chunker.chunk("src/jv.h", guarded)] == [
        ("", ("JV_PRINT_PRETTY", "JV_PRINT_ASCII")), ("JV_MAX", ()), ("", ())]  # a prototype: its body names it
    # a constant or a variable of the file's is a name (a C++ namespace's too)
    constants = "static const int jv_limit = 4;\nchar *jv_name, jv_buf[8];\n"
    assert [c.names for c in chunker.chunk("src/jv.c", constants)] == [("jv_limit", "jv_name", "jv_buf")]
    inside = "static int f(void) {\n#define LOCAL 3\n  return LOCAL;\n}\n#define TOP 3\n"
    assert [(c.symbol, c.names) for c in chunker.chunk("src/f.c", inside)] == [("f", ()), ("", ("TOP",))]
    # a function's local enum: its enumerators are defined there, and nowhere else
    local = "int f(void) {\n  enum { LOCAL_A, LOCAL_B } x = LOCAL_A;\n  return x;\n}\n"
    assert [(c.symbol, c.names) for c in chunker.chunk("src/f.c", local)] == [
        ("f", ("f.enum", "f.enum.LOCAL_A", "f.enum.LOCAL_B"))]


def test_a_files_licence_is_cut_and_what_follows_it_stays():
    """The licence cut took a class's doc saying "license" anywhere, C's `#include` lines right after a
    licence (read as `#` comments) and Go's package doc under a copyright line."""
    chunker = FileChunker(IndexSettings())
    c = "/* Copyright (c) 2009 Dave Gamble */\n#include <string.h>\n#include <stdio.h>\n\nint f(void) {\n  return 0;\n}\n"
    assert "#include <string.h>" in chunker.chunk("cJSON.c", c)[0].text
    go = "// Copyright 2013 The Cobra Authors\n// Package cobra is a commander for modern CLI apps.\npackage cobra\n\nimport \"fmt\"\n"
    assert chunker.chunk("cobra.go", go)[0].start_line == 1
    doc = ("// Validates license keys against the issuing server.\n\nimport java.util.List;\nimport java.util.Map;\n\n"
           "class Keys {\n  int n;\n}\n")
    assert chunker.chunk("Keys.java", doc)[0].start_line == 1
    # a paragraph of the project's links closes its notice (FreeRTOS' every file: its hits' preview was a link)
    kernel = ("/*\n * FreeRTOS Kernel\n * SPDX-License-Identifier: MIT\n *\n * Permission is hereby granted, free of "
              "charge.\n *\n * https://www.FreeRTOS.org\n * https://github.com/FreeRTOS\n *\n */\n\n"
              "#include \"FreeRTOS.h\"\n\nvoid vTaskDelay(int ticks) {\n  (void)ticks;\n}\n")
    assert chunker.chunk("tasks.c", kernel)[0].start_line == 12
    described = kernel.replace(" * https://github.com/FreeRTOS\n", " * https://github.com/FreeRTOS\n *\n"
                               " * The kernel's delay functions.\n")
    assert chunker.chunk("tasks.c", described)[0].text.startswith(" * The kernel's delay functions.")



def test_what_a_cpp_user_met_in_leveldb_and_jq():
    """A C/C++ walkthrough's findings: leveldb's file descriptions went with the licence above them in one
    comment block; `void Unlock() UNLOCK_FUNCTION()` was named `UNLOCK_FUNCTION`; `SkipList` and `Env` were
    found on their `= delete` copy constructors; `SkipList<Key, Comparator>::Insert` kept its template
    arguments; jq's `main` was read as its Windows `umain`."""
    chunker = FileChunker(IndexSettings())
    builder = ("// Copyright (c) 2011 The LevelDB Authors. All rights reserved.\n// Use of this source code is governed "
               "by a BSD-style license.\n//\n// BlockBuilder generates blocks where keys are prefix-compressed.\n\n"
               "#include \"table/block_builder.h\"\n\nnamespace leveldb {\nvoid BlockBuilder::Reset() {\n  buffer_.clear();\n}\n}\n")
    head = chunker.chunk("table/block_builder.cc", builder)[0]
    assert head.text.startswith("// BlockBuilder generates blocks") and "Copyright" not in head.text
    port = ("namespace leveldb {\nclass LOCKABLE Mutex {\n public:\n  Mutex() = default;\n  Mutex(const Mutex&) = delete;\n"
            "  void Unlock() UNLOCK_FUNCTION() { mu_.unlock(); }\n};\ntemplate <typename Key, class Comparator>\n"
            "void SkipList<Key, Comparator>::Insert(const Key& key) {\n  Node* x = FindGreaterOrEqual(key);\n}\n}\n")
    assert [(c.symbol, c.kind, c.names) for c in chunker.chunk("port/port_stdcxx.h", port)] == [
        ("leveldb.Mutex", "class", ("leveldb.Mutex.Unlock",)), ("leveldb.SkipList::Insert", "function", ())]
    main = ("#ifdef WIN32\nint umain(int argc, wchar_t* argv[]) {\n#else\nint main(int argc, char* argv[]) {\n#endif\n"
            "  return 0;\n}\nint broken( {\n")
    assert "main" in {c.symbol for c in chunker.chunk("src/main.c", main)}
    from noul_lsp.chunking import generated_by_a_tool
    assert not generated_by_a_tool('%{\n#include "parser.h" /* Generated by bison. */\n%}\n')  # flex's source, lexer.l
    assert generated_by_a_tool("/* AUTOGENERATED FILE. DO NOT EDIT. */\n#include \"unity.h\"\n")
    # Kubernetes' controller-gen writes a CustomResourceDefinition's schema; a generator writing the mark into the
    # file it makes (a here-document) is no generated file
    crd = ("---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata:\n  annotations:\n"
           "    controller-gen.kubebuilder.io/version: v0.21.0\n")
    assert generated_by_a_tool(crd)
    assert not generated_by_a_tool("#!/bin/bash\ncat > .github/labeler.yml <<EOF\n# This file is auto-generated by "
                                   "scripts/generate-labeler.sh. Do not edit manually.\nEOF\n")


def test_what_a_cpp_developer_met_in_leveldb_and_spdlog():
    """A C++ walkthrough's findings: a class's fields and a namespace's constants were named nothing
    (`kL0_SlowdownWritesTrigger` "probably not here"); `SPDLOG_INLINE` before a definition was read as its return
    type and the real one as its name, `SPDLOG_TRY { } SPDLOG_CATCH_STD` made the rest of a file one error;
    Catch2's `TEST_CASE("title")` was no test."""
    chunker = FileChunker(IndexSettings())
    header = ("namespace leveldb {\nnamespace config {\nstatic const int kNumLevels = 7;\n}\n"
              "class DB {\n public:\n  virtual ~DB();\n  static Status Open(const Options& options, DB** dbptr);\n"
              "  virtual Status Put(const Slice& key) = 0;\n private:\n  std::string* name_;\n"
              "  CRITICAL_SECTION mutex_;\n};\n"
              "Status DestroyDB(const std::string& name);\nint Stats::count_ = 0;\n}\n")
    named = {name for c in chunker.chunk("include/leveldb/db.h", header) for name in c.names}
    assert {"leveldb.config.kNumLevels", "leveldb.DB.name_", "leveldb.DB.mutex_"} <= named
    # a prototype is named by its definition's body (named in a class, a header came above CLI11's `App_inl.hpp`
    # asked for the implementation), a member defined here is declared in its class
    assert not any(name.endswith(("Open", "Put", "DestroyDB", "count_", "~DB")) for name in named)
    inline = ("namespace spdlog {\nSPDLOG_INLINE logger::logger(std::string name) : name_(name) {}\n\n"
              "SPDLOG_INLINE std::shared_ptr<logger> get(const std::string &name) {\n  return nullptr;\n}\n\n"
              "template <typename Mutex>\nvoid SPDLOG_INLINE base_sink<Mutex>::log(const log_msg &msg) {\n"
              "  SPDLOG_TRY { sink->log(msg); }\n  SPDLOG_LOGGER_CATCH(msg.source)\n}\n\n"
              "SPDLOG_INLINE void logger::flush_() {\n  SPDLOG_TRY {\n    sink->flush();\n  }\n"
              "  SPDLOG_CATCH_STD\n}\n}\n")
    chunks = chunker.chunk("include/spdlog/logger-inl.h", inline)
    assert [(c.symbol, c.start_line) for c in chunks if c.symbol] == [
        ("spdlog.logger::logger", 2), ("spdlog.get", 4), ("spdlog.base_sink::log", 8), ("spdlog.logger::flush_", 14)]
    # two in a row, the return type on a line of its own, a bare one above a definition (CLI11's)
    cli = ("namespace CLI {\nCLI11_NODISCARD CLI11_INLINE std::string App::help() const {\n  return {};\n}\n"
           "CLI11_INLINE std::string\nConfig::to_config(const App *app) const {\n  return {};\n}\n"
           "CLI11_DIAGNOSTIC_PUSH\nCLI11_DIAGNOSTIC_IGNORE_DEPRECATED\n"
           "CLI11_INLINE std::string narrow_impl(const wchar_t *s) {\n"
           "  return {};\n}\nenum class Kind {\n  KIND_A,\n  KIND_LAST\n};\n}\n")
    chunks = chunker.chunk("include/CLI/impl/App_inl.hpp", cli)
    assert [c.symbol for c in chunks if c.symbol] == ["CLI.App::help", "CLI.Config::to_config", "CLI.narrow_impl",
                                                     "CLI.Kind"]
    assert {"CLI.Kind.KIND_A", "CLI.Kind.KIND_LAST"} <= {name for c in chunks for name in c.names}
    tests = ('#include "includes.h"\nTEST_CASE("dequeue-empty-nowait", "[mpmc_blocking_q]") {\n'
             "  REQUIRE(q.size() == 0);\n}\n"
             'TEST_CASE_METHOD(Fixture, "reads a file", "[io]")\n{\n  REQUIRE(read());\n}\n'
             "TEST(SkipTest, Empty)\n{\n  ASSERT_TRUE(true);\n}\nBOOST_AUTO_TEST_CASE(parses_empty) {\n}\n")
    assert [(c.symbol, c.kind, c.start_line, c.end_line) for c in chunker.chunk("tests/test_mpmc_q.cpp", tests)
            if c.symbol] == [('TEST_CASE "dequeue-empty-nowait"', "test", 2, 4),
                             ('TEST_CASE_METHOD "reads a file"', "test", 5, 8), ("SkipTest.Empty", "test", 9, 12),
                             ("parses_empty", "test", 13, 14)]


def test_the_windows_of_a_definition_under_a_scope_carry_its_name():
    """The windows of leveldb's `struct Options` were headed "namespace leveldb (part 2 of 3)"."""
    fields = "\n".join(f"  int field_{n};  // what field {n} holds" for n in range(150))
    windows = FileChunker(IndexSettings()).chunk("include/leveldb/options.h",
                                                 f"namespace leveldb {{\nstruct Options {{\n{fields}\n}};\n}}\n")
    assert len(windows) > 1 and all(w.header.startswith("namespace leveldb Options (part ") for w in windows)


def test_vue_and_svelte_components_cut_their_scripts_by_grammar_and_are_named_by_their_file():
    """A single-file component was 40-line windows of no name: its functions defined nowhere, and the
    component asked by name came below four adapters' `.tsx` copies."""
    svelte = ('<script lang="ts">\n  import { setQueryClientContext } from "./context"\n\n'
              "  type Props = {\n    client: QueryClient\n  }\n\n  export function mountClient(client: QueryClient) {\n"
              "    client.mount()\n  }\n</script>\n\n<slot />\n")
    chunks = FileChunker(IndexSettings()).chunk("src/QueryClientProvider.svelte", svelte)
    found = {(c.symbol, c.start_line, c.end_line, c.language) for c in chunks}
    assert ("mountClient", 8, 10, "typescript") in found and ("Props", 4, 6, "typescript") in found
    assert any(c.symbol == "QueryClientProvider" and c.start_line <= 13 <= c.end_line for c in chunks)  # the template
    vue = ("<template>\n  <div>{{ posts.length }}</div>\n</template>\n\n<script>\nexport default {\n  setup() {\n"
           "    return { posts: usePosts() }\n  },\n}\nfunction usePosts() {\n  return []\n}\n</script>\n")
    chunks = FileChunker(IndexSettings()).chunk("src/components/Posts.vue", vue)
    assert ("usePosts", 11, 13) in {(c.symbol, c.start_line, c.end_line) for c in chunks}
    assert {c.symbol for c in chunks if c.start_line <= 2 <= c.end_line} == {"Posts"}
    assert all(svelte.split("\n")[0] not in c.text for c in FileChunker(IndexSettings()).chunk("a.svelte", svelte)
               if c.language == "typescript")  # the script's own lines, not its tag
    # a script commented out or quoted in the template is none; `lang="tsx"` is TSX
    quoted = ("<template>\n  <!-- <script>function fake() {}</script> -->\n  <code><script></code>\n</template>\n"
              '<script lang="tsx">\nexport function total(rows: Row[]) {\n  return <b>{rows.length}</b>\n}\n</script>\n')
    chunks = FileChunker(IndexSettings()).chunk("src/Total.vue", quoted)
    assert ("total", "tsx") in {(c.symbol, c.language) for c in chunks} and not any(c.symbol == "fake" for c in chunks)


def test_a_django_management_command_is_named_by_its_module():
    """`class Command` of `management/commands/sendalerts.py` is run and asked for as `sendalerts`: the name
    is among its chunk's; another class, another folder or a `_private.py` helper gets none."""
    chunker = FileChunker(IndexSettings())
    source = ("from django.core.management.base import BaseCommand\n\n\nclass Command(BaseCommand):\n"
              "    help = 'Send alerts.'\n\n    def handle(self, *args, **options):\n        return 'done'\n")

    def names(path: str) -> dict[str, tuple[str, ...]]:
        return {c.symbol: c.names for c in chunker.chunk(path, source) if c.symbol}

    assert names("hc/api/management/commands/sendalerts.py")["Command"] == ("Command.handle", "sendalerts")
    for other in ("hc/api/commands/sendalerts.py", "hc/api/management/commands/_common.py"):
        assert all("sendalerts" not in n and "_common" not in n for n in names(other).values())
    other_class = source.replace("Command(", "Other(")
    assert "x" not in {c.symbol: c.names for c in chunker.chunk("m/management/commands/x.py", other_class)}["Other"]


def test_a_go_method_is_its_receivers_and_a_type_group_is_one_definition_a_type():
    """caddy's `selectionpolicies.go` held twelve chunks named `Select`; a `type ( ... )` group of ten matchers
    was five chunks all named `MatchHost`, `MatchPath` defined nowhere; a split struct's head was its first
    three lines, its fields' comments joined in."""
    chunker = FileChunker(IndexSettings(chunk_max_chars=300))
    source = ("package x\n\ntype (\n\t// A is a.\n\tA struct{ x int }\n\t// B is b.\n\tB = int\n)\n\n"
              "// Serve serves.\nfunc (s *Server[K, V]) Serve() {}\nfunc (Sel) Select() {}\nfunc (c *pkg.C) Q() {}\n"
              "type Handler struct {\n" + "".join(f"\t// field {n} does this\n\tField{n} int\n" for n in range(20))
              + "}\n")
    chunks = chunker.chunk("x.go", source)
    assert [(c.symbol, c.kind, c.start_line) for c in chunks if c.symbol][:6] == [
        ("A", "type", 4), ("B", "type", 6), ("Server.Serve", "method", 10), ("Sel.Select", "method", 12),
        ("Q", "method", 13), ("Handler", "type", 14)]
    handler = [c for c in chunks if c.symbol == "Handler"]
    assert len(handler) > 1 and all(c.header.startswith("type Handler struct (part ") for c in handler)


def test_a_rust_type_is_found_at_its_definition_not_its_module_line_nor_its_impl():
    """just's `Token`, `Config`, `Search` (14 of 20 type names) opened at `mod token;` in lib.rs; `Keyword` at
    `impl Keyword`, `Signal` at `impl From<Signal> for nix::Signal`; the variant `CircularRecipeDependency`
    was defined nowhere ("probably not here")."""
    source = ("mod token;\npub(crate) mod keyword;\n\n/// The kinds.\n#[derive(Debug)]\npub enum Keyword {\n"
              "    Alias,\n    /// Set one.\n    Set(String),\n    Named { x: u8 },\n}\n\nimpl Keyword {\n"
              "    pub fn lexeme(self) -> &'static str {\n        \"x\"\n    }\n}\n\n"
              "impl From<Signal> for nix::Signal {\n    fn from(s: Signal) -> Self { todo!() }\n}\n")
    chunks = FileChunker(IndexSettings()).chunk("src/lib.rs", source)
    assert [(c.symbol, c.kind, c.names) for c in chunks] == [
        ("", "module", ()), ("Keyword", "enum", ("Keyword.Alias", "Keyword.Set", "Keyword.Named")),
        ("Keyword (impl)", "impl", ("Keyword.lexeme",)),
        ("From for nix::Signal (impl)", "impl", ("From for nix::Signal.from",))]
    # an impl's type arguments and lifetimes are no part of its type's name (`Recipe::confirm` is asked)
    generic = "impl<'src> Recipe<'src> {\n    fn confirm(&self) {}\n}\nimpl<'a, D> Keyed<'a> for Recipe<'a, D> {}\n"
    assert [(c.symbol, c.names) for c in FileChunker(IndexSettings()).chunk("src/recipe.rs", generic)] == [
        ("Recipe (impl)", ("Recipe.confirm",)), ("Keyed for Recipe (impl)", ())]


def test_a_notebooks_cells_are_located_named_by_their_section_and_read_from_nbformat_3():
    """A cell whose line is the word `source` moved every hit of its notebook to line 1; an nbformat 3
    notebook (`worksheets`, code under `input`) was indexed empty; a prose or code cell with no heading of
    its own was "cell N", its section's title in none of its chunks."""
    def cell(kind: str, lines: list[str]) -> dict:
        return {"cell_type": kind, "metadata": {}, "source": lines, **({"outputs": []} if kind == "code" else {})}

    cells = [cell("code", ["source = load()\n", "source"]), cell("markdown", ["## Fitting the model\n", "Words."]),
             cell("code", ["model.fit(source)"]), cell("code", ["def fit_weibull(speeds):\n", "    return speeds\n"])]
    raw = json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1)
    lines = raw.split("\n")
    chunks = {c.symbol: c for c in FileChunker(IndexSettings()).chunk("fit.ipynb", raw)}
    assert lines[chunks["fit_weibull"].start_line - 1].strip().startswith('"def fit_weibull')
    assert lines[chunks["cell 1"].start_line - 1].strip() == '"source = load()\\n",'
    assert set(chunks) == {"cell 1", "Fitting the model", "Fitting the model (cell 3)", "fit_weibull"}
    old = {"nbformat": 3, "nbformat_minor": 0, "metadata": {}, "worksheets": [{"cells": [
        {"cell_type": "heading", "level": 1, "metadata": {}, "source": ["The Hurst exponent"]},
        {"cell_type": "code", "input": ["def hurst_exponent(series):\n", "    return 0.5\n"], "language": "python",
         "metadata": {}, "outputs": []}]}]}
    raw = json.dumps(old, indent=1)
    found = {c.symbol: c for c in FileChunker(IndexSettings()).chunk("old.ipynb", raw)}
    assert set(found) == {"The Hurst exponent", "hurst_exponent"}
    assert raw.split("\n")[found["hurst_exponent"].start_line - 1].strip().startswith('"def hurst_exponent')


def test_terraform_blocks_are_definitions_named_by_their_address():
    """A Terraform module was cut in line windows named nowhere: `var.cluster_name` or `aws_iam_role.this` asked
    by name was in no definition. Each top-level block is one, named as Terraform's expressions name it; a
    `locals` block's settings are its names; a nested block (`lifecycle`) is part of its resource; a file's
    first comment is its first block's, as any comment above a block is."""
    tf = ('# The cluster\'s IAM role\nresource "aws_iam_role" "this" {\n  name = var.name\n'
          '  lifecycle {\n    create_before_destroy = true\n  }\n}\n\n'
          'data "aws_iam_policy_document" "assume" {\n  statement {\n    actions = ["sts:AssumeRole"]\n  }\n}\n\n'
          'variable "cluster_name" {\n  type = string\n}\n\nlocals {\n  role_name = "x"\n  prefix    = var.name\n}\n\n'
          'module "kms" {\n  source = "terraform-aws-modules/kms/aws"\n}\n\noutput "cluster_arn" {\n  value = 1\n}\n')
    chunks = FileChunker(IndexSettings()).chunk("main.tf", tf)
    assert [(c.symbol, c.kind, c.start_line, c.end_line, c.names) for c in chunks] == [
        ("aws_iam_role.this", "resource", 1, 7, ("aws_iam_role",)),  # one of its type's, asked by the type's name
        ("data.aws_iam_policy_document.assume", "data", 9, 13, ("aws_iam_policy_document",)),
        ("var.cluster_name", "variable", 15, 17, ()),
        ("local", "locals", 19, 22, ("local.role_name", "local.prefix")),
        ("module.kms", "module_call", 24, 26, ()),
        ("output.cluster_arn", "output", 28, 30, ())]
    assert {c.language for c in chunks} == {"hcl"}
    # a variables file's settings are its names; a Terraform test's `run` block is a test
    assert FileChunker(IndexSettings()).chunk("prod.tfvars", 'cluster_name = "prod"\nnodes = 3\n')[0].names == (
        "cluster_name", "nodes")
    run = FileChunker(IndexSettings()).chunk("tests/basic.tftest.hcl", 'run "creates_bucket" {\n  command = plan\n}\n')
    assert [(c.symbol, c.kind) for c in run] == [("run.creates_bucket", "test")]
    # its comments are `#`, `//` and `/* */` (a preview reads the doc comment above a block after its head)
    from noul_lsp.chunking.boilerplate import is_comment
    assert all(is_comment(line, "hcl") for line in ("# x", "// x", "/* x")) and not is_comment('a = "#"', "hcl")


def test_a_helm_charts_named_templates_are_definitions_named_by_their_names():
    """Helm's `_helpers.tpl` was cut in 40-line windows: a helper (`include "chart.fullname" .`) asked by name was
    defined nowhere, and windows ran from one helper into the next. Each `define` is a chunk with its comments
    above, its nested `if`/`with`/`range` inside it; a long one windows that carry its name."""
    helpers = ('{{/* vim: set filetype=mustache: */}}\n{{/*\nExpand the name of the chart.\n*/}}\n'
               '{{- define "chart.name" -}}\n{{- default .Chart.Name .Values.nameOverride | trunc 63 }}\n{{- end }}\n\n'
               '{{/* Fullname */}}\n{{/* Adding 9 to 26 */}}\n{{- define "chart.fullname" -}}\n'
               '{{- if .Values.fullnameOverride }}\n{{- .Values.fullnameOverride }}\n{{- else }}\n'
               '{{- with .Values.x }}{{ . }}{{- end }}\n{{- end }}\n{{- end }}\n\n'
               '{{- $unused := 1 }}\n\n{{- define "chart.podSpec" -}}\n' + "containers:\n  - image: registry.example.com/some/long/image/name:1.0\n" * 60
               + '{{- end }}\n{{- define "chart.unclosed" -}}\nx\n')
    helpers = helpers.replace("{{- if .Values.fullnameOverride }}", '{{- if eq .Values.fullnameOverride "{" }}')
    chunks = FileChunker(IndexSettings()).chunk("charts/chart/templates/_helpers.tpl", helpers)
    named = [(c.symbol, c.start_line, c.end_line) for c in chunks if c.kind == "template"]
    assert named[:2] == [("chart.name", 1, 7), ("chart.fullname", 9, 17)]
    assert {c.symbol for c in chunks if c.kind == "template"} == {"chart.name", "chart.fullname", "chart.podSpec"}
    pod = [c for c in chunks if c.symbol == "chart.podSpec"]
    assert len(pod) > 1 and pod[0].start_line == 21 and pod[-1].end_line == 142
    # the lines outside them are windows, on the file's rows
    assert [(c.start_line, c.text) for c in chunks if c.kind == "text"] == [
        (19, "{{- $unused := 1 }}"), (143, '{{- define "chart.unclosed" -}}\nx')]
    assert {c.language for c in chunks} == {"gotemplate"}
    # two named templates on one line are one chunk (one text at one line is one key in the store), both named
    both = FileChunker(IndexSettings()).chunk("t/_h.tpl", '{{ define "c.b" }}y{{ end }}{{ define `c.c` }}z{{ end }}\n')
    assert [(c.symbol, c.names) for c in both] == [("c.b", ("c.c",))]


def test_a_large_yaml_file_is_cut_at_its_keys_each_section_named_by_its_key_path():
    """kube-prometheus-stack's `values.yaml` was 40-line windows named nowhere: `prometheus.prometheusSpec.retention`
    sat on a window's 26th line, past what the embedder reads, and looked like Alertmanager's `retention`. A
    document that fits is one chunk; a larger one is cut at its keys (with the comments above each), a large
    section at its own keys, and adjacent sections packed up to the budget; each chunk is named and headed by the
    key path its sections share and lists the keys it holds (not those inside a list's items)."""
    settings = IndexSettings(chunk_max_chars=400)
    small = "name: tests\non:\n  push:\n    branches: [main]\n"
    assert [(c.symbol, c.names, c.header) for c in FileChunker(settings).chunk(".github/workflows/t.yml", small)] \
        == [("", (), "")]
    spec = "".join(f"    ## the {key} of the server's data\n    {key}: {value}\n\n" for key, value in
                   (("retention", "10d"), ("retentionSize", '""'), ("walCompression", "true"), ("replicas", 1),
                    ("logLevel", "info"), ("logFormat", "logfmt"), ("scrapeInterval", '""'), ("paused", "false")))
    values = ("## Deploy alertmanager\nalertmanager:\n  enabled: true\n\n## Deploy a Prometheus instance\n"
              "prometheus:\n  enabled: true\n  prometheusSpec:\n" + spec +
              "    containers:\n      - name: sidecar\n        image: x\n")
    chunks = FileChunker(settings).chunk("charts/stack/values.yaml", values)
    assert all(c.language == "yaml" for c in chunks)
    first = chunks[0]
    assert (first.start_line, first.text.split("\n")[0]) == (1, "## Deploy alertmanager")
    retention = next(c for c in chunks if "prometheus.prometheusSpec.retention" in (c.symbol, *c.names))
    assert retention.symbol == "prometheus" and retention.embed_text.startswith("prometheus\n")
    # small sections are packed up to the budget under the key path they share, never two top-level keys'
    assert [(c.symbol, c.start_line) for c in chunks] == [
        ("alertmanager", 1), ("prometheus", 5), ("prometheus.prometheusSpec", 21)]
    # every line is in a chunk; a list item's keys name nothing, but an item is named by its `name:`
    covered = {row for c in chunks for row in range(c.start_line, c.end_line + 1)}
    assert all(row in covered for row, line in enumerate(values.split("\n"), 1) if line.strip())
    assert not any(name.endswith((".name", ".image")) for c in chunks for name in c.names)
    assert "prometheus.prometheusSpec.containers.sidecar" in chunks[-1].names
    # a Kubernetes manifest's keys are the API's (`spec.template.spec` in every manifest): its sections are headed
    # by their key paths, named by its object alone
    manifest = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: operator\nspec:\n  template:\n"
                "    spec:\n" + "".join(f"      key{n}: {'value ' * 10}\n" for n in range(20)))
    parts = FileChunker(settings).chunk("charts/stack/templates/deployment.yaml", manifest)
    assert len(parts) > 1 and {(c.symbol, c.names) for c in parts} == {("", ("operator", "Deployment/operator"))}
    assert "spec.template.spec" in {c.header for c in parts}
    # a block scalar's lines are text, not keys (caddy's `script: |` gave `jobs.verify-tag.steps.with.script.direction`);
    # a list is cut at its items (an alert rule was cut between its `for:` and its `labels:`), one written at its
    # key's indent too; Windows line ends read as others
    workflow = "jobs:\n  build:\n    steps:\n" + "".join(
        f"      - name: step {n}\n        run: |\n          echo {n}\n          direction: desc\n" for n in range(30))
    steps = FileChunker(settings).chunk(".github/workflows/ci.yml", workflow)
    assert {c.symbol for c in steps} <= {"jobs.build", "jobs.build.steps"} and len(steps) > 1
    assert all(c.text.lstrip().startswith(("jobs:", "- name: step")) for c in steps)
    rules = "groups:\n- name: node\n  rules:\n" + "".join(
        f"  - alert: Alert{n}\n    expr: up == 0\n    for: 5m\n    labels:\n      severity: warning\n" for n in range(30))
    cut = FileChunker(settings).chunk("rules.yaml", rules)
    assert all(c.text.lstrip().startswith(("groups:", "- alert:")) for c in cut)
    crlf = FileChunker(settings).chunk("charts/stack/values.yaml", values.replace("\n", "\r\n"))
    assert [c.symbol for c in crlf] == [c.symbol for c in chunks]
    # a block scalar after a tag (CloudFormation's `!Sub |`) is text; a list item's keys name no path, however
    # large the item; a padded line is read in linear time
    stack = "Resources:\n  Server:\n    UserData:\n      Fn::Base64: !Sub |\n" + "        port: 8080\n" * 200
    assert all("port" not in name for c in FileChunker(settings).chunk("stack.yaml", stack) for name in c.names)
    big_step = "jobs:\n  verify:\n    steps:\n      - name: check\n        with:\n" + "".join(
        f"          key{n}: {'value ' * 8}\n" for n in range(40))
    assert {c.symbol for c in FileChunker(settings).chunk("release.yml", big_step)} <= {"jobs.verify.steps"}
    assert len(FileChunker(IndexSettings()).chunk("pad.yaml", "k: v\nx" + " " * 200_000 + "y\n")) >= 1


def test_sql_is_cut_at_its_statements_each_named_by_what_it_declares():
    """supabase/auth's migrations were 40-line windows named nothing: "where is the refresh_tokens table created"
    found the Go model that names it. Each statement is a block with its comments above, named by what it
    declares (a table also by its columns, an `ALTER TABLE` by the columns it adds); a Go template in a name,
    Postgres' dollar-quoted bodies and a `DO` block's statements are read; small statements go with the table
    before them."""
    migration = ("-- auth.users definition\n\n"
                 'CREATE TABLE IF NOT EXISTS {{ index .Options "Namespace" }}.users (\n'
                 "\tinstance_id uuid NULL,\n\tid uuid NOT NULL UNIQUE,\n\t\"role\" varchar(255) NULL,\n"
                 "\tCONSTRAINT users_pkey PRIMARY KEY (id)\n);\n"
                 'CREATE INDEX IF NOT EXISTS users_instance_id_idx ON {{ index .Options "Namespace" }}.users (instance_id);\n'
                 "comment on table users is 'Auth: Stores user login data; within a secure schema.';\n\n"
                 "create or replace function auth.uid() returns uuid as $$\n"
                 "  select nullif(current_setting('request.jwt.claim.sub', true), '')::uuid; -- a ; inside\n"
                 "$$ language sql stable;\n\n"
                 "do $$ begin\n    create type auth.factor_type as enum('totp', 'webauthn');\n"
                 "exception\n    when duplicate_object then null;\nend $$;\n\n"
                 "alter table auth.users add column if not exists banned_until timestamptz null,\n"
                 "  add constraint users_phone_key unique (phone);\n")
    chunks = FileChunker(IndexSettings()).chunk("migrations/00_init.up.sql", migration)
    assert [(c.symbol, c.kind, c.start_line, c.end_line) for c in chunks] == [
        ("users", "table", 1, 10), ("auth.uid", "function", 12, 14), ("auth.factor_type", "type", 16, 23)]
    assert chunks[0].names == ("users.instance_id", "users.id", "users.role", "users.users_pkey",
                               "users_instance_id_idx")
    assert chunks[-1].names == ("users.banned_until", "users.users_phone_key") and {c.language for c in chunks} == {"sql"}
    # statements that declare no table or routine are one chunk, named by the first column they add
    alters = FileChunker(IndexSettings()).chunk("m.sql", migration.split("end $$;\n\n")[1])
    assert [(c.symbol, c.kind, c.names) for c in alters] == [("users.banned_until", "column", ("users.users_phone_key",))]
    # every line is in one chunk, however the file ends
    covered = [row for c in chunks for row in range(c.start_line, c.end_line + 1)]
    assert sorted(covered) == sorted(set(covered)) and set(covered) >= {
        row for row, line in enumerate(migration.split("\n"), 1) if line.strip()}
    # a routine's `BEGIN ... END` holds its `;` (MySQL's, SQLite's triggers); a transaction's `BEGIN;` does not
    trigger = ("BEGIN;\nCREATE TRIGGER touch AFTER UPDATE ON notes FOR EACH ROW\nBEGIN\n"
               "  UPDATE notes SET updated = now() WHERE id = NEW.id;\n  IF NEW.x THEN SET @a = 1; END IF;\nEND;\n"
               "COMMIT;\n")
    assert [(c.symbol, c.start_line, c.end_line) for c in FileChunker(IndexSettings()).chunk("t.sql", trigger)] == [
        ("touch", 1, 7)]
    # sqlc's named queries; a statement on the row another ends on goes with it; unclosed quotes end at the text's end
    queries = ("-- name: GetAuthor :one\nSELECT * FROM authors\nWHERE id = $1 LIMIT 1;\n\n"
               "-- name: ListAuthors :many\nSELECT * FROM authors ORDER BY name; SELECT 1;\n")
    assert [(c.symbol, c.names) for c in FileChunker(IndexSettings()).chunk("query.sql", queries)] == [
        ("GetAuthor", ()), ("ListAuthors", ())]
    assert FileChunker(IndexSettings()).chunk("bad.sql", "select 'unclosed;\nselect 2;\n")[0].end_line == 2
    # what a review found: strings read as code (`'image/*'` hid the tables after it, `COMMENT 'id, auto'` was a
    # column), a dump's data and escapes, dialects' statement ends, a comment after a statement's end
    def named(text: str) -> list[tuple[str, int, int]]:
        return [(c.symbol, c.start_line, c.end_line) for c in FileChunker(IndexSettings()).chunk("d.sql", text)]
    assert named("INSERT INTO b VALUES ('a', '{image/*}');\nCREATE TABLE users (id int, c text COMMENT 'id, auto');\n"
                 "CREATE TABLE orders (id int);\n") == [("users", 1, 2), ("orders", 3, 3)]
    assert FileChunker(IndexSettings()).chunk("d.sql", "CREATE TABLE u (id int, c text COMMENT 'id, auto');\n")[0].names \
        == ("u.id", "u.c")
    assert named("INSERT INTO `u` VALUES (1,'O\\'Brien');\nCREATE TABLE `o` (`id` int);\nCREATE TABLE i (x int);\n") \
        == [("o", 1, 2), ("i", 3, 3)]
    assert named("CREATE TABLE u (id int);\nCOPY u (id, name) FROM stdin;\n1\tO'Brien\n\\.\n\nCREATE TABLE o (id int);\n") \
        == [("u", 1, 4), ("o", 6, 6)]
    assert named("DELIMITER $$\nCREATE PROCEDURE p()\nBEGIN\n  SELECT 1;\nEND$$\nDELIMITER ;\nCREATE TABLE t (id int);\n") \
        == [("p", 1, 6), ("t", 7, 7)]
    assert named("CREATE PROCEDURE dbo.p\r\nAS\r\nBEGIN\r\n  BEGIN TRANSACTION;\r\n  SELECT 1;\r\nEND\r\nGO\r\n"
                 "CREATE TABLE dbo.o (Id INT);\r\n") == [("dbo.p", 1, 7), ("dbo.o", 8, 8)]
    assert named("CREATE TABLE a (\n  x int\n); -- the a table\n\nCREATE TABLE b (\n  y int\n);\n") == [("a", 1, 3), ("b", 5, 7)]
    # the second review: Postgres' `ESCAPE '\'` ends its string, a column may be named `key`, mysqldump's views
    # are in its conditional comments, a byte order mark opens no statement
    assert named("SELECT 1 WHERE a LIKE 'a\\_%' ESCAPE '\\';\nCREATE TABLE t (key text, value text, KEY k (value));\n") \
        == [("t", 1, 2)]
    assert FileChunker(IndexSettings()).chunk("d.sql", "CREATE TABLE t (key text, value text, KEY k (value));")[0].names \
        == ("t.key", "t.value")
    assert named("/*!50001 CREATE ALGORITHM=UNDEFINED */\n/*!50013 DEFINER=`root`@`localhost` SQL SECURITY DEFINER */\n"
                 "/*!50001 VIEW `v` AS select 1 AS `a` */;\n") == [("v", 1, 3)]
    assert named("\ufeffCREATE TABLE users (id int);\n") == [("users", 1, 1)]
    # a large table is cut in windows that carry its name, each listing the columns on its rows
    wide = "create table wide (\n" + "".join(f"  column_{n} text not null default 'x',\n" for n in range(120)) + \
        "  id int\n);\n"
    parts = FileChunker(IndexSettings()).chunk("wide.sql", wide)
    assert len(parts) > 1 and {c.symbol for c in parts} == {"wide"} and "wide.column_119" in parts[-1].names
    assert "wide.column_119" not in parts[0].names


def test_dbt_macros_are_named_blocks_with_their_adapters_and_comments():
    """A dbt macro holds SQL with no `;` and is called by its name: one chunk each, named, with its comment; an
    adapter's implementation packed with the dispatcher; a `;` inside a Jinja tag ends nothing."""
    macros = ("{# the relation's rows, one per key #}\n{% macro dedupe(relation, key) %}\n"
              "  {{ return(adapter.dispatch('dedupe')(relation, key)) }}\n{% endmacro %}\n\n"
              "{% macro default__dedupe(relation, key) -%}\n  select * from {{ relation }}\n"
              "  qualify row_number() over (partition by {{ key }}) = 1\n{%- endmacro %}\n\n"
              "-- rows where a column is null\n{% test not_null_where(model, column_name) %}\n"
              "select * from {{ model }} where {{ column_name }} is null {# a; b #}\n{% endtest %}\n"
              "create table after_macros (id int);\n{% macro unclosed() %}\nselect 1\n")
    chunks = FileChunker(IndexSettings()).chunk("macros/dedupe.sql", macros)
    assert [(c.symbol, c.kind, c.start_line, c.end_line, c.names) for c in chunks] == [
        ("dedupe", "macro", 1, 9, ("default__dedupe",)), ("not_null_where", "macro", 11, 14, ()),
        ("after_macros", "table", 15, 17, ("after_macros.id",))]
    # a model is one query, named by its file (what `ref('one')` calls it) and headed by the name; its Jinja
    # (`{{ config(...) }}`, `{% set %}`) opens no statement; a script of several statements is not named so
    model = "{{ config(materialized='table') }}\n{% set separator = ';' %}\nselect 1 as one\n"
    assert [(c.symbol, c.kind, c.header, c.start_line, c.end_line)
            for c in FileChunker(IndexSettings()).chunk("models/one.sql", model)] == [("one", "model", "one", 1, 3)]
    assert {c.symbol for c in FileChunker(IndexSettings()).chunk("load.sql", "select 1;\nselect 2;\n")} == {""}
    assert {c.symbol for c in FileChunker(IndexSettings()).chunk("seed.sql", "insert into t values (1);\n")} == {""}


def test_dbt_blocks_are_found_by_their_tags_not_in_comments_strings_or_code():
    """What a review found: a tag in a comment, a string or a Markdown code span opened a block (and an unclosed
    one ended the search), a `%` in a macro's arguments hid it, a nested macro ended its outer one; a model's
    trailing comment stays in its chunk, a query that writes is no model, CRLF lines name models too."""
    def named(path: str, text: str) -> list[tuple[str, int, int]]:
        return [(c.symbol, c.start_line, c.end_line) for c in FileChunker(IndexSettings()).chunk(path, text)]
    assert named("m.sql", "select '{% macro fake() %}' as s;\n{% macro real_one() %}\nselect 1\n{% endmacro %}\n"
                 "{% test unclosed(model) %}\n{% macro real_two() %}\nselect 2\n{% endmacro %}\n") == [
        ("real_one", 1, 5), ("real_two", 6, 8)]  # (the unclosed line packed with the block before it)
    assert named("m.sql", "{% macro fmt(col, pattern='%Y-%m-%d') %}\nselect 1\n{% endmacro %}\n") == [("fmt", 1, 3)]
    nested = FileChunker(IndexSettings()).chunk("m.sql", "{% macro outer() %}\n{% macro inner() %}x{% endmacro %}\n"
                                                          "select 1\n{% endmacro %}\n")
    assert [(c.symbol, c.end_line, c.names) for c in nested] == [("outer", 4, ("inner",))]
    assert named("d.md", "Write `{% docs name %}` blocks\n\n{% docs orders_status %}\nThe status\n{% enddocs %}\n") \
        == [("", 1, 1), ("orders_status", 3, 5)]
    assert named("models/m.sql", "{{ config(materialized='table') }}\n\nselect 1 as a;\n\n-- trailing note\n") == [
        ("m", 1, 5)]
    assert named("models/m2.sql", "select 1 as a\r\nfrom t;\r\n") == [("m2", 1, 2)]
    assert named("models/w.sql", "with x as (select 1) insert into t select * from x;\n") == [("", 1, 1)]
    assert named("db/migrate/001_backfill.sql", "SELECT setval('s', 1);\n") == [("", 1, 1)]


def test_dbt_doc_blocks_are_named_chunks():
    """A dbt project's `{% docs name %}` blocks (what a column's `{{ doc("name") }}` shows) are chunks named by the
    block; Markdown without them is cut by its headings as before."""
    docs = ("{% docs command_invocation_id %}\nThe id of the dbt command that ran.\n{% enddocs %}\n\n"
            "{%- docs node_id -%}\nThe unique id of a node.\n{%- enddocs -%}\n")
    chunks = FileChunker(IndexSettings()).chunk("models/docs.md", docs)
    assert [(c.symbol, c.kind, c.start_line, c.end_line) for c in chunks] == [
        ("command_invocation_id", "docs", 1, 3), ("node_id", "docs", 5, 7)]
    page = "# Setup\n\nInstall the docs.\n"
    assert [c.symbol for c in FileChunker(IndexSettings()).chunk("README.md", page)] == ["Setup"]


def test_a_yaml_lists_items_are_named_by_their_name_key():
    """dbt's properties are lists of named entries (`models: - name: fct_trips`, its `columns: - name: trip_id`):
    the model and its columns are what people look up, not the `models` key every schema file shares. A
    workflow's steps are labelled, not named."""
    models = "version: 2\n\nmodels:\n" + "".join(
        f"  - name: fct_{n}\n    description: the {n} facts\n    columns:\n"
        + "".join(f"      - name: {column}_{n}\n        description: the {column} of a {n}\n"
                  f"        tests:\n          - not_null\n" for column in ("id", "cost", "date"))
        for n in ("trips", "stops"))
    chunks = FileChunker(IndexSettings(chunk_max_chars=400)).chunk("models/_facts.yml", models)
    assert [c.symbol for c in chunks if c.start_line > 1] == ["models.fct_trips", "models.fct_stops"]
    assert {"models.fct_trips.id_trips", "models.fct_trips.cost_trips"} <= set(chunks[1].names)
    assert not any(name.endswith((".description", ".tests", ".columns")) for c in chunks for name in c.names)
    # a list at the document's top names nothing (a fixtures file's records stay packed)
    records = "".join(f"- name: user{n}\n  age: {n}\n" for n in range(300))
    assert len(FileChunker(IndexSettings()).chunk("fixtures.yml", records)) < 10
    # a dbt properties document that fits is named by the one entry it holds, another by nothing
    one = "version: 2\nmodels:\n  - name: dim_date\n    columns:\n      - name: date_key\n"
    assert [(c.symbol, c.header, c.names) for c in FileChunker(IndexSettings()).chunk("models/_dim_date.yml", one)] \
        == [("models.dim_date", "models.dim_date", ("models.dim_date.date_key",))]
    chart = "apiVersion: v2\nname: app\ndependencies:\n  - name: postgresql\n    version: 1.0\n"
    assert [(c.symbol, c.header) for c in FileChunker(IndexSettings()).chunk("Chart.yaml", chart)] == [("", "")]
    workflow = "jobs:\n  build:\n    steps:\n" + "".join(
        f"      - name: Step{n}\n        run: echo {'x' * 60}\n" for n in range(12))
    assert not any("Step" in name for c in FileChunker(IndexSettings(chunk_max_chars=400)).chunk(
        ".github/workflows/b.yml", workflow) for name in (c.symbol, *c.names))


def test_protobuf_declarations_are_chunks_named_by_their_names():
    """grpc-gateway's `.proto` files were 40-line windows that each previewed as `syntax = "proto3";`: "BulkEcho"
    found the generated `_grpc.pb.go` first. Each top-level message, enum, service and extension is a chunk
    with the comment above it, listing its rpcs, fields, nested messages and enum values."""
    proto = ('syntax = "proto3";\n\npackage grpc.gateway.examples;\n\nimport "google/api/annotations.proto";\n\n'
             "// Defines some more operations to be added to ABitOfEverythingService\n"
             "service StreamService {\n"
             "  rpc BulkCreate(stream ABitOfEverything) returns (google.protobuf.Empty) {\n"
             '    option (google.api.http) = {\n      post: "/v1/example/a_bit_of_everything/bulk" // a { in a comment\n'
             '      body: "*"\n    };\n  }\n'
             "  rpc BulkEcho(stream grpc.gateway.examples.sub.StringMessage) returns (stream Options) {}\n}\n\n"
             "/* Options of a stream. */\nmessage Options {\n  // whether to fail\n  bool error = 1;\n"
             '  map<string, int32> counts = 2 [json_name = "c", default = 5];\n'
             "  message Inner { string name = 1; }\n  oneof choice {\n    string a = 3;\n  }\n"
             '  option (x) = { id: 5 };\n}\n\nenum Scheme { UNKNOWN = 0; HTTP = 1; }\n'
             "extend google.protobuf.FieldOptions {\n  JSONSchema openapiv2_field = 1042;\n}\n")
    chunks = FileChunker(IndexSettings()).chunk("examplepb/stream.proto", proto)
    assert [(c.symbol, c.kind, c.start_line, c.end_line) for c in chunks] == [
        ("", "text", 1, 5), ("StreamService", "service", 7, 16), ("Options", "message", 18, 28),
        ("Scheme", "enum", 30, 30), ("openapiv2_field", "extension", 31, 33)]
    assert chunks[1].names == ("StreamService.BulkCreate", "StreamService.BulkEcho")
    assert chunks[2].names == ("Options.error", "Options.counts", "Options.Inner", "Options.Inner.name",
                               "Options.choice", "Options.a")
    assert chunks[3].names == ("Scheme.UNKNOWN", "Scheme.HTTP") and {c.language for c in chunks} == {"proto"}


def test_graphql_and_prisma_declarations_are_chunks_named_by_their_names():
    """Both are a service's schema (source) and were 40-line windows: a type asked for by name was defined
    nowhere. Each declaration is a chunk with the description above it, listing its fields."""
    graphql = ('"""\nA date-time string at UTC.\n"""\nscalar DateTime\n\ntype Mutation {\n'
               "  signup(email: String!, name: String): AuthPayload # a new user\n"
               "  login(email: String!): AuthPayload\n}\n\n"
               "schema {\n  query: Query\n}\n\nenum SortOrder {\n  asc\n  desc\n}\n\n"
               "query Feed($take: Int) {\n  feed(take: $take) {\n    id\n    title\n  }\n}\n")
    chunks = FileChunker(IndexSettings()).chunk("schema.graphql", graphql)
    assert [(c.symbol, c.kind, c.start_line, c.end_line) for c in chunks] == [
        ("DateTime", "scalar", 1, 4), ("Mutation", "type", 6, 9), ("schema", "schema", 11, 13),
        ("SortOrder", "enum", 15, 18), ("Feed", "query", 20, 25)]
    assert chunks[1].names == ("Mutation.signup", "Mutation.login") and chunks[2].names == ("schema.query",)
    assert chunks[3].names == ("SortOrder.asc", "SortOrder.desc") and chunks[4].names == ("Feed.feed",)
    prisma = ('datasource db {\n  provider = "postgresql"\n  url      = env("DATABASE_URL")\n}\n\n'
              "/// A user of the blog\nmodel User {\n  id    Int     @id @default(autoincrement())\n"
              "  email String  @unique // {\n  posts Post[]\n  @@index([email])\n}\n")
    chunks = FileChunker(IndexSettings()).chunk("prisma/schema.prisma", prisma)
    assert [(c.symbol, c.kind, c.start_line, c.end_line, c.names) for c in chunks] == [
        ("db", "datasource", 1, 4, ("db.provider", "db.url")),
        ("User", "model", 6, 12, ("User.id", "User.email", "User.posts"))]
    assert {c.language for c in chunks} == {"prisma"}


def test_a_graphql_declarations_header_may_go_on_over_lines():
    """What a review found: prettier's multi-line variables, `@key` or `implements` below a type's name, a field's
    arguments on lines of their own (GitHub's schema), CRLF, a directive on the schema."""
    def named(text: str) -> list[tuple[str, int, int, tuple[str, ...]]]:
        return [(c.symbol, c.start_line, c.end_line, c.names) for c in FileChunker(IndexSettings()).chunk("s.graphql", text)]
    assert named("query Search(\n  $q: String!\n) {\n  search(\n    query: $q\n    type: REPO\n  ) {\n    count\n  }\n}\n") \
        == [("Search", 1, 10, ("Search.search",))]
    assert named('type Event\n  @key(fields: "id") {\n  id: ID!\n  type: EventType!\n}\n') \
        == [("Event", 1, 5, ("Event.id", "Event.type"))]
    assert named("type User implements\n  & Node\n  & Entity {\n  id: ID!\n}\n") == [("User", 1, 5, ("User.id",))]
    assert named('type Repo {\n  users(\n    """\n    cursor\n    """\n    after: String\n  ): [User!]!\n  id: ID!\n}\n') \
        == [("Repo", 1, 9, ("Repo.users", "Repo.id"))]
    assert named("enum Role {\r\n  ADMIN\r\n  USER\r\n}\r\n") == [("Role", 1, 4, ("Role.ADMIN", "Role.USER"))]
    assert named('schema @link(url: "x") {\n  query: Query\n}\nunion R =\n  | A\n  | B\n') \
        == [("schema", 1, 3, ("schema.query",)), ("R", 4, 6, ())]


DART = '''import 'package:flutter/widgets.dart';

final settingsProvider = NotifierProvider<SettingsService, Settings>(SettingsService.new);
const kTimeout = Duration(seconds: 3);

/// Keeps the user's settings.
@immutable
class SettingsService extends Notifier<Settings> {
  SettingsService(this._store);
  SettingsService.inMemory() : _store = MemoryStore();
  factory SettingsService.fromJson(Map<String, dynamic> json) => SettingsService(Store.of(json));

  final Store _store;
  static const int maxAliasLength = 24;

  String get alias => state.alias;

  /// Renames this device.
  Future<void> setAlias(String alias) async {
    await _store.write('alias', alias);
  }

  bool operator ==(Object other) => other is SettingsService;
}

mixin Logging on Object {
  void log(String message) => print(message);
}

extension DeviceName on String {
  String shortened() => length > 8 ? substring(0, 8) : this;
}

extension on int {
  bool get isPort => this > 0 && this < 65536;
}

enum Mode { light, dark }

typedef OnChanged = void Function(Settings settings);

String describe(Settings settings) {
  String quoted(String text) => '"$text"';
  return quoted(settings.alias);
}
'''


def test_dart_definitions_are_named_with_their_bodies():
    """tree-sitter-dart puts a method's body beside its head (`method_signature`, then `function_body`):
    each definition is one chunk from its doc comment and annotations to the end of its body, named as it
    is called (`SettingsService.fromJson`, an unnamed constructor its class's `constructor`), with the
    fields, constants and providers it declares as names. Before, a `.dart` file was 40-line windows that
    named nothing."""
    chunker = FileChunker(IndexSettings(chunk_max_chars=420))  # the class too large for one chunk
    chunks = chunker.chunk("lib/provider/settings.dart", DART)
    by_symbol = {c.symbol: c for c in chunks}
    assert {"SettingsService.constructor", "SettingsService.inMemory", "SettingsService.fromJson",
            "SettingsService.alias", "SettingsService.setAlias", "SettingsService.operator ==", "Logging",
            "DeviceName", "int (extension)", "Mode", "OnChanged", "describe"} <= set(by_symbol)
    set_alias = by_symbol["SettingsService.setAlias"]
    assert set_alias.kind == "method"
    assert set_alias.text.startswith("  /// Renames this device.") and set_alias.text.endswith("  }")
    assert "class SettingsService" in set_alias.header
    assert by_symbol["SettingsService.inMemory"].kind == "constructor"
    assert by_symbol["DeviceName"].names == ("DeviceName.shortened",)
    assert by_symbol["describe"].names == ("describe.quoted",)  # a local function, named in its scope
    assert by_symbol["Mode"].names == ("Mode.light", "Mode.dark")
    head = next(c for c in chunks if c.start_line == 1)
    assert {"settingsProvider", "kTimeout"} <= set(head.names)
    assert {"SettingsService._store", "SettingsService.maxAliasLength"} <= {name for c in chunks for name in c.names}
    whole = {c.symbol: c for c in FileChunker(IndexSettings()).chunk("lib/provider/settings.dart", DART)}
    service = whole["SettingsService"]
    assert service.text.startswith("/// Keeps the user's settings.\n@immutable\nclass SettingsService")
    assert {"SettingsService.setAlias", "SettingsService.alias", "SettingsService._store"} <= set(service.names)


def test_dart_tests_are_named_by_their_titles():
    """package:test's, flutter_test's and bloc_test's titled blocks, inside `main`: a test file too large
    for one chunk is cut by them, each named by its title in quotes (no definition of the code it tests)."""
    body = "".join(f"    blocTest<CounterBloc, int>(\n      'emits [{n}] when incremented {n} times',\n"
                   f"      build: CounterBloc.new,\n      act: (bloc) => bloc.add(Increment()),\n"
                   f"      expect: () => [{n}],\n    );\n" for n in range(1, 40))
    text = ("void main() {\n  group('CounterBloc', () {\n    test(\"starts at 0\", () {\n"
            "      expect(CounterBloc().state, 0);\n    });\n" + body + "  });\n\n"
            "  testWidgets(r'shows the count', (tester) async {\n    await tester.pumpWidget(App());\n  });\n}\n")
    symbols = [c.symbol for c in FileChunker(IndexSettings()).chunk("test/counter_bloc_test.dart", text)]
    assert 'main.group "CounterBloc".test "starts at 0"' in symbols
    assert 'main.group "CounterBloc".blocTest "emits [7] when incremented 7 times"' in symbols
    assert 'main.testWidgets "shows the count"' in symbols


def test_gdscript_functions_and_classes_are_chunks_and_its_members_are_names():
    """Godot's scripts by their grammar: a function or an inner class is a chunk named by it, its doc comment
    with it; the script's `class_name`, signals, constants, enums and variables are names of the lines that
    declare them (a game's tuning lives there: `jump_force` asked for by name)."""
    text = (MORE / "gdscript/player.gd").read_text() + (
        "\nenum State {IDLE, RUN}\n\nclass Inventory:\n\tvar items = []\n\tfunc add(item):\n\t\titems.append(item)\n")
    chunks = FileChunker(IndexSettings()).chunk("player/player.gd", text)
    by_symbol = {c.symbol: c for c in chunks}
    assert {"_physics_process", "try_jump", "Inventory"} <= set(by_symbol)
    assert by_symbol["try_jump"].text.startswith("## Jump from the floor") and by_symbol["try_jump"].kind == "function"
    assert set(by_symbol["Inventory"].names) == {"Inventory.items", "Inventory.add"}
    head = next(c for c in chunks if c.start_line == 1)
    assert {"Player", "landed", "RUN_SPEED", "JUMP_VELOCITY", "air_jump_boost"} <= set(head.names)
    assert "State" in {name for c in chunks for name in c.names}
    assert {c.language for c in chunks} == {"gdscript"}


def test_a_kubernetes_manifest_is_named_by_its_object():
    """A manifest's keys are the API's, in every manifest alike; its object is the workspace's: a ClusterIssuer
    asked for by name was first at P(here) 0.16 ("probably not here"), defined nowhere. A template's name is none."""
    text = ("apiVersion: cert-manager.io/v1\nkind: ClusterIssuer\nmetadata:\n  name: letsencrypt-prod\n"
            "  namespace: cert-manager\nspec:\n  acme:\n    privateKeySecretRef:\n      name: letsencrypt-prod\n"
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: \"gitea\"  # the forge\nspec:\n"
            "  replicas: 1\n---\napiVersion: v1\nkind: Service\nmetadata:\n  name: {{ include \"x.fullname\" . }}\n")
    chunks = FileChunker(IndexSettings()).chunk("platform/issuer.yaml", text)
    assert [c.names for c in chunks] == [
        ("letsencrypt-prod", "ClusterIssuer/letsencrypt-prod", "cert-manager/letsencrypt-prod"),
        ("gitea", "Deployment/gitea"), ()]
    assert {c.symbol for c in chunks} == {""}


def test_a_makefile_is_cut_at_its_rules():
    """`make backup`'s recipe opened at `restore:` (a 40-line window of no name): each rule is a chunk named by its
    first target, its recipe and the comment above it with it; variables are names; `.PHONY` and `$(X):` no rule."""
    text = (".PHONY: backup restore\nKUBECONFIG = $(shell pwd)/kubeconfig.yaml\nCLUSTER ?= homelab\n\n"
            "default: metal system\n\n# nightly volume backups\nbackup:\n\t./scripts/backup --action setup \\\n"
            "\t  --namespace=jellyfin\n\nrestore staging-restore:: backup\n\t./scripts/backup --action restore\n\n"
            "$(BIN): main.go\n\tgo build -o $@\n\n%.o: %.c\n\t$(CC) -c $<\n")
    chunks = FileChunker(IndexSettings()).chunk("Makefile", text)
    by_symbol = {c.symbol: c for c in chunks if c.symbol}
    assert set(by_symbol) == {"default", "backup", "restore", "%.o"}
    assert by_symbol["backup"].text.startswith("# nightly volume backups\nbackup:") and by_symbol["backup"].end_line == 10
    assert by_symbol["restore"].names == ("staging-restore",) and by_symbol["restore"].kind == "rule"
    assert {"KUBECONFIG", "CLUSTER"} <= {name for c in chunks for name in (c.symbol, *c.names)}
    assert not any("$(BIN)" in (c.symbol, *c.names) or ".PHONY" in c.symbol for c in chunks)
    assert [c.symbol for c in FileChunker(IndexSettings()).chunk("build/rules.mk", "all:\n\techo\n")] == ["all"]


def test_ansible_variables_are_names_where_they_are_set():
    """An inventory's `control_plane_endpoint`, asked for by name, was first at P(here) 0.05, defined nowhere: the
    keys right under a `vars:` and a variables file's top-level keys are Ansible's variables, used bare."""
    inventory = ("all:\n  vars:\n    control_plane_endpoint: 192.168.1.100\n    load_balancer_ip_pool:\n"
                 "      - 192.168.1.224/27\nmetal:\n  children:\n    masters:\n      hosts:\n        metal0: {}\n")
    chunks = FileChunker(IndexSettings()).chunk("metal/inventories/prod.yml", inventory)
    assert [c.names for c in chunks] == [("control_plane_endpoint", "load_balancer_ip_pool")]
    defaults = "---\nhubot_home: /opt/hubot\nhubot_owner: hubot\nhubot_adapters:\n  slack: true\n"
    chunks = FileChunker(IndexSettings()).chunk("roles/hubot/defaults/main.yml", defaults)
    assert [c.names for c in chunks] == [("hubot_home", "hubot_owner", "hubot_adapters")]
    # a small file elsewhere keeps its keys unnamed (a compose file's `services`, `image`)
    assert FileChunker(IndexSettings()).chunk("docker-compose.yml", "services:\n  web:\n    image: nginx\n")[0].names == ()


def test_ansible_tasks_are_chunks_named_by_their_names():
    """A role's tasks were 60-line chunks named nothing: the embedder read their first few, and a hit on the
    firewall task opened at `- hosts: all`. A playbook's, a role's and an included file's tasks are each a
    chunk named by its `name:` (what `ansible-playbook` prints), read as source; a registered result is a name.
    A list elsewhere (a compose file's, a workflow's steps) is cut as before."""
    filler = "".join(f"    - name: Install package {n}.\n      apt:\n        name: pkg{n}\n        state: present\n\n"
                     for n in range(30))
    playbook = ("---\n- hosts: all\n  become: true\n\n  handlers:\n    - name: restart ssh\n"
                "      service: name=sshd\n\n  tasks:\n    # Configuring a firewall on RHEL.\n"
                "    - name: \"Configure open ports with firewalld.\"\n"
                "      firewalld:\n        port: \"{{ item }}\"\n      with_items: [22/tcp, 80/tcp]\n"
                "      register: firewall_result\n\n" + filler)
    chunks = FileChunker(IndexSettings()).chunk("security/main.yml", playbook)
    firewall = next(c for c in chunks if c.symbol == "Configure open ports with firewalld.")
    assert "    # Configuring a firewall on RHEL.\n    - name:" in firewall.text and firewall.end_line == 15
    assert firewall.names == ("firewall_result",) and firewall.header == ""
    assert [c.symbol for c in chunks][-1] == "Install package 29." and len(chunks) == 32
    assert {c.kind for c in chunks} == {"objects"} and chunks[0].text.startswith("- hosts: all")
    included = "".join(f"- name: Run container {n}.\n  docker_container:\n    image: app{n}\n  when: run_{n}\n\n"
                       for n in range(40))
    assert [c.symbol for c in FileChunker(IndexSettings()).chunk("provisioning/docker.yml", included)][:2] == [
        "Run container 0.", "Run container 1."]
    role = "---\n- name: Enable k3s service\n  systemd:\n    name: k3s\n    enabled: true\n"
    assert [c.kind for c in FileChunker(IndexSettings()).chunk("roles/k3s/tasks/main.yml", role)] == ["objects"]
    steps = "".join(f"      - name: Step {n}\n        run: make step-{n} && echo done-{n}\n" for n in range(80))
    workflow = FileChunker(IndexSettings()).chunk(".github/workflows/ci.yml",
                                                  f"on: push\njobs:\n  build:\n    steps:\n{steps}")
    assert {c.kind for c in workflow} == {"text"} and not any(c.symbol.startswith("Step") for c in workflow)
    assert len(workflow) < 10


def test_a_mobile_apps_settings_are_named_by_their_keys():
    """A mobile developer asks for settings by their keys: `aps-environment` was "probably not here" (P(here)
    0.00, its entitlements file second), a string resource's name and a version catalog's alias alike. A property
    list's keys, an Android resource's and a permission's names, a TOML file's key paths and a version catalog's
    aliases with the accessors build scripts write are names of the windows that hold them."""
    entitlements = ('<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" '
                    '"http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n<plist version="1.0">\n<dict>\n'
                    '\t<key>aps-environment</key>\n\t<string>development</string>\n'
                    '\t<key>com.apple.security.application-groups</key>\n\t<array/>\n</dict>\n</plist>\n')
    chunks = FileChunker(IndexSettings()).chunk("App/App.entitlements", entitlements)
    assert chunks[0].names == ("aps-environment", "com.apple.security.application-groups")
    assert preview(chunks[0].text).startswith("<key>aps-environment</key>")  # not the prolog
    resources = ('<resources>\n    <string name="not_connected">⚠️ You aren’t connected</string>\n'
                 '    <plurals name="topics">\n        <item quantity="one">%d topic</item>\n    </plurals>\n'
                 '</resources>\n')
    assert FileChunker(IndexSettings()).chunk("app/src/main/res/values/strings.xml", resources)[0].names == (
        "not_connected", "topics")
    manifest = ('<manifest xmlns:android="http://schemas.android.com/apk/res/android">\n'
                '    <uses-permission android:name="android.permission.POST_NOTIFICATIONS" />\n'
                '    <application>\n        <activity android:name=".MainActivity" />\n    </application>\n'
                '</manifest>\n')
    assert FileChunker(IndexSettings()).chunk("app/src/main/AndroidManifest.xml", manifest)[0].names == (
        "android.permission.POST_NOTIFICATIONS",)  # not the activity: a class the code defines
    catalog = ('[versions]\nandroidxComposeBom = "2025.09.01"\nroom = "2.8.3"\n\n[libraries]\n'
               'androidx-room-runtime = { group = "androidx.room", name = "room-runtime", version.ref = "room" }\n\n'
               '[plugins]\nnowinandroid-hilt = { id = "nowinandroid.hilt" }\n')
    names = FileChunker(IndexSettings()).chunk("gradle/libs.versions.toml", catalog)[0].names
    assert names == ("androidxComposeBom", "libs.versions.androidxComposeBom", "room", "libs.versions.room",
                     "androidx-room-runtime", "libs.androidx.room.runtime", "nowinandroid-hilt",
                     "libs.plugins.nowinandroid.hilt", "nowinandroid.hilt")
    cargo = '[package]\nname = "fd-find"\n\n[dependencies.clap]\nversion = "4"\n[[bin]]\nname = "fd"\n'
    assert FileChunker(IndexSettings()).chunk("Cargo.toml", cargo)[0].names == (
        "package.name", "dependencies.clap.version", "bin.name")


def test_a_kotlin_definition_read_as_an_annotated_expression_keeps_its_name():
    """tree-sitter-kotlin 1.1 reads some functions and types behind two annotations as an annotated expression
    (in a long file, or one being edited): nowinandroid's `NotificationPermissionEffect` Composable was a chunk
    named nothing, and asked for by name it was P(here) 0.76 where every other Composable was 0.99."""
    from noul_lsp.chunking.languages import parser_for

    source = "\n".join((
        "fun A() {", "  val x = 1", "}", "", "@Composable", "@OptIn(ExperimentalPermissionsApi::class)",
        "private fun NotificationPermissionEffect() {",
        "    // Permission requests should only be made from an Activity Context, which is not present",
        "    // in previews", "    if (LocalInspectionMode.current) return",
        "    if (VERSION.SDK_INT < VERSION_CODES.TIRAMISU) return",
        "        android.Manifest.permission.POST_NOTIFICATIONS,", "    )",
        "    LaunchedEffect(notificationsPermissionState) {",
        "        val status = notificationsPermissionState.status",
        "        if (status is Denied && !status.shouldShowRationale) {",
        "            notificationsPermissionState.launchPermissionRequest()", "        }", "    }", "}", ""))
    assert "annotated_expression" in [c.type for c in parser_for("kotlin").parse(source.encode()).root_node.children]
    assert "NotificationPermissionEffect" in [c.symbol for c in FileChunker(IndexSettings()).chunk("a.kt", source)]
    typed = source.replace("private fun NotificationPermissionEffect() {", "interface Factory {")
    assert "Factory" in [c.symbol for c in FileChunker(IndexSettings()).chunk("a.kt", typed)]


def test_a_phoenix_routers_scopes_and_pipelines_are_its_chunks():
    """hexpm's router was 13 windows named by the module: `post "/publish"` was in no find's sixty chunks for
    "which API route handles publishing a package tarball". Its scopes and pipelines are chunks titled by
    their first argument; a `scope` call without a block is none."""
    routes = "".join(f'    post "/route{n}", ReleaseController, :action{n}\n' for n in range(40))
    router = ("defmodule HexpmWeb.Router do\n  use HexpmWeb, :router\n\n  pipeline :api do\n"
              "    plug :accepts, [\"json\"]\n  end\n\n  scope \"/api\", HexpmWeb.API do\n    pipe_through :api\n"
              f"{routes}  end\n\n  def helper(x), do: scope(x)\nend\n")
    symbols = [c.symbol for c in FileChunker(IndexSettings()).chunk("lib/hexpm_web/router.ex", router)]
    assert 'HexpmWeb.Router.pipeline ":api"' in symbols and 'HexpmWeb.Router.scope "/api"' in symbols
    assert "HexpmWeb.Router.helper" in symbols


def test_helm_templates_output_is_a_tools():
    """`helm template`'s output heads each document with the chart file it came from: a homelab's rendered 900 KB
    of CustomResourceDefinitions were 650 chunks of `config`. A chart's own template is no output."""
    from noul_lsp.chunking import generated_by_a_tool

    assert generated_by_a_tool("---\n# Source: cert-manager/templates/crds.yaml\napiVersion: apiextensions.k8s.io/v1\n")
    assert generated_by_a_tool("---\n# Source: kube-prometheus-stack/charts/grafana/templates/secret.yaml\n")
    assert not generated_by_a_tool("# Source: https://github.com/acme/app\napiVersion: v1\nkind: Service\n")


def test_lua_globals_at_a_files_top_are_its_names():
    """A LÖVE game keeps its tuning and its classes in globals (`jumpforce = 16`, `lakito = class:new()`): asked
    for by name they were "probably not here". A field (`M.x = 1`), a local and a function's globals are not."""
    source = ("jumpforce = 16\nmaxyspeed, gravity = 100, 80\nlocal speed = 3\nlakito = class:new()\nM.x = 1\n\n"
              "function lakito:init(x)\n  self.x = x\n  counter = 0\nend\n")
    chunks = FileChunker(IndexSettings()).chunk("lakito.lua", source)
    assert [(c.symbol, c.names) for c in chunks] == [("", ("jumpforce", "maxyspeed", "gravity", "lakito")),
                                                     ("lakito:init", ())]


def test_a_run_of_numbers_is_no_chunk_past_the_line_that_declares_it():
    """An image a Godot scene embeds (`PackedByteArray(...)` on one line of hundreds of KB), a level's tiles
    in a constant, a font compiled into a C array: numbers no description finds, once a chunk each (a 686 KB
    scene was 397 chunks of digits, each embedded). The lines that declare them stay."""
    image = ", ".join(str((n * 37) % 256) for n in range(60_000))
    scene = ('[gd_scene load_steps=2 format=3]\n\n[sub_resource type="Image" id="Image_1"]\ndata = {\n'
             f'"data": PackedByteArray({image}),\n"format": "RGBA8"\n}}\n\n[node name="Sprite" type="Sprite2D"]\n'
             'texture = SubResource("Image_1")\n')
    chunks = FileChunker(IndexSettings()).chunk("levels/scene.tscn", scene)
    assert len(chunks) <= 3 and any('node name="Sprite"' in c.text for c in chunks)
    tiles = ",\n".join(", ".join(str((row + column) % 7) for column in range(40)) for row in range(200))
    level = (f"extends Node\n\nconst LEVEL_TILES = [\n{tiles}\n]\n\n"
             "func load_level():\n\tfor t in LEVEL_TILES:\n\t\tprint(t)\n")
    chunks = FileChunker(IndexSettings()).chunk("level.gd", level)
    assert [c.symbol for c in chunks] == ["", "load_level"] and "LEVEL_TILES" in chunks[0].names
    font = ("static const unsigned char font_data[] = {\n"
            + "\n".join(", ".join(f"0x{(n * row) % 256:02x}" for n in range(16)) + "," for row in range(400))
            + "\n};\nint glyph(int c) { return font_data[c]; }\n")
    chunks = FileChunker(IndexSettings()).chunk("src/font.h", font)
    assert chunks[0].text.startswith("static const unsigned char font_data[]") and chunks[-1].symbol == "glyph"
    assert len(chunks) == 2
    # code with many numbers and commas is code: a table of named settings, a test's expected values
    table = "".join(f"    ({n}, {n * 2}, {n * 3}, 'case_{n}'),\n" for n in range(80))
    assert FileChunker(IndexSettings()).chunk("cases.py", f"CASES = [\n{table}]\n")


def test_a_file_a_tool_wrote_is_cut_into_windows():
    """A generated file's definitions are the tool's (`_$UserFromJson`, a translation's getters): it is read in
    line windows of kind `generated`, whatever its language, not a chunk per getter."""
    getters = "".join(f"  String get label{n} => 'Label {n}';\n" for n in range(200))
    text = ("// GENERATED CODE - DO NOT MODIFY BY HAND\n\npart of 'strings.dart';\n\n"
            "class _TranslationsFi extends Translations {\n" + getters + "}\n")
    chunks = FileChunker(IndexSettings()).chunk("lib/gen/strings_fi.g.dart", text)
    assert {c.kind for c in chunks} == {"generated"} and {c.symbol for c in chunks} == {""}
    assert {c.language for c in chunks} == {"dart"}
    assert len(chunks) < 12  # 205 lines in windows, not a chunk per getter
    assert chunks[0].start_line == 1 and chunks[-1].end_line >= 205
    # each getter's name on the windows that hold its line (line 156), not on the class's first window only
    assert {(c.start_line, c.end_line) for c in chunks if "_TranslationsFi.label150" in c.names} == \
        {(c.start_line, c.end_line) for c in chunks if c.start_line <= 156 <= c.end_line}
    bundle = "// Code generated by esbuild. DO NOT EDIT.\n" + "var a=function(){return 1};" * 20000 + "\n"
    assert {c.names for c in FileChunker(IndexSettings()).chunk("dist/app.js", bundle)} == {()}  # minified: unread


def test_dart_names_read_from_the_shapes_the_grammar_gives_them():
    """What a first reading of Dart got wrong: a method's local function is the method's (it was listed as its
    class's member), a mixin application and an extension on a prefixed type are named by their own names, a
    body below a comment is its head's, a title cut over two strings is one title, a group may be titled by the
    type it tests, and a test's header is its group's head, not the group's first test."""
    text = ("class Service {\n  void run() {\n    int helper(int x) => x + 1;\n    helper(1);\n  }\n"
            "  abstract final int count;\n}\n"
            "class MixedIn = Base with Mix;\n"
            "extension on rust.DeviceType {\n  int f() => 1;\n}\n"
            "void top() // why\n{\n  print(2);\n}\n")
    by_symbol = {c.symbol: c for c in FileChunker(IndexSettings()).chunk("lib/service.dart", text)}
    assert by_symbol["Service"].names == ("Service.run", "Service.run.helper", "Service.count")
    assert "MixedIn" in by_symbol and by_symbol["DeviceType (extension)"].names == ("DeviceType.f",)
    assert (by_symbol["top"].start_line, by_symbol["top"].end_line) == (12, 15)
    tests = "".join(f"    test('case {n} '\n        'of many', () {{\n      expect({n}, {n});\n    }});\n"
                    for n in range(40))
    chunks = FileChunker(IndexSettings()).chunk(
        "test/options_test.dart", "void main() {\n  group(AnalysisOptionsYaml, () {\n" + tests + "  });\n}\n")
    case = next(c for c in chunks if c.symbol.endswith('test "case 7 of many"'))
    assert case.symbol == 'main.group "AnalysisOptionsYaml".test "case 7 of many"'
    assert case.header == "group(AnalysisOptionsYaml, ()"


def test_a_file_a_tool_wrote_keeps_the_names_it_defines():
    """Read in windows, a generated file still defines what it defines (a generated GraphQL schema's `User`,
    riverpod's `todosProvider`: defined nowhere else), each name on the window it starts in."""
    text = ("// GENERATED CODE - DO NOT MODIFY BY HAND\n\npart of 'todos.dart';\n\n"
            + "".join(f"String _$hash{n}() => r'{n}';\n\n" for n in range(60))
            + "final todosProvider = AutoDisposeProvider<List<Todo>>.internal(todos);\n")
    chunks = FileChunker(IndexSettings()).chunk("lib/todos.g.dart", text)
    assert {c.kind for c in chunks} == {"generated"}
    holding = [c for c in chunks if "todosProvider" in c.names]
    assert holding and all(c.start_line <= 125 <= c.end_line for c in holding)
    assert any("_$hash0" in c.names for c in chunks)


def test_a_rails_models_declarations_rake_tasks_and_schema_tables_are_named():
    """Lobsters' `User` had 25 associations and scopes defined nowhere (`hottest`, asked by name, was "probably
    not here" at P(here) 0.02), a rake task was `other` and named nothing, and `db/schema.rb`, which says a tool
    wrote it, was windows that named no table."""
    model = ('class Story < ApplicationRecord\n  MAX_EDIT_MINS = 90\n  belongs_to :user\n'
             '  has_many :comments, -> { order(:id) }, inverse_of: :story\n  has_one :moderation\n'
             '  scope :hottest, -> { order(hotness: :asc) }\n  attr_reader :editor, :previewing\n'
             '  delegate :username, to: :user\n  enum status: { active: 0, hidden: 1 }\n'
             '  validates :title, presence: true\n  before_save :update_hotness\n'
             '  def update_hotness\n    self.hotness = 1\n    has_many :nothing\n    LOCAL = 2\n  end\nend\n')
    chunks = FileChunker(IndexSettings()).chunk("app/models/story.rb", model)
    assert chunks[0].symbol == "Story" and chunks[0].names == (
        "Story.MAX_EDIT_MINS", "Story.user", "Story.comments", "Story.moderation", "Story.hottest", "Story.editor",
        "Story.previewing", "Story.username", "Story.status", "Story.active", "Story.hidden",
        "Story.update_hotness")  # an enum's values are methods too; a method's calls name nothing
    # an enum's options and a delegate's prefix are no names of theirs; a concern's `included do` is its body
    more = ('class Story < ApplicationRecord\n  enum :role, { admin: 0 }, prefix: :as\n'
            '  delegate :username, to: :user, prefix: true\n  delegate :name, to: :tag, prefix: :tag\nend\n'
            'module Taggable\n  extend ActiveSupport::Concern\n  included do\n    has_many :taggings\n  end\nend\n')
    assert [c.names for c in FileChunker(IndexSettings()).chunk("app/models/story.rb", more)] == [
        ("Story.role", "Story.admin", "Story.user_username", "Story.tag_name"), ("Taggable.taggings",)]
    rake = ('namespace :lobsters do\n  desc "wipe private data"\n  task privacy_wipe: :environment do\n'
            '    User.delete_all\n  end\n\n  task :stats do\n    puts 1\n  end\nend\n')
    tasks = FileChunker(IndexSettings()).chunk("lib/tasks/privacy_wipe.rake", rake)
    assert tasks[0].kind == "namespace" and tasks[0].symbol == "lobsters"
    assert {"lobsters.privacy_wipe", "lobsters.stats"} <= set(tasks[0].names)
    schema = ('# This file is auto-generated from the current state of the database. Instead\n'
              '# of editing this file, please use the migrations feature of Active Record.\n\n'
              'ActiveRecord::Schema[8.0].define(version: 2026_06_13_004304) do\n'
              '  create_table "votes", force: :cascade do |t|\n    t.bigint "user_id", null: false\n  end\n\n'
              '  create_table "tags" do |t|\n    t.string "tag"\n  end\nend\n')
    tables = FileChunker(IndexSettings()).chunk("db/schema.rb", schema)
    assert [(c.kind, c.symbol) for c in tables if c.kind == "table"] == [("table", "votes"), ("table", "tags")]
    assert FileChunker(IndexSettings()).chunk("db/queue_schema.rb", schema)[1].symbol == "votes"  # Rails 8's
    assert FileChunker(IndexSettings()).chunk("vendor/other/schema.rb", schema)[0].kind == "generated"
    # a stylesheet compiled from Sass ends with its source map: a tool's output (PetClinic's was 45% of its chunks)
    compiled = ("/* Copyright 2016 */\n.navbar { margin-bottom: 30px; }\n\n"
                "/*# sourceMappingURL=../target/petclinic.css.map */")
    assert {c.kind for c in FileChunker(IndexSettings()).chunk("static/css/petclinic.css", compiled)} == {"generated"}
    assert "generated" not in {c.kind for c in FileChunker(IndexSettings()).chunk("docs/maps.md", compiled)}
    # .NET's mark in a file's leading comments, not a source generator's doc comment that writes it
    generator = 'using X;\n/// <summary>writes // <auto-generated /></summary>\nclass G {\n  void Run() {}\n}\n'
    assert "generated" not in {c.kind for c in FileChunker(IndexSettings()).chunk("Gen/G.cs", generator)}
    designer = "\ufeff// <auto-generated />\nusing System;\nclass Snapshot {\n  void Build() {}\n}\n"
    assert {c.kind for c in FileChunker(IndexSettings()).chunk("Migrations/Snapshot.cs", designer)} == {"generated"}


def test_java_constants_and_mybatis_statements_are_named():
    """PetClinic's `VIEWS_PETS_CREATE_OR_UPDATE_FORM` opened at a method using it (P(here) 0.31), and a MyBatis
    mapper was windows of XML: `selectArticleData`, a fragment only the XML defines, was "probably not here"."""
    java = ('class PetController {\n  private static final String VIEWS_FORM = "pets/form", OTHER = "x";\n'
            '  private final OwnerRepository owners;\n  interface Limits { int MAX = 3; }\n'
            '  void show() { final int local = 1; }\n}\n')
    chunks = FileChunker(IndexSettings()).chunk("src/main/java/PetController.java", java)
    assert set(chunks[0].names) >= {"PetController.VIEWS_FORM", "PetController.OTHER"}
    assert not any(name.endswith((".owners", ".local")) for c in chunks for name in c.names)
    logged = 'class C {\n  private static final long serialVersionUID = 1L;\n  static final Logger log = null;\n}\n'
    assert FileChunker(IndexSettings()).chunk("C.java", logged)[0].names == ()  # a constant by its case too
    mapper = ('<?xml version="1.0" encoding="UTF-8" ?>\n'
              '<!DOCTYPE mapper PUBLIC "-//mybatis.org//DTD Mapper 3.0//EN" "mybatis-3-mapper.dtd" >\n'
              '<mapper namespace="io.spring.infrastructure.mybatis.readservice.ArticleReadService">\n'
              '  <sql id="selectArticleData">\n    select A.id from articles A\n  </sql>\n'
              '  <!-- one article by its slug -->\n  <select id="findBySlug" resultMap="articleData">\n'
              '    <include refid="selectArticleData"/>\n    where A.slug = #{slug}\n  </select>\n'
              '  <insert id="insert">\n    insert into articles(id) values (#{article.id})\n  </insert>\n'
              '</mapper>\n')
    statements = FileChunker(IndexSettings()).chunk("src/main/resources/mapper/ArticleReadService.xml", mapper)
    named = {c.symbol: c for c in statements if c.symbol}
    assert set(named) == {"ArticleReadService.findBySlug", "ArticleReadService.insert"}
    assert "ArticleReadService.selectArticleData" in named["ArticleReadService.findBySlug"].names  # packed before it
    assert named["ArticleReadService.findBySlug"].kind == "select"
    assert named["ArticleReadService.insert"].start_line == 12
    assert {c.kind for c in FileChunker(IndexSettings()).chunk("pom.xml", "<project>\n</project>\n")} == {"text"}
    # a comment's or a CDATA section's markup is SQL's text, not a tag
    cdata = ('<mapper namespace="a.UserMapper">\n  <select id="a"><![CDATA[ select \'<!--\' from t ]]></select>\n'
             '  <update id="c"><![CDATA[ update t set s=\'</update>\' ]]>\n  </update>\n</mapper>\n')
    assert [(c.symbol, c.start_line, c.end_line) for c in FileChunker(IndexSettings()).chunk("m/U.xml", cdata)
            if c.symbol] == [("UserMapper.a", 2, 2), ("UserMapper.c", 3, 4)]
    commented = '<!-- <mapper namespace="x.Old"> -->\n<beans>\n  <select id="q">x</select>\n</beans>\n'
    assert {c.kind for c in FileChunker(IndexSettings()).chunk("beans.xml", commented)} == {"text"}


def test_a_blazor_components_code_block_is_a_class_named_by_the_component():
    """eShopOnWeb's `Edit.razor` was line windows: `SaveClick`, defined in its `@code` block alone, asked by name
    was "probably not here" (P(here) 0.01). The block is read as the members of a C# class named by the file;
    a brace in a string or a comment does not end it; the markup is windows named by the component."""
    razor = ('@page "/admin/edit"\n@inherits BlazorComponent\n\n<h1>Edit item</h1>\n<button @onclick="SaveClick">'
             'Save</button>\n\n@code {\n    private string _message = "} not the end";  // nor is this }\n'
             '    private async Task SaveClick()\n    {\n        await Service.Edit(_item);\n    }\n}\n')
    chunks = FileChunker(IndexSettings()).chunk("Pages/CatalogItemPage/Edit.razor", razor)
    code = [c for c in chunks if c.kind != "component"]
    assert [(c.symbol, c.kind, c.start_line, c.end_line) for c in code] == [("Edit", "class", 7, 13)]
    assert "Edit.SaveClick" in code[0].names and code[0].language == "csharp"
    assert {c.symbol for c in chunks if c.kind == "component"} == {"Edit"}


def test_a_json_object_is_cut_at_its_keys_as_yaml_is():
    """An app's translations (`locales/en.json`) were 40-line windows named nothing: "English text of the sign in
    button" found `action.sign_in` 96th. A JSON object written one key a line is cut as YAML is, each section
    named by its key path, listing its keys; a list of records, or one minified line, stays in windows."""
    sections = {f"section_{n}": {f"key_{k}": f"The text of key {k} in section {n}, long enough to count"
                                 for k in range(12)} for n in range(8)}
    translations = json.dumps({"app_name": "Elk", "app_desc_short": "A nimble web client", **sections}, indent=2)
    chunks = FileChunker(IndexSettings()).chunk("locales/en.json", translations)
    assert len(chunks) > 1 and {c.language for c in chunks} == {"json"}
    assert chunks[0].symbol == "" and chunks[0].names == ("app_name", "app_desc_short")  # two settings, packed
    named = {c.symbol: c for c in chunks[1:]}
    assert set(named) == set(sections)
    assert named["section_3"].names[:2] == ("section_3.key_0", "section_3.key_1")
    for text in (json.dumps([{"id": n, "name": f"record {n}" * 20} for n in range(40)], indent=2),
                 json.dumps(sections)):
        assert all(c.symbol == "" for c in FileChunker(IndexSettings()).chunk("data/records.json", text))


def test_a_stylesheet_is_cut_at_its_rules_named_by_their_selectors():
    """Stylesheets were 40-line windows named nothing (elk's dark theme variables came 104th). Top-level rules are
    packed into chunks named by their first selector, listing the others and the custom properties and variables
    they define; a mixin, a function or a keyframes animation starts a chunk named by its name; braces in
    comments, strings and SCSS's `#{}` are no rule's."""
    rules = "".join(f".widget-{n} {{\n  color: var(--c-{n}); /* a {{ in a comment */\n  content: '}}';\n}}\n\n"
                    for n in range(60))
    css = (":root {\n  --c-primary: #f60;\n  --c-border: #eee;\n}\n\n/* the dark theme */\n.dark {\n  --c-primary: #fa0;\n}\n\n"
           + rules + "@keyframes spin {\n  from { transform: rotate(0); }\n  to { transform: rotate(360deg); }\n}\n")
    chunks = FileChunker(IndexSettings()).chunk("app/styles/vars.css", css)
    assert chunks[0].symbol == ":root" and chunks[0].kind == "rule" and chunks[0].start_line == 1
    assert {"--c-primary", "--c-border", ".dark"} <= set(chunks[0].names)
    assert "".join(c.text + "\n" for c in chunks if c.kind != "keyframes").count(".widget-59 {") == 1
    spin = chunks[-1]
    assert (spin.symbol, spin.kind) == ("spin", "keyframes") and spin.text.startswith("@keyframes spin")
    assert len(chunks) < 15 and {c.language for c in chunks} == {"css"}
    scss = ("$color-red-1: #ffe3e3;\n$color-red-3: #ffa8a8;\n\n// a mixin's {\n@mixin isMobile() {\n"
            "  @at-root .excalidraw--mobile#{&} {\n    @content;\n  }\n}\n\n.toolbar {\n  &.dark { color: $color-red-1; }\n}\n")
    chunks = FileChunker(IndexSettings()).chunk("css/variables.module.scss", scss)
    assert [(c.symbol, c.kind, c.start_line, c.end_line) for c in chunks] == [("isMobile", "mixin", 1, 13)]
    assert chunks[0].names == ("$color-red-1", "$color-red-3", ".toolbar")
    # a component's styles: cut at their rules, named by the component, its selectors their names
    vue = ('<script setup lang="ts">\nconst props = defineProps<{ label: string }>()\n</script>\n\n<template>\n'
           '  <label class="common-checkbox">{{ props.label }}</label>\n</template>\n\n<style lang="scss" scoped>\n'
           '// the focus ring\n.common-checkbox:focus-within {\n  outline: 1px solid $focus;\n}\n</style>\n')
    chunks = FileChunker(IndexSettings()).chunk("app/components/CommonCheckbox.vue", vue)
    style = [c for c in chunks if c.kind == "style"]
    assert [(c.symbol, c.start_line, c.end_line, c.names) for c in style] == [
        ("CommonCheckbox", 10, 13, (".common-checkbox:focus-within",))]
    assert not any("<style" in c.text or "focus-within" in c.text for c in chunks if c.kind != "style")


def test_a_file_routed_apps_pages_are_headed_by_their_routes():
    """SvelteKit's `+page.svelte`, Next's `page.tsx` and `route.ts`, Nuxt's pages were named by their role alone
    (`+page`, `page`, `POST`): the embedder never read where a page is served ("sign in with passkey page" found
    the add-passkey page above the login page). Each chunk of a route's file is headed by its route, read from
    the path: a group `(main)` no segment, `[id]` a parameter, `[[x]]` an optional one, `[...slug]` the rest."""
    from noul_lsp.chunking.routes import file_route

    assert file_route("frontend/src/routes/login/alternative/code/+page.svelte") == "page /login/alternative/code"
    assert file_route("frontend/src/routes/api/health/+server.ts") == "endpoint /api/health"
    assert file_route("src/app/(main)/websites/[websiteId]/page.tsx") == "page /websites/:websiteId"
    assert file_route("src/app/api/send/route.ts") == "API route /api/send"
    assert file_route("app/pages/[[server]]/@[account]/[status].vue") == "page /:server?/@:account/:status"
    assert file_route("app/pages/settings/interface/index.vue") == "page /settings/interface"
    assert file_route("server/api/[server]/oauth/[origin].ts") == "API route /api/:server/oauth/:origin"
    assert file_route("src/pages/blog/[...slug].tsx") == "page /blog/*slug"
    for no_route in ("pages/_app.tsx", "src/components/Button.tsx", "lib/api/client.ts", "src/flask/app.py",
                     "app/components/status/StatusCard.vue", "docs/routes/intro.md"):
        assert file_route(no_route) == "", no_route
    page = ('<script lang="ts">\n  import { goto } from "$app/navigation";\n  function signIn() {\n'
            '    goto("/settings");\n  }\n</script>\n\n<button onclick={signIn}>Sign in</button>\n')
    chunks = FileChunker(IndexSettings()).chunk("frontend/src/routes/login/+page.svelte", page)
    assert chunks and all(c.header.split("\n")[0] == "page /login" for c in chunks)
    assert all(c.embed_text.startswith("page /login\n") for c in chunks)


def test_a_long_definitions_windows_are_headed_by_their_section_comments():
    """The embedder reads a chunk's header and its first 128 tokens: juice-shop's `configureApp` was 16 windows
    headed `configureApp (part N of 16)`, its rate limiter in none of either leg's lists. The comments that
    stand above a step past what is read anyway name it in its window's header; an instruction to a tool, code
    commented out and a comment's later lines do not, a definition kept whole keeps its header, and a window's
    preview still leads with its part."""
    from noul_lsp.chunking.sections import section_titles, with_sections
    from noul_lsp.retrieval.aggregate import record_preview
    from noul_lsp.store.lmdb_store import ChunkRecord

    steps = "\n".join(f"  app.use('/rest/step{n}', handler{n}({n}, {{ retries: {n} }}))" for n in range(12))
    ts = (f"function configureApp (app: Express) {{\n{steps}\n\n  /* Rate limiting */\n"
          "  app.use('/rest/user/reset-password', rateLimit({ windowMs: 300000, max: 100 }))\n\n"
          "  // eslint-disable-next-line no-unused-vars\n  app.use(helmet())\n\n"
          "  // app.use(cors({ origin: '*' }));\n  app.use(noCache())\n\n"
          "  // Serve the files of the ftp folder with their index\n  // and a second line of it\n"
          "  app.use('/ftp', serveIndex('ftp'))\n}\n")
    [chunk] = FileChunker(IndexSettings()).chunk("server.ts", ts)
    assert chunk.header == ""  # kept whole: read as it was (its titles measured no gain, docs/benchmarks.md)
    assert section_titles(ts.splitlines(), "typescript") == [
        "Rate limiting", "Serve the files of the ftp folder with their index"]
    short = "def f(x):\n    # Check the input first\n    return x\n"
    assert not section_titles(short.splitlines(), "python")  # all of it is read anyway
    python = ("def load(path):\n" + "    value = parse(path, strict=True, encoding='utf-8')\n" * 8 +
              "\n    # ---- Validate the input ----\n    check(value)\n\n    # import os\n    # return None\n\n"
              "    #: Folders that hold the cached copies\n    folders = []\n\n    # TODO: cache it\n\n"
              "    # Fall back to the defaults when nothing was found\n    return value or DEFAULTS\n")
    assert section_titles(python.splitlines(), "python") == [
        "Validate the input", "Folders that hold the cached copies", "Fall back to the defaults when nothing was found"]
    go = ("func (cp *configParser) postParsing() error {\n" + "\tcp.opts.value = strings.TrimSpace(cp.opts.value)\n" * 9
          + "\n\t//go:generate stringer -type=Pill\n\n\t// Generate a media proxy private key if not set\n"
          "\tif len(cp.opts.mediaProxyPrivateKey) == 0 {\n\t\tcp.opts.mediaProxyPrivateKey = crypto.GenerateRandomBytes(16)\n"
          "\t}\n\treturn nil\n}\n")
    assert section_titles(go.splitlines(), "go") == ["Generate a media proxy private key if not set"]
    many = "\n".join(f"  a{n}(b{n}, c{n}, d{n}, e{n})\n\n  // The step number {n} of the long setup routine here" for n in range(20))
    line = with_sections("", many.splitlines(), "javascript")
    assert line.startswith("sections: ") and 100 < len(line) <= 160  # a budget's share, not all of it
    windows = FileChunker(IndexSettings()).chunk("server.ts", ts.replace(steps, "\n".join([steps] * 12)))
    assert len(windows) > 1 and "sections: Rate limiting" in windows[-1].header
    last = windows[-1]
    record = ChunkRecord("k", last.path, last.start_line, last.end_line, last.symbol, last.language, last.kind,
                         last.header, last.text, last.content_hash)
    assert record_preview(record).startswith("function configureApp (app: Express) (part ")


def test_a_firmwares_toolchain_files_are_cut_by_their_declarations():
    """Assembly by its labels and macros, a linker script by its MEMORY and SECTIONS commands, CMake by its
    functions and cached settings (FreeRTOS' `portASM.S`, pico-sdk's `crt0.S`, `memmap_default.ld` and `.cmake`
    functions were windows of no name)."""
    chunker = FileChunker(IndexSettings())
    assembly = ("#include \"config.h\"\n\n.macro portSAVE_CONTEXT\n    push {r0}\n.endm\n\n.word 0\n\n"
                "/* The reset handler: clears bss, calls main. */\n_reset_handler:\n    ldr r0, =0\n.L1:\n    b .L1\n"
                "isr_systick:  @ the tick\n    bx lr\n")
    named = {c.symbol: (c.kind, c.start_line, c.end_line) for c in chunker.chunk("src/crt0.S", assembly) if c.symbol}
    assert named == {"portSAVE_CONTEXT": ("macro", 3, 5), "_reset_handler": ("label", 9, 13),
                     "isr_systick": ("label", 14, 15)}
    script = ("/* memory map */\nMEMORY\n{\n    FLASH(rx) : ORIGIN = 0x10000000, LENGTH = 2048k\n"
              "    RAM(rwx) : ORIGIN = 0x20000000, LENGTH = 256k\n}\n\nSECTIONS\n{\n    .boot2 : {\n"
              "        KEEP (*(.boot2))\n    } > FLASH\n    .text : {\n        *(.text*)\n    } > FLASH\n}\n")
    commands = [(c.symbol, c.names) for c in chunker.chunk("memmap_default.ld", script) if c.symbol]
    assert commands == [("MEMORY", ("FLASH", "RAM")), ("SECTIONS", (".boot2", ".text"))]
    cmake = ("# Generates a header from a PIO program\nfunction(pico_generate_pio_header TARGET)\n"
             "    set(options \"\")  # not cached\nendfunction()\n\noption(PICO_NO_FLASH \"no flash\" OFF)\n"
             "set(PICO_BOARD pico CACHE STRING \"the board\")\n")
    chunks = chunker.chunk("tools/CMakeLists.txt", cmake)
    assert [(c.symbol, c.kind, c.start_line) for c in chunks if c.kind == "function"] == [
        ("pico_generate_pio_header", "function", 1)]
    assert {"PICO_NO_FLASH", "PICO_BOARD"} <= {name for c in chunks for name in (c.symbol, *c.names)}


def test_a_scala_extensions_methods_are_the_extended_types_headed_by_the_extension():
    """A Zig and Scala walkthrough (docs/benchmarks.md): zio-http's `extension [A](e: Either[A, A]) {` was in
    the imports' chunk and its methods top-level functions of no header; "extension method that merges an
    Either" found none of them."""
    scala = ("package zio.http.endpoint\n\nimport zio.http.*\n\nextension [A](e: Either[A, A]) {\n\n"
             "  inline def mergeOpt: A = e match {\n    case Left(a) => a\n    case Right(a) => a\n  }\n}\n\n"
             "extension [I, O](self: zio.http.Endpoint[I, O]) {\n  def orOut(x: Int): Int =\n    x + 1\n\n"
             "  def orOutError(y: Int): Int =\n    y + 2\n}\n")
    whole = FileChunker(IndexSettings()).chunk("extensions.scala", scala)
    either = next(c for c in whole if "mergeOpt" in c.text)
    assert (either.symbol, either.kind, either.names) == ("Either (extension)", "extension", ("Either.mergeOpt",))
    assert "import" not in either.text and either.text.startswith("extension [A](e: Either[A, A])")
    split = FileChunker(IndexSettings(chunk_max_chars=60)).chunk("extensions.scala", scala)
    methods = [c for c in split if c.kind == "method"]
    assert list(dict.fromkeys(c.symbol for c in methods)) == [
        "Either.mergeOpt", "Endpoint.orOut", "Endpoint.orOutError"]
    assert all(c.header.startswith("extension [I, O](self: zio.http.Endpoint[I, O])") for c in methods
               if c.symbol.startswith("Endpoint."))


def test_each_window_of_a_long_generic_type_names_the_functions_that_start_in_it():
    """A Zig generic type (`fn ReplicaType(...) type { return struct { ... } }`) is one function cut into
    windows: its names were capped at 64 for the whole of it, and tigerbeetle's `replica.zig` named 95 of its
    264 functions (`post_or_void_pending_transfer` asked for by name was "not here")."""
    methods = "".join(f"        pub fn step_{i}(self: *Self) void {{\n            self.count += {i};\n        }}\n\n"
                      for i in range(150))
    zig = (f"pub fn ReplicaType(comptime T: type) type {{\n    return struct {{\n        const Self = @This();\n\n"
           f"{methods}    }};\n}}\n")
    chunks = FileChunker(IndexSettings()).chunk("src/vsr/replica.zig", zig)
    assert len(chunks) > 2 and all(c.symbol == "ReplicaType" for c in chunks)
    named = [name for c in chunks for name in c.names]
    assert len(named) == 150 and set(named) == {f"ReplicaType.step_{i}" for i in range(150)}
    for chunk in chunks:  # each in the window it starts in
        assert all(f"pub fn {name.rsplit('.', 1)[1]}(" in chunk.text for name in chunk.names)


def test_a_scala_3_test_with_a_colon_and_an_indented_body_is_a_test():
    """scalachess writes 893 of its 929 munit tests as `test("..."):` with an indented body: they were no
    chunks, and its test files 40-line windows naming no test."""
    scala = ('class AtomicVariantTest extends ChessTest:\n\n  test("An automatic draw in a closed position"):\n'
             '    val x = 1\n    assert(x == 1)\n\n  "A Stack" should "pop values" in:\n    assert(1 == 1)\n\n'
             '  test("braces") {\n    assert(true)\n  }\n')
    chunks = FileChunker(IndexSettings(chunk_max_chars=90)).chunk("src/test/scala/AtomicVariantTest.scala", scala)
    assert [(c.symbol, c.start_line, c.end_line) for c in chunks if c.kind == "test"] == [
        ('AtomicVariantTest.test "An automatic draw in a closed position"', 3, 5),
        ('AtomicVariantTest.test "A Stack should pop values"', 7, 8), ('AtomicVariantTest.test "braces"', 10, 12)]


def test_a_man_page_in_scdoc_and_an_mdx_page_are_named_by_their_sections():
    """libxev's man pages (`docs/xev_completion_state.3.scd`) and a docs site's MDX pages were text windows of
    no name: "man page for checking whether a completion is active" found the page 9th."""
    scd = ('xev_completion_state(3) "github.com/mitchellh/libxev" "Library Functions Manual"\n\n# NAME\n\n'
           "xev_completion_state - check the state of a completion\n\n" + "".join(f"line {i}\n" for i in range(40))
           + "\n# DESCRIPTION\n\nReturns whether the completion is active.\n"
           + "".join(f"more {i}\n" for i in range(60)))
    chunks = FileChunker(IndexSettings()).chunk("docs/xev_completion_state.3.scd", scd)
    assert chunks[-1].symbol == "DESCRIPTION" and chunks[-1].language == "markdown"
    mdx = "---\ntitle: Watchers\n---\n\nimport { Callout } from 'nextra'\n\n# Timers\n\nA timer fires once.\n"
    page = FileChunker(IndexSettings()).chunk("website/pages/watchers.mdx", mdx)
    assert [(c.symbol, c.language) for c in page] == [("Watchers", "markdown")]  # its front matter's title
    assert file_role("docs/xev_completion_state.3.scd") == "docs" and file_role("pages/api.mdx") == "docs"
