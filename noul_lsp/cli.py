"""`noul`: the engine from the command line, for people, scripts and agents.

  noul index PATH        build or update the index (embeds everything, with progress)
  noul find QUERY        update the index of --path, then print ranked results (--json for agents)
  noul status PATH       files, chunks, embedded share, model, index size and location
  noul bench ...         quality and speed on labeled queries, with baselines
  noul calibrate ...     fit the "not here" probability on bench records
  noul rank-fit ...      fit the ranking stage on bench records (measured leave-one-repository-out)
  noul team init|grant|revoke
                         a team's shared store (PostgreSQL + pgvector): tables, policies, who sees what
  noul org index MIRROR[@COMMIT]...
                         publish repositories to the organisation index (`noul find --org` searches it)
  noul models list|pull|export|use
                         known models; download one from the hub (the only network use); turn a
                         transformers checkpoint into ONNX (+ checked int8); choose a workspace's models

Errors (missing folder, empty query, corrupt or busy index, missing model) print one line starting with
`noul: error:` and exit non-zero; progress goes to stderr so `--json` output stays clean.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import random
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from contextlib import nullcontext, redirect_stdout
from pathlib import Path

from rich.markup import escape

from noul_lsp import __version__
from noul_lsp.config import Settings, with_overrides
from noul_lsp.labels import LOW_HERE, here_text, legend, score_texts
from noul_lsp.models.heads import HEADS
from noul_lsp.models.registry import NO_STATIC, ModelMissing, recipes_directory
from noul_lsp.models.runtime import gpu_present
from noul_lsp.retrieval.engine import NARROWED
from noul_lsp.retrieval.result import FindResult, QueryError
from noul_lsp.retrieval.retrieve import glob_escaped, glob_within, scoped_globs
from noul_lsp.session.background import LOCKED_RETRY_SECONDS
from noul_lsp.session.workspace import Workspace
from noul_lsp.store import IndexDamaged, IndexLocked, StoreError, delete_index, index_directory, set_aside
from noul_lsp.workspace.discovery import excluded_by_default

COMMANDS = ("index", "find", "status", "bench", "bench-scale", "bench-org", "calibrate", "rank-fit", "models", "mcp", "team", "org")
EXIT_FAILURE = 1
EXIT_USAGE = 2
#: the exit status of a command whose reader went away (as if killed by SIGPIPE)
EXIT_PIPE = 128 + 13


class CliError(Exception):
    def __init__(self, message: str, code: int = EXIT_FAILURE) -> None:
        super().__init__(message)
        self.code = code


def _check_arguments(args: argparse.Namespace) -> None:
    """Every argument checked before any work (a bad one costs nothing, and says which it is)."""
    for name, least in (("token_budget", 8), ("max_file_bytes", 1), ("limit", 1), ("in_batch_negatives", 1)):
        value = getattr(args, name, None)
        if value is not None and value < least:
            flag = "--" + name.replace("_", "-")
            raise CliError(f"{flag} must be at least {least}, not {value}", EXIT_USAGE)
    cache_dir = getattr(args, "cache_dir", None)
    if cache_dir:
        folder = Path(cache_dir).expanduser()
        if folder.exists() and not folder.is_dir():
            raise CliError(f"--cache-dir {cache_dir}: not a folder", EXIT_USAGE)
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise CliError(f"--cache-dir {cache_dir}: cannot be created ({error.strerror or error})", EXIT_USAGE) from None
        if not os.access(folder, os.W_OK | os.X_OK):
            raise CliError(f"--cache-dir {cache_dir}: not writable", EXIT_USAGE)
    given = getattr(args, "path_option", None)
    if given is not None:  # `noul status --path X`, as `noul find --path X` (it printed the usage of every command)
        if getattr(args, "path", ".") not in (".", given):
            raise CliError(f"two folders given: {args.path} and --path {given}", EXIT_USAGE)
        args.path = given
    path = getattr(args, "path", None)
    if isinstance(path, str) and not path.strip():
        # Path("") is the current folder: an empty variable in a script would index wherever it ran
        raise CliError("the folder is empty: give a workspace folder (`.` for the current one)", EXIT_USAGE)
    if getattr(args, "command", "") in ("index", "find", "status", "mcp"):
        from noul_lsp.models.registry import resolve_embedder, resolve_reranker
        from noul_lsp.store import cache_root

        cache = cache_root(cache_dir or "")
        if args.embedder:
            resolve_embedder(args.embedder, cache)  # ModelMissing: one error line, exit 1
        if args.static and args.static != NO_STATIC:
            _check_static(args.static, cache)
        if args.token_budget is not None:
            _check_token_budget(args, cache)
        if args.reranker and args.reranker != "none":
            resolve_reranker(args.reranker, cache)
    if isinstance(getattr(args, "query", None), str):
        args.query = _decoded(args.query)


def _check_static(name: str, cache: Path) -> None:
    """--static names a static model: unknown, or a transformer, is the same error as a wrong --embedder."""
    from noul_lsp.models.registry import resolve_embedder
    from noul_lsp.models.static import StaticSpec

    if not isinstance(resolve_embedder(name, cache), StaticSpec):  # ModelMissing: one error line, exit 1
        raise CliError(f"--static {name}: a transformer, not a static model (the static leg needs one)")


def _check_token_budget(args: argparse.Namespace, cache: Path) -> None:
    """--token-budget within what the workspace's embedder reads (past its position table onnxruntime
    fails on the first chunk that long)."""
    from noul_lsp.models.choice import workspace_choice
    from noul_lsp.models.embedder import token_budget_problem
    from noul_lsp.models.registry import DEFAULT_EMBEDDER, resolve_embedder

    path = getattr(args, "path", None)
    root = Path((path[0] if path else None) if isinstance(path, list) else (path or "."))  # mcp: its first root
    name = args.embedder or workspace_choice(root, cache).embedder or DEFAULT_EMBEDDER
    try:
        problem = token_budget_problem(resolve_embedder(name, cache), name, args.token_budget)
    except ModelMissing:
        return  # the index says so, and searches without it
    if problem:
        answer = " (the size of an answer is --answer-tokens)" if getattr(args, "command", "") == "mcp" else ""
        raise CliError(f"--token-budget: {problem}{answer}", EXIT_USAGE)


def _decoded(text: str) -> str:
    """An argument as text: bytes that were not UTF-8 (kept by Python as surrogates) become U+FFFD."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _printable(value):
    """A JSON value whose strings are valid UTF-8: an undecodable byte of a path shows as `\\xNN`."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
            return value
        except UnicodeEncodeError:
            try:
                return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
            except UnicodeEncodeError:
                return value.encode("utf-8", "backslashreplace").decode("utf-8")
    if isinstance(value, dict):
        return {_printable(k): _printable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_printable(v) for v in value]
    return value


def _print_json(value) -> None:
    print(json.dumps(_printable(value), indent=2, ensure_ascii=False))


def _settings(args: argparse.Namespace) -> Settings:
    settings = Settings()
    index = {k: v for k, v in (("token_budget", args.token_budget), ("max_file_bytes", args.max_file_bytes))
             if v is not None}
    models = {k: v for k, v in (("embedder", args.embedder), ("reranker", args.reranker), ("static", args.static))
              if v}
    team = {"shared_store": args.shared_store} if getattr(args, "shared_store", None) else {}
    settings = with_overrides(settings, index=index, models=models, team=team)
    return dataclasses.replace(settings, cache_dir=args.cache_dir) if args.cache_dir else settings


def _console():
    """stderr for people: on a terminal its width; piped or redirected, lines as long as they are (a log
    wrapped at 80 columns splits a sentence over two lines)."""
    from rich.console import Console

    return Console(stderr=True, highlight=False, soft_wrap=not sys.stderr.isatty())


def _count(number: int, noun: str) -> str:
    """`1 chunk`, `2 chunks`."""
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _open_workspace(path: str, settings: Settings, *, rebuild: bool = False) -> Workspace:
    if rebuild and Path(path).is_dir():
        delete_index(index_directory(Path(path), settings.cache_dir))
    workspace = Workspace(Path(path), settings)
    if workspace.store.rebuilt_reason:
        _console().print(f"[yellow]noul: {escape(workspace.store.rebuilt_reason)}[/]", soft_wrap=True)
    return workspace


def _on_workspace(path: str, settings: Settings, work: Callable[[Workspace], int], *, rebuild: bool = False) -> int:
    """Run `work` on the workspace. A damaged index is set aside (kept), the user told once, and `work`
    runs again on a new index built from the files; damage found twice is an error."""
    workspace = _open_workspace(path, settings, rebuild=rebuild)
    try:
        try:
            return work(workspace)
        except IndexDamaged as damage:
            workspace.close()
            told = set_aside(damage.directory, damage.reason)
            _console().print(f"[yellow]noul: {escape(told)}[/]", soft_wrap=True)
            workspace = _open_workspace(path, settings)
            workspace.store.rebuilt_reason = workspace.store.rebuilt_reason or told
            return work(workspace)
    finally:
        workspace.close()


def _checkpoint(workspace: Workspace, quiet: bool) -> None:
    problem = workspace.checkpoint()
    if problem and not quiet:
        _console().print(f"[yellow]noul: {escape(problem)}[/]")


#: how long `find --no-wait` lets the static leg embed before it answers: at ~2,500 chunks/s on two cores a
#: repository of a few thousand chunks is covered whole, and a larger one in part (the rest next time)
NO_WAIT_STATIC_SECONDS = 2.0


#: how often `noul index` writes a progress line to a log (stderr not a terminal) while it embeds
LOG_PROGRESS_SECONDS = 30.0


def _update(workspace: Workspace, *, embed: bool, quiet: bool, static_seconds: float | None = None,
            always_report: bool = True) -> None:
    """Bring the index up to date, showing files, chunks, embedding rate and ETA on a terminal. Without
    `embed`, nothing is embedded, but for the static leg during `static_seconds` when given (an answer
    at once still gets a dense leg over what that covered). Without `always_report` (a find), an update
    that changed nothing says nothing."""
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    console = _console()
    live = console.is_terminal and not quiet
    columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TextColumn("{task.fields[info]}"),
               TimeRemainingColumn()]
    with (Progress(*columns, console=console, transient=True) if live else nullcontext()) as progress:
        scan = progress.add_task("scanning files", total=None, info="") if live else None

        def on_files(done: int, total: int, chunks: int) -> None:
            if live:
                progress.update(scan, completed=done, total=total, info=f"{chunks} chunks")

        report = workspace.indexer.update(progress=on_files)
        if live:
            progress.remove_task(scan)
        changed = report.files_indexed or report.files_removed or report.skipped
        if not quiet and (always_report or changed):
            console.print(f"indexed {_count(report.files_indexed, 'changed file')} ({_count(report.chunks_added, 'chunk')} "
                          f"added, {report.chunks_removed} removed, {_count(report.files_removed, 'file')} gone) of "
                          f"{report.files_seen} in {report.seconds:.1f}s" + (f"; {len(report.skipped)} skipped" if report.skipped else "")
                          + (f"; {len(report.passed_over)} passed over (links out of the root, broken links, FIFOs, "
                             "devices)" if report.passed_over else ""))
        if not embed and static_seconds is None:
            _checkpoint(workspace, quiet)
            return
        deadline = time.perf_counter() + (static_seconds if static_seconds is not None else math.inf)
        static = workspace.embed_static(should_stop=lambda: time.perf_counter() > deadline)
        _checkpoint(workspace, quiet)  # the static leg's vectors are in: the next open starts from here
        if static is not None and (static.embedded or static.fetched) and not quiet:
            covered = (f"{static.pending} chunks left for the next run" if static.stopped
                       else "every chunk has a dense leg now")
            console.print(f"static vectors for {_count(static.embedded + static.fetched, 'chunk')} in "
                          f"{static.seconds:.1f}s{_rate_part(static)}: {covered}")
        elif static is not None and static.published and not quiet:
            console.print(_offered_late(static.published, "static vector"))
        if static is not None and static.share_problem and not quiet:
            console.print(f"[yellow]noul: embedding locally: {escape(static.share_problem)}[/]")
        elif workspace.static_problem and not quiet:
            console.print(f"[yellow]noul: no static leg: {escape(workspace.static_problem)}[/]")
        if not embed:
            return
        embedder = workspace.embedder()
        if embedder is None:
            console.print(f"[yellow]noul: {escape(workspace.without_embedder())}[/]")
            return
        started = time.perf_counter()
        task = progress.add_task("embedding", total=None, info="") if live else None

        printed = [started]  # a log (stderr not a terminal) gets a line now and then, not minutes of silence

        def on_embed(done: int, total: int) -> None:
            now = time.perf_counter()
            rate = done / max(now - started, 1e-9)
            if live:
                progress.update(task, completed=done, total=total, info=f"{rate:.1f} chunks/s on {embedder.device}")
            elif not quiet and now - printed[0] >= LOG_PROGRESS_SECONDS and done < total:
                printed[0] = now
                console.print(f"embedding: {done}/{total} chunks ({rate:.1f} chunks/s on {embedder.device}; "
                              f"about {(total - done) / max(rate, 1e-9):.0f} s left)")

        try:
            result = workspace.embed_missing(embedder, progress=on_embed)
        except KeyboardInterrupt:
            raise CliError("interrupted: every finished batch is saved; run the command again to continue", 130) from None
        if result.embedded or result.fetched:
            _checkpoint(workspace, quiet)
            workspace.prepare_level()  # the first description asked need not measure it
        if result.share_problem and not quiet and not (static is not None and static.share_problem):
            console.print(f"[yellow]noul: embedding locally: {escape(result.share_problem)}[/]")
        if (result.embedded or result.fetched) and not quiet:
            # a chunk whose text another chunk has (a copied file, a repeated block) reuses its vector: the
            # counts of `indexed` and `embedded` differ by them, which nothing said
            reused = report.chunks_added - result.embedded - result.fetched
            console.print(f"embedded {_count(result.embedded, 'chunk')} in {result.seconds:.1f}s"
                          f"{_rate_part(result, f' on {embedder.device}')}"
                          + (f"; {_count(reused, 'chunk')} reuse the vector of the same text" if reused > 0 else ""))
            # only where a GPU is there to miss: on a laptop without one, every find that embedded said so
            if result.embedded and embedder.fallback_reason and workspace.settings.models.use_gpu and gpu_present():
                console.print(f"[dim]CPU, not GPU: {escape(embedder.fallback_reason)}[/]")
        elif result.published and not quiet:
            console.print(_offered_late(result.published, "vector"))


def _offered_late(published: int, noun: str) -> str:
    """A pass that computed nothing but offered what an outage kept (Indexer._publish_backlog)."""
    return f"offered the shared store {_count(published, noun)} computed while it could not take them"


def _rate_part(report, unit: str = "") -> str:
    """"(N from the shared store, R chunks/s ...)": what was fetched and how fast the rest was computed."""
    parts = [f"{report.fetched} from the shared store"] if report.fetched else []
    if report.published:
        parts.append(f"{report.published} offered to it" if report.fetched else f"{report.published} offered to the shared store")
    if report.embedded:
        parts.append(f"{report.rate:.1f} chunks/s{unit}")
    return f" ({', '.join(parts)})" if parts else ""


def cmd_index(args: argparse.Namespace) -> int:
    def work(workspace: Workspace) -> int:
        said = False
        while True:
            try:
                with workspace.store.indexing_lock():
                    _update(workspace, embed=not args.no_embed, quiet=args.quiet)
                return 0
            except IndexLocked as busy:
                if not args.wait:
                    raise CliError(f"{busy} (or pass --wait)") from None
                if not said and not args.quiet:  # an editor's server may embed for minutes: say it once
                    print(f"{busy}; waiting (Ctrl-C stops, nothing is lost)", file=sys.stderr)
                    said = True
                time.sleep(LOCKED_RETRY_SECONDS)

    return _on_workspace(args.path, _settings(args), work, rebuild=args.rebuild)


def _find_console():
    """stdout for people: on a terminal its width, cropping long lines, and styles (none at all under
    NO_COLOR: rich drops the colours but keeps bold and dim); piped, plain text with no wrapping, so each
    hit stays on its own lines. A reader gone (`| head`) ends the command as --json's output does (rich
    would exit 1)."""
    from rich.console import Console

    class Output(Console):
        def on_broken_pipe(self) -> None:
            raise BrokenPipeError

    styled = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    return Output(highlight=False, soft_wrap=not sys.stdout.isatty(), color_system="auto" if styled else None,
                  emoji=False)


#: control characters shown as Python writes them in a string (`\n`, `\t`, `\x1b`)
_VISIBLE_CONTROLS = {code: repr(chr(code))[1:-1] for code in [*range(32), 127]}


def _shortened_path(path: str, room: int) -> str:
    """`path` in at most `room` characters where it can be: its middle folders become `…` (the first folder
    and the file's name stay, then as many folders above the name as fit). A hit's location is what a line
    must keep: at 80 columns a monorepo's `packages/solid-query/src/__tests__/useQuery.test.tsx:12-40` lost its
    extension and lines to the terminal's edge."""
    if len(path) <= room or "/" not in path:
        return path
    parts = path.split("/")
    head, tail = parts[0], [parts[-1]]
    for folder in reversed(parts[1:-1]):
        if len(head) + 2 + len("/".join([folder, *tail])) + 1 > room:
            break
        tail.insert(0, folder)
    shortened = f"{head}/…/{'/'.join(tail)}"
    return shortened if len(shortened) <= room else f"…/{parts[-1]}"


def _print_human(result: FindResult, console=None, *, from_folder: Path | None = None) -> None:
    """One header line per hit (rank, labelled score, role, path:lines, symbol), then its two-line preview.
    `from_folder`: a folder of the workspace the find ran in; its hits' paths are written from there, as
    `git grep` writes them, so that a terminal opens them (from `packages/query-core` the workspace-relative
    `packages/query-core/src/query.ts` named no file)."""
    console = console or _find_console()
    here = result.here_probability
    crop = {"no_wrap": True, "overflow": "ellipsis"} if console.is_terminal else {"crop": False}
    if result.hits or here is not None:  # nothing found and nothing measured (a filter left no file): no
        console.print(f"[{'yellow' if here is not None and here < LOW_HERE else 'bold'}]"
                      f"{here_text(here, result.signals.get('here', ''))}[/]"
                      f"[dim]{escape(legend(result))}[/]", **crop)  # "not calibrated" for a calibrated pair
    if not result.hits:
        console.print("no results")
    scores = score_texts(result)
    score_width = max((len(t) for t in scores.values()), default=0)
    role_width = max((len(h.role) for h in result.hits), default=0)
    for hit in result.hits:
        where = f"{hit.repository}:{hit.path}" if hit.repository else hit.path  # an organisation hit's repository
        if from_folder is not None and not hit.repository and hit.root:
            where = os.path.relpath(os.path.join(hit.root, hit.path), from_folder)
        # a control character in a file name (git allows a newline) would break the one line per hit
        where = where.translate(_VISIBLE_CONTROLS)
        symbol = f"  [cyan]{escape(hit.symbol)}[/]" if hit.symbol else ""
        role = f"  [magenta]{hit.role:<{role_width}}[/]" if role_width else ""
        lines = f":{hit.start_line}-{hit.end_line}"
        if console.is_terminal:  # the line is cropped at its end: the symbol goes first, the location never
            before = 2 + 2 + score_width + (2 + role_width if role_width else 0) + 2
            repository, _, path = where.rpartition(":") if hit.repository else ("", "", where)
            where = (f"{repository}:" if repository else "") + _shortened_path(
                path, console.width - before - len(lines) - (len(repository) + 1 if repository else 0))
        console.print(f"[bold]{hit.rank:>2}  {scores[hit.rank]:<{score_width}}[/]{role}  "
                      f"[green]{escape(where)}{lines}[/]{symbol}", **crop)
        for line in hit.preview.split("\n"):
            console.print(f"      [dim]{escape(line)}[/]", **crop)
    index = result.index
    embedded = f"{index.files} files, {index.embedded}/{index.chunks} chunks embedded" if index.chunks else "empty index"
    if index.chunks and result.signals.get("here") == NARROWED:  # the counts are the index's, not the filter's
        embedded = f"the whole index: {embedded}"
    if "org" in result.signals and not index.chunks:  # an organisation search alone: no local index
        embedded = f"the organisation index: {result.signals['org']}"
    reranker = result.signals.get("rerank", "off")
    reranked = f"; reranked by {reranker} on {result.signals.get('rerankDevice')}" if reranker not in ("off", "skipped") else ""
    # the search's own time: the command's wall time adds the interpreter, the models and the check for changes
    # (1.2 s for saleor's 34,556 chunks, where a bare "45 ms" read as the whole wait)
    console.print(f"[dim]{escape(embedded)}{escape(reranked)}; searched in {result.timings.get('total', 0):.0f} ms[/]")
    for note in result.notes:
        if "here" in result.signals and note.startswith(f"P(here) {result.signals['here']}"):
            continue  # the first line said it
        console.print(f"[yellow]{escape(note)}[/]")


def cmd_find(args: argparse.Namespace) -> int:
    if not args.query.strip():
        raise CliError("the query is empty: describe the code you are looking for", EXIT_USAGE)
    if args.org:
        if args.path != ".":
            raise CliError("--org searches the organisation index, not a folder: leave out --path (or --org)",
                           EXIT_USAGE)
        return _find_org(args)

    settings = _settings(args)
    root, within = _enclosing_index(Path(args.path), settings)
    include, exclude = list(args.include or ()), list(args.exclude or ())
    if within is not None:  # a folder inside an indexed workspace: its index, narrowed to the folder
        include = scoped_globs(include, within, is_file=False)
        exclude = [glob_within("/" + glob_escaped(within), pattern) for pattern in exclude]

    def work(workspace: Workspace) -> int:
        notes = [f"searched the index of {workspace.root}, within {within}/"] if within is not None else []
        stale = False
        try:
            with workspace.store.indexing_lock():
                _update(workspace, embed=not args.no_wait, quiet=args.json, always_report=False,
                        static_seconds=NO_WAIT_STATIC_SECONDS if args.no_wait else None)
        except IndexLocked as busy:  # another process is bringing the index up to date: say it is behind
            notes.append(f"answered from the current index: {busy}")
            stale = True
        result = workspace.find(args.query, limit=args.limit, mode=args.mode, include=include, exclude=exclude,
                                stale=stale)
        result.notes[:0] = notes
        if args.json:
            _print_json(result.report())
        else:  # a folder's find writes its paths from where it ran, as git grep does (--json keeps the root's)
            ran_inside = within is not None and Path.cwd().resolve().is_relative_to(workspace.root.resolve())
            _print_human(result, from_folder=Path.cwd() if ran_inside else None)
        return 0

    return _on_workspace(str(root), settings, work)


def _enclosing_index(folder: Path, settings: Settings) -> tuple[Path, str | None]:
    """(the workspace to search, the folder within it or None). A folder without an index of its own inside
    one that has one (`noul find` run from `src/` of an indexed repository) is searched in that index,
    narrowed to the folder, as git grep narrows to the folder it runs in: a second index of the subfolder
    would embed its files again and miss everything around it."""
    folder = folder.expanduser()
    if not folder.is_dir() or index_directory(folder, settings.cache_dir).exists():
        return folder, None
    resolved = folder.resolve()
    for inner in (resolved, *resolved.parents):
        if inner != resolved and index_directory(inner, settings.cache_dir).exists():
            return inner, resolved.relative_to(inner).as_posix()
        if (inner / ".git").exists():
            break  # a repository of its own: an index above it (of ~/code, say) is not its workspace
    return folder, None


def _team_url(args: argparse.Namespace) -> str:
    from noul_lsp.team.schema import ENVIRONMENT, configured_store

    url = configured_store(getattr(args, "shared_store", None) or "")
    if not url:
        raise CliError(f"no shared store: give --shared-store URL or set ${ENVIRONMENT}", EXIT_USAGE)
    return url


def _find_org(args: argparse.Namespace) -> int:
    from noul_lsp.team.org import find_org
    from noul_lsp.team.schema import SharedStoreError

    try:
        result = find_org(_team_url(args), args.query, _settings(args), limit=args.limit, mode=args.mode,
                          include=args.include or (), exclude=args.exclude or ())
    except SharedStoreError as error:
        raise CliError(str(error)) from None
    if args.json:
        _print_json(result.report())
    else:
        _print_human(result)
    return 0


def cmd_team(args: argparse.Namespace) -> int:
    from noul_lsp.team import schema

    url = _team_url(args)
    if args.action in ("grant", "revoke") and not args.role:
        raise CliError(f"team {args.action} needs a ROLE", EXIT_USAGE)
    if args.action in ("init", "list") and (args.role or args.repo):
        raise CliError(f"team {args.action} takes no ROLE nor --repo", EXIT_USAGE)
    try:
        if args.action == "list":
            listing = schema.listing(url)
            if args.json:
                _print_json(listing)
            else:
                for role in listing["members"]:
                    print(f"{role}: {', '.join(listing['grants'].get(role, [])) or 'no repository'}")
                for role in sorted(set(listing["grants"]) - set(listing["members"])):
                    print(f"{role} (no member): {', '.join(listing['grants'][role])}")
            return 0
        if args.action == "init":
            schema.initialise(url)
            print(f"the shared store {schema.redacted(url)} is ready (schema noul, role {schema.MEMBER_ROLE})")
        elif args.action == "grant":
            repos = schema.repository_names(args.repo or [])
            unpublished = schema.grant(url, args.role, repos)
            print(f"{args.role} may use the shared store" + (f" and see {', '.join(repos)}" if repos else ""))
            if unpublished:
                _console().print(f"[yellow]noul: not in the organisation index (yet): {escape(', '.join(unpublished))}; "
                                 "the grant counts once a repository of that name is published[/]")
        else:
            taken, exists = schema.revoke(url, args.role, args.repo or [])
            if args.repo:
                print(f"{args.role} no longer sees {', '.join(taken)}" if taken else f"{args.role} saw none of them")
                if never := sorted(set(schema.repository_names(args.repo)) - set(taken)):
                    _console().print(f"[yellow]noul: {escape(args.role)} was not granted {escape(', '.join(never))}[/]")
            elif exists:
                print(f"{args.role} no longer sees any repository ({len(taken)} taken) nor uses the shared store")
            else:
                print(f"{args.role} is no database role; {_count(len(taken), 'grant')} naming it taken")
    except schema.SharedStoreError as error:
        raise CliError(str(error)) from None
    return 0


def cmd_org(args: argparse.Namespace) -> int:
    from noul_lsp.team.org_index import index_organisation, remove_repositories
    from noul_lsp.team.schema import SharedStoreError, repository_names

    if args.action == "remove":
        if args.work or args.name:
            raise CliError("org remove takes repository names alone (no --work, no --name)", EXIT_USAGE)
        try:
            names = repository_names(args.mirrors)
            removed = remove_repositories(_team_url(args), names)
        except SharedStoreError as error:
            raise CliError(str(error)) from None
        missing = sorted(set(names) - set(removed))
        if args.json:
            _print_json({"removed": removed, "notPublished": missing})
        elif not args.quiet:
            print(f"removed {', '.join(removed)} from the organisation index" if removed else "removed nothing")
        if missing:
            _console().print(f"[yellow]noul: not in the organisation index: {escape(', '.join(missing))}[/]")
        return 0 if removed or not missing else EXIT_FAILURE
    if not args.work:
        raise CliError("org index needs --work DIR (where the repositories' trees and local indexes are kept)",
                       EXIT_USAGE)
    try:
        reports = index_organisation(_team_url(args), args.mirrors, Path(args.work), _settings(args),
                                     leg=args.leg, log=None if args.quiet else _console().print, name=args.name)
    except (SharedStoreError, RuntimeError) as error:  # RuntimeError: a commit's tree could not be written
        raise CliError(str(error)) from None
    if args.json:
        _print_json([dataclasses.asdict(r) for r in reports])
    return 0


def cmd_bench_org(args: argparse.Namespace) -> int:
    from noul_lsp.bench.org import run_org_bench
    from noul_lsp.team.schema import SharedStoreError

    try:
        run_org_bench(_team_url(args), [Path(p) for p in args.labels], Path(args.work), _settings(args), Path(args.out))
    except SharedStoreError as error:
        raise CliError(str(error)) from None
    return 0


#: the paths `status` shows in the terminal per default-exclude pattern and per kind of skip (the JSON has all)
_PATHS_SHOWN = 5


def _skipped_lines(skipped: list[dict]) -> list[str]:
    """The terminal's lines for the skipped files: one a file, but a kind of reason more than
    `_PATHS_SHOWN` files share (`binary`: a notebook repository's 72 PNGs) is one line with a count."""
    kinds: dict[str, list[dict]] = {}
    for entry in skipped:
        kinds.setdefault(entry["reason"].split(" (", 1)[0], []).append(entry)
    lines = []
    for kind, entries in kinds.items():
        if len(entries) <= _PATHS_SHOWN:
            lines.extend(f"skipped  {entry['path']}: {entry['reason']}" for entry in entries)
            continue
        lines.append(f"skipped  {len(entries)} files, {kind}: {_some([e['path'] for e in entries], len(entries))} "
                     "(`noul status --json` lists each with why)")
    return lines


def _some(paths: list[str], total: int, more: str = "more") -> str:
    """The first `_PATHS_SHOWN` of `paths`, and how many of `total` are left unsaid."""
    shown = paths[:_PATHS_SHOWN]
    return ", ".join(shown) + (f" and {total - len(shown)} {more}" if total > len(shown) else "")


def cmd_status(args: argparse.Namespace) -> int:
    found: dict = {}

    def work(workspace: Workspace) -> int:
        found.update(_status(workspace))
        return 0

    settings = _settings(args)
    root, within = _enclosing_index(Path(args.path), settings)
    if within is not None:
        _on_workspace(str(root), settings, work)
        found["within"] = within
    elif root.is_dir() and not index_directory(root, settings.cache_dir).exists():
        # asking is not indexing: the models and devices are read from a scratch index, dropped after
        with tempfile.TemporaryDirectory() as scratch:
            workspace = Workspace(root, settings, index_dir=Path(scratch) / "index")
            try:
                found = _status(workspace)
            finally:
                workspace.close()
        found = {key: value for key, value in found.items() if key not in (
            "files", "chunks", "embedded", "skippedFiles", "embeddedShare", "staticEmbedded", "indexBytes",
            "location", "openedFromSnapshot")}
        found["indexed"] = False
        if not args.json:
            print(f"{found['root']}: not indexed yet (run `noul index {args.path}`)")
    else:
        _on_workspace(args.path, settings, work)
    if args.json:
        _print_json(found)
    else:
        skipped, excluded = found.pop("skipped", []), found.pop("excludedByDefault", [])
        if "openedFromSnapshot" in found:  # a bare generation number meant nothing to a reader
            generation = found["openedFromSnapshot"]
            found["openedFromSnapshot"] = f"yes (generation {generation})" if generation is not None \
                else "no (read every chunk record)"
        width = max(len(k) for k in found)
        for key, value in found.items():
            print(f"{key:<{width}}  {'none' if value is None else value}")
        for line in _skipped_lines(skipped):
            print(line.translate(_VISIBLE_CONTROLS))
        if excluded:
            print("excluded by the default excludes (a `!path` line in the workspace's .noulignore keeps one, "
                  "useDefaultExcludes false keeps every one):")
            for pattern, taken in excluded.items():
                if pattern.endswith("/"):  # a folder pattern: its folders, and how many files they hold
                    listed = f"{_some(taken['paths'], len(taken['paths']), 'more folders')} ({taken['files']} files)"
                else:
                    listed = _some(taken["paths"], taken["files"])
                print(f"  {pattern}: {listed}".translate(_VISIBLE_CONTROLS))
    return 0



def _status(workspace: Workspace) -> dict:
    rebuilt = workspace.store.rebuilt_reason
    state = workspace.state()
    status = {
        "root": str(workspace.root),
        "indexed": True,
        "files": state.files,
        "chunks": state.chunks,
        "embedded": state.embedded,
        "skippedFiles": workspace.corpus.skipped_files,
        "embeddedShare": round(state.embedded / state.chunks, 4) if state.chunks else 0.0,
        "model": workspace.model_key or f"missing: {workspace.embedder_problem}",
        "staticEmbedded": state.static,
        "staticModel": workspace.static_key or (f"missing: {workspace.static_problem}" if workspace.static_problem
                                                else "off"),
        **_devices(workspace),
        "indexBytes": workspace.store.size_bytes(),
        "location": str(workspace.store.directory),
        # the generation of the corpus snapshot this process opened (null: it read every chunk record)
        "openedFromSnapshot": workspace.corpus.opened_from_snapshot,
        # each file not indexed, with why (binary, over the size cap, unreadable)
        "skipped": [{"path": record.path, "reason": record.skipped.removeprefix(f"{record.path}: ")}
                    for record in sorted(workspace.store.files().values(), key=lambda r: r.path) if record.skipped],
        # the files only the default excludes leave out, by pattern: a project's own `bootstrap-colors.css` is one
        "excludedByDefault": excluded_by_default(workspace.root, workspace.settings.index),
    }
    if rebuilt:
        status["rebuilt"] = rebuilt
    from noul_lsp.team.schema import store_status

    return status | store_status(workspace.settings.team)


def _devices(workspace: Workspace) -> dict[str, str]:
    """Where the models run, found by loading them (a session opens in well under a second): the device that
    runs, and why it is not the GPU when the GPU was asked for."""
    found: dict[str, str] = {}
    for role, model in (("embedder", workspace.embedder()), ("reranker", workspace.reranker())):
        if model is None:
            continue
        found[f"{role}Device"] = model.device
        if model.fallback_reason and workspace.settings.models.use_gpu:
            found[f"{role}Fallback"] = model.fallback_reason
    if workspace.embedder_note:
        found["embedderNote"] = workspace.embedder_note
    if workspace.reranker_name:
        found["reranker"] = workspace.reranker_name if workspace.reranker() else f"missing: {workspace.reranker_problem}"
    else:
        found["reranker"] = "none"
    return found


def cmd_bench_scale(args: argparse.Namespace) -> int:
    from noul_lsp.bench.scale import ScaleConfig, run_scale

    try:
        sizes = tuple(int(size) for size in args.sizes.split(",") if size.strip())
    except ValueError:
        raise CliError(f"--sizes takes chunk counts separated by commas, not {args.sizes!r}", EXIT_USAGE) from None
    labels = tuple(Path(p) for p in args.labels)
    for path in labels:
        if not path.is_file():
            raise CliError(f"label file {path} not found", EXIT_USAGE)
    if not labels:
        raise CliError("--labels names the files whose query texts the finds ask", EXIT_USAGE)
    mirrors = Path(args.mirrors)
    if not mirrors.is_dir():
        raise CliError(f"{mirrors}: no such folder of mirrors", EXIT_USAGE)
    config = ScaleConfig(mirrors=mirrors, work=Path(args.work), out=Path(args.out), sizes=sizes, labels=labels,
                         settings=_settings(args), probe_only=args.probe_only)
    run_scale(config, log=lambda line: print(line, flush=True))
    print(f"wrote {config.out / 'scale.md'}")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from noul_lsp.bench.labels import LabelError
    from noul_lsp.bench.runner import BenchConfig, run_bench
    from noul_lsp.bench.trees import MirrorMissing

    pipelines = tuple(p.strip() for p in args.pipelines.split(",") if p.strip())
    config = BenchConfig(labels=[Path(p) for p in args.labels], mirrors=Path(args.mirrors), work=Path(args.work),
                         out=Path(args.out), pipelines=pipelines, cross_repo_negatives=args.cross_repo_negatives,
                         scale=args.scale, embed_scope=args.embed_scope, limit=args.limit, settings=_settings(args),
                         resume=args.resume)
    for path in config.labels:
        if not path.is_file():
            raise CliError(f"label file {path} not found", EXIT_USAGE)
    try:
        summary = run_bench(config)
    except (LabelError, MirrorMissing, ValueError) as error:
        raise CliError(str(error), EXIT_USAGE) from error
    print(f"wrote {config.out / 'summary.md'} ({summary['speed']['wall_seconds']} s)")
    return 0


def cmd_calibrate(args: argparse.Namespace) -> int:
    from noul_lsp.bench.calibration import CalibrationDataError, calibrate

    paths = [Path(p) for p in args.records]
    extra = [Path(p) for p in args.extra or ()]
    for path in paths + extra:
        if not path.is_file():
            raise CliError(f"records file {path} not found", EXIT_USAGE)
    try:
        written, metrics = calibrate(paths, pipeline=args.pipeline, out_dir=Path(args.out),
                                     plot=Path(args.plot) if args.plot else None, extra_paths=extra,
                                     extra_weight=args.extra_weight)
    except CalibrationDataError as error:
        raise CliError(str(error), EXIT_USAGE) from error
    print(json.dumps({"written": str(written), "leave_one_repository_out": metrics}, indent=2))
    return 0


def cmd_rank_fit(args: argparse.Namespace) -> int:
    from noul_lsp.bench.rank_fit import FITTED_PIPELINES, RankDataError, format_metrics, rank_fit

    paths = [Path(p) for p in args.records]
    for path in paths:
        if not path.is_file():
            raise CliError(f"records file {path} not found", EXIT_USAGE)
    if args.l2 <= 0:
        raise CliError(f"--l2 must be positive, not {args.l2}", EXIT_USAGE)
    try:
        if args.rerank:
            from noul_lsp.bench.rank_fit import fit_rerank_weight

            written, metrics = fit_rerank_weight(paths, out_dir=Path(args.out))
            print(json.dumps(metrics, indent=1))
            print(f"\nwrote the rerank weight into {written}")
            return 0
        pipelines = tuple(p.strip() for p in args.pipelines.split(",") if p.strip()) if args.pipelines else FITTED_PIPELINES
        extra = [Path(p) for p in args.extra or ()]
        for path in extra:
            if not path.is_file():
                raise CliError(f"records file {path} not found", EXIT_USAGE)
        written, metrics = rank_fit(paths, out_dir=Path(args.out), l2=args.l2, ablation=not args.no_ablation,
                                    pipelines=pipelines, extra_paths=extra, extra_weight=args.extra_weight)
    except (RankDataError, ValueError) as error:
        raise CliError(str(error), EXIT_USAGE) from error
    print(format_metrics(metrics))
    print(f"\nwrote {written}")
    return 0


def cmd_models(args: argparse.Namespace) -> int:
    from noul_lsp.store import cache_root

    cache = cache_root(args.cache_dir or "")
    handler = {"list": _models_list, "pull": _models_pull, "export": _models_export, "use": _models_use}[args.action]
    return handler(args, cache)


def _models_list(args: argparse.Namespace, cache: Path) -> int:
    from noul_lsp.models.registry import (
        CARDS,
        DEFAULT_EMBEDDER,
        MINILM_INT8,
        bundled_directory,
        is_static_directory,
        local_model_directory,
    )

    rows = []
    for card in CARDS.values():
        pulled = bool(card.hub_repo) and local_model_directory(cache, card.hub_repo).is_dir()
        static = bool(card.bundled) and is_static_directory(bundled_directory(card))
        rows.append({"id": card.id, "hub": card.hub_repo, "kind": "static" if static else card.kind, "dims": card.dims,
                     "maxTokens": card.max_tokens, "pooling": card.pooling, "license": card.license,
                     "sizeMB": card.size_mb, "architecture": card.architecture,
                     "default": card.id == DEFAULT_EMBEDDER,
                     "available": "bundled" if card.id == MINILM_INT8 or (card.bundled and bundled_directory(card).is_dir())
                     else "missing (reinstall noul-lsp)" if card.bundled
                     else ("pulled" if pulled else "not downloaded")})
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        widths = {key: max(len(str(row[key])) for row in rows) for key in ("id", "kind", "hub")}
        for row in rows:
            print(f"{row['id']:<{widths['id']}}  {row['kind']:<{widths['kind']}}  {row['hub']:<{widths['hub']}}  "
                  f"{row['sizeMB']:>5.0f} MB  {row['available']}")
    return 0


def _models_pull(args: argparse.Namespace, cache: Path) -> int:
    from noul_lsp.models.hub import pull

    if not args.names:
        raise CliError("name the model to download, e.g. `noul models pull BAAI/bge-small-en-v1.5`", EXIT_USAGE)
    for name in args.names:
        print(f"downloaded {name} to {pull(name, cache, weights=args.weights)}")
    return 0


def _models_export(args: argparse.Namespace, cache: Path) -> int:
    from noul_lsp.models.export import ExportError, export_model

    if len(args.names) != 1 or not args.out:
        raise CliError("usage: noul models export CHECKPOINT_DIR --out DIR [--int8]", EXIT_USAGE)
    try:
        report = export_model(Path(args.names[0]), Path(args.out), kind=args.kind, int8=args.int8,
                              optimize=not args.no_optimize, min_score_agreement=args.min_agreement,
                              max_length=args.max_length)
    except ExportError as error:
        raise CliError(str(error)) from error
    print(json.dumps(dataclasses.asdict(report), indent=2))
    return 0


def _models_use(args: argparse.Namespace, cache: Path) -> int:
    """Record the models of a workspace; each name's kind comes from its card or its config."""
    from noul_lsp.models.choice import NO_RERANKER, set_workspace_choice
    from noul_lsp.models.registry import model_kind, resolve_embedder, resolve_reranker

    root = Path(args.path).expanduser()
    if not root.is_dir():
        raise CliError(f"{root}: not a folder", EXIT_USAGE)
    if not args.names:
        raise CliError("name the models to use, e.g. `noul models use ms-marco-minilm-l-6-v2` "
                       "(`default` resets the embedder, `none` turns the reranker off)", EXIT_USAGE)
    embedder = reranker = None
    for name in args.names:
        if Path(name).expanduser().is_dir():  # a folder is kept absolute: the server runs from elsewhere
            name = str(Path(name).expanduser().resolve())
        if name == "default":
            embedder = ""
        elif name == NO_RERANKER:
            reranker = NO_RERANKER
        elif model_kind(name, cache) == "reranker":
            resolve_reranker(name, cache)  # must be here now: ModelMissing says how to get it
            reranker = name
        else:
            resolve_embedder(name, cache)
            embedder = name
    choice = set_workspace_choice(root, cache, embedder=embedder, reranker=reranker)
    print(json.dumps({"root": str(root.resolve()), "embedder": choice.embedder or "default",
                      "reranker": choice.reranker or "none"}, indent=2))
    return 0


def cmd_mcp(args: argparse.Namespace) -> int:
    """Serve coding agents over MCP (stdio) until the client hangs up; see noul_lsp/mcp."""
    try:
        from noul_lsp.mcp.server import serve
    except ImportError as error:
        # the SDK missing, an older one (1.x has no mcp.server.mcpserver), or one of its own dependencies
        # missing: each says what is there and what is needed, never a traceback
        try:
            from importlib.metadata import PackageNotFoundError, version
            found = f"mcp {version('mcp')} is installed"
        except PackageNotFoundError:
            found = "the SDK is not installed"
        raise CliError(f"noul mcp needs the MCP SDK (mcp>=2.3,<3; {found}; importing it failed: {error}): "
                       "pip install 'noul-lsp[mcp]'") from None
    from noul_lsp.mcp.roots import MAX_TOKEN_BUDGET, RootSet
    from noul_lsp.retrieval.answer import DEFAULT_TOKEN_BUDGET, MIN_TOKEN_BUDGET

    budget = DEFAULT_TOKEN_BUDGET if args.answer_tokens is None else args.answer_tokens
    if not MIN_TOKEN_BUDGET <= budget <= MAX_TOKEN_BUDGET:
        raise CliError(f"--answer-tokens must be from {MIN_TOKEN_BUDGET} to {MAX_TOKEN_BUDGET}, not {budget}", EXIT_USAGE)
    for path in args.path or ():
        if not Path(path).expanduser().is_dir():
            raise CliError(f"--path {path}: not a folder", EXIT_USAGE)
    settings = _settings(args)
    if args.org:
        from noul_lsp.team.schema import SharedStoreError, database_module, setting_problem

        store = _team_url(args)  # --org searches the shared store's organisation index: none is a usage error
        try:
            database_module()  # psycopg missing: the install hint, not "not a libpq URL"
        except SharedStoreError as error:
            raise CliError(str(error), EXIT_USAGE) from None
        if problem := setting_problem(store):  # said now, not as "unreachable" at every find
            raise CliError(problem, EXIT_USAGE)
        settings = dataclasses.replace(settings, team=dataclasses.replace(settings.team, org=True))
    serve(RootSet(settings, args.path or ()), default_token_budget=budget)
    return 0


def _train_static(args: argparse.Namespace, pairs: list) -> int:
    """Distil the static model from a teacher (model2vec) into <out>/distilled, then tune it on the pairs
    into <out> (with --teacher-texts, also regressing onto the teacher's vectors of that many mined texts,
    computed once into <out>/teacher.npz)."""
    from noul_lsp.train import static as training
    from noul_lsp.train.fit import TrainingUnavailable, base_model_directory

    out = Path(args.out)
    given = {"epochs": None if args.epochs is None else max(1, round(args.epochs)), "learning_rate": args.learning_rate}
    tune = training.TuneSettings(held_out=tuple(args.held_out or ()),
                                 **{k: v for k, v in given.items() if v is not None})
    if args.max_pairs and args.max_pairs < len(pairs):  # (it was taken and not used)
        pairs = random.Random(tune.seed).sample(pairs, args.max_pairs)
    log = lambda line: print(line, file=sys.stderr)  # noqa: E731
    try:
        with redirect_stdout(sys.stderr):  # what the libraries print: stdout is the JSON summary
            base = str(base_model_directory(args.base or ""))
            code = (t for p in pairs for t in (p.positive, *p.negatives))
            distilled = training.distil_static(base, code, out / "distilled", training.StaticSettings())
            teacher = None
            if args.teacher_texts:
                texts = training.teacher_texts(pairs, args.teacher_texts, held_out=tune.held_out,
                                               max_query_chars=tune.max_query_chars, seed=tune.seed)
                teacher = (texts, training.teacher_vectors(base, texts, out / "teacher.npz", log=log))
            tuned = training.tune_static(out / "distilled", pairs, out, tune, log=log, teacher=teacher)
    except TrainingUnavailable as error:
        raise CliError(str(error)) from error
    print(json.dumps({"distilled": distilled, "tuned": tuned}, indent=2))
    return 0


def cmd_train(args: argparse.Namespace) -> int:
    """Mine pairs from git repositories (torch-free), or fine-tune the embedder / cross-encoder on them."""
    if args.action == "mine":
        from noul_lsp.train.mine import MineSettings, MiningRefused, mine, read_exclusions

        if not args.repo:
            raise CliError("name the repositories to mine: `noul train mine --repo PATH [--repo PATH ...] --out DIR`",
                           EXIT_USAGE)
        if args.out and Path(args.out).exists() and not Path(args.out).is_dir():  # was a raw "[Errno 20]" line
            raise CliError(f"--out {args.out}: not a folder (mine writes a folder of pairs)", EXIT_USAGE)
        settings = MineSettings(max_commits=args.max_commits, max_pairs_per_repository=args.max_pairs_per_repository,
                                static_model=args.static_model or "", test_negatives=args.test_negatives)
        exclusions = read_exclusions(Path(args.exclude)) if args.exclude else set()
        try:
            sources = mine([Path(r).expanduser() for r in args.repo], Path(args.out), settings=settings,
                           exclusions=exclusions, own_code=args.own, progress=lambda m: print(m, file=sys.stderr))
        except MiningRefused as error:
            raise CliError(str(error)) from error
        print(json.dumps({"out": args.out, **sources["totals"], "refused": sources["refused"],
                          "failed": sources["failed"]}, indent=2))
        return 0 if sources["totals"]["repositories"] else EXIT_FAILURE
    if args.action == "labels":
        from noul_lsp.train.labels import LabelSettings, write_commit_labels
        from noul_lsp.train.mine import read_exclusions

        if not args.repo:
            raise CliError("name the repositories: `noul train labels --repo PATH [--repo PATH ...] --out FILE`",
                           EXIT_USAGE)
        exclusions = read_exclusions(Path(args.exclude)) if args.exclude else set()
        sources = write_commit_labels([Path(r).expanduser() for r in args.repo], Path(args.out),
                                      settings=LabelSettings(per_repository=args.per_repository),
                                      exclusions=exclusions, own_code=args.own,
                                      progress=lambda m: print(m, file=sys.stderr))
        print(json.dumps({"out": args.out, "labels": sources["labels"], "repositories": len(sources["repositories"]),
                          "refused": sources["refused"]}, indent=2))
        return 0 if sources["labels"] else EXIT_FAILURE
    from noul_lsp.train.fit import TrainingUnavailable, TrainSettings, train_embedder, train_reranker
    from noul_lsp.train.pairs import read_pairs

    if not args.data:
        raise CliError(f"noul train {args.action} needs --data DIR (the folder `noul train mine` wrote)", EXIT_USAGE)
    pairs = read_pairs(Path(args.data))
    if not pairs:
        raise CliError(f"{args.data}: no mined pairs (run `noul train mine --out {args.data}` first)", EXIT_USAGE)
    if args.action == "static":
        return _train_static(args, pairs)
    given = {"epochs": args.epochs, "learning_rate": args.learning_rate}
    settings = TrainSettings(base=args.base or "", max_pairs=args.max_pairs, batch_size=args.batch_size,
                             max_tokens=args.max_tokens, **{k: v for k, v in given.items() if v is not None},
                             hard_negatives=args.hard_negatives, bf16=args.bf16, max_steps=args.max_steps,
                             docstring_share=args.docstring_share, layers=args.layers,
                             in_batch_negatives=args.in_batch_negatives, head=args.head, device=args.device,
                             freeze_token_embeddings=args.freeze_token_embeddings, max_seconds=args.max_seconds,
                             loader_workers=args.loader_workers)
    train = train_embedder if args.action == "embedder" else train_reranker
    try:
        # the trainer prints its logs (dict lines) on stdout: to stderr with the rest of the progress, so
        # that stdout is the run's JSON alone
        with redirect_stdout(sys.stderr):
            run = train(pairs, Path(args.out), settings)
    except TrainingUnavailable as error:
        raise CliError(str(error)) from error
    print(json.dumps(run, indent=2))
    return 0


def _extra_weight(text: str) -> float:
    value = float(text)
    if not value >= 0:  # also refuses nan
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {text}")
    return value


def _add_extra_records(parser: argparse.ArgumentParser, what: str, counted: str, against: str) -> None:
    """--extra / --extra-weight of `noul calibrate` and `noul rank-fit`: records that only train."""
    parser.add_argument("--extra", action="append", metavar="RECORDS",
                        help=f"per_query.jsonl of {what}; no figure is computed on them (repeatable)")
    parser.add_argument("--extra-weight", type=_extra_weight, default=1.0,
                        help=f"how much {counted} count together, against {against} (default 1: as much)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="noul", description="Find code by describing it.")
    parser.add_argument("--version", action="version", version=f"noul {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--cache-dir", help="where indexes live (default: $NOUL_CACHE_DIR or the user cache dir)")
    common.add_argument("--embedder", help="embedding model: registered name, local directory or pulled hub id")
    common.add_argument("--static", help="the static model of the instant dense leg (default: the bundled one; "
                        "`none`: no static leg)")
    common.add_argument("--reranker", help="cross-encoder for the short list: registered name, local ONNX folder "
                        "or pulled hub id (`none`: off)")
    common.add_argument("--token-budget", type=int, help="tokens of each chunk the embedder sees (default 128)")
    common.add_argument("--max-file-bytes", type=int, help="skip files larger than this (default 1000000)")
    common.add_argument("--shared-store", metavar="URL", help="a team's PostgreSQL + pgvector store (default: "
                        "$NOUL_SHARED_STORE; none): vectors teammates computed are taken from it, and published to it")

    index = sub.add_parser("index", parents=[common], help="build or update the index of a folder")
    index.add_argument("path", nargs="?", default=".")
    index.add_argument("--path", dest="path_option", metavar="PATH", help="the same as PATH (as `noul find --path`)")
    index.add_argument("--rebuild", action="store_true", help="delete the index and build it again")
    index.add_argument("--no-embed", action="store_true", help="update files and BM25 only")
    index.add_argument("--wait", action="store_true",
                       help="when another process (an editor's language server) is updating the index, wait for "
                            "it and then do what it left, instead of exiting")
    index.add_argument("--quiet", "-q", action="store_true")
    index.set_defaults(handler=cmd_index)

    find = sub.add_parser("find", parents=[common], help="rank files (or chunks) by a description")
    find.add_argument("query")
    find.add_argument("--path", default=".", help="workspace folder (default: current)")
    find.add_argument("--limit", type=int, default=10, help="how many files (or chunks) to show (default 10)")
    find.add_argument("--mode", choices=("files", "chunks"), default="files")
    find.add_argument("--include", action="append", metavar="GLOB",
                      help="only paths matching (repeatable; gitignore syntax; with --org within each repository, "
                           "or OWNER/NAME:GLOB within one)")
    find.add_argument("--exclude", action="append", metavar="GLOB", help="skip paths matching (repeatable; as --include)")
    find.add_argument("--json", action="store_true", help="print the agent report as JSON")
    find.add_argument("--no-wait", action="store_true",
                      help="answer at once from what is embedded: BM25 covers everything regardless, the static "
                           f"leg what it embeds in {NO_WAIT_STATIC_SECONDS:g} s, the transformer what it had")
    find.add_argument("--org", action="store_true",
                      help="search the shared store's organisation index (the repositories you are granted)")
    find.set_defaults(handler=cmd_find)

    store = argparse.ArgumentParser(add_help=False)  # what `team` reads of the common options
    store.add_argument("--shared-store", metavar="URL", help="the team's PostgreSQL + pgvector store (default: "
                                                             "$NOUL_SHARED_STORE)")
    team = sub.add_parser("team", parents=[store], help="set up a team's shared store; say who sees what",
                          description="init: create the store's schema, policies and member role (its owner, once; "
                                      "creating the vector extension takes a superuser). grant ROLE [--repo ...]: make "
                                      "a database role a member and let it see these repositories of the organisation "
                                      "index. revoke ROLE [--repo ...]: take them back; with no --repo, all of them "
                                      "and the membership. list: the members and their grants (a member sees its own).")
    team.add_argument("action", choices=("init", "grant", "revoke", "list"))
    team.add_argument("role", nargs="?", default="", help="the PostgreSQL role (grant, revoke)")
    team.add_argument("--repo", action="append", metavar="OWNER/NAME", help="a repository the role sees (repeatable)")
    team.add_argument("--json", action="store_true", help="list: as JSON")
    team.set_defaults(handler=cmd_team)

    bench_org = sub.add_parser("bench-org", parents=[common],
                               help="the organisation search against each repository's own, on labeled descriptions")
    bench_org.add_argument("--labels", nargs="+", required=True, help="label files (JSON lines)")
    bench_org.add_argument("--work", required=True, help="the work folder of `noul org index` (trees, local indexes)")
    bench_org.add_argument("--out", required=True, help="where per_query.jsonl and summary.json go")
    bench_org.set_defaults(handler=cmd_bench_org)

    org = sub.add_parser("org", parents=[common], help="publish repositories to the organisation index",
                         description="index: publish git mirrors or clones (MIRROR[@COMMIT]; a repository already "
                                     "published at that commit is skipped). remove: take repositories (OWNER/NAME) "
                                     "out of it. Both as the store's owner.")
    org.add_argument("action", choices=("index", "remove"))
    org.add_argument("mirrors", nargs="+", metavar="MIRROR[@COMMIT] | OWNER/NAME",
                     help="index: a git mirror or clone (its HEAD, or COMMIT); remove: a published repository's name")
    org.add_argument("--work", help="index: where the repositories' trees and local indexes are kept (required)")
    org.add_argument("--name", metavar="OWNER/NAME", help="index: the name of a single mirror (default: from its folder "
                                                          "owner+name or its origin)")
    org.add_argument("--leg", choices=("static", "dense"), default="static",
                     help="which vectors the organisation index holds (default: the static model's)")
    org.add_argument("--json", action="store_true")
    org.add_argument("--quiet", "-q", action="store_true")
    org.set_defaults(handler=cmd_org)

    status = sub.add_parser("status", parents=[common], help="show what the index holds")
    status.add_argument("path", nargs="?", default=".")
    status.add_argument("--path", dest="path_option", metavar="PATH", help="the same as PATH (as `noul find --path`)")
    status.add_argument("--json", action="store_true")
    status.set_defaults(handler=cmd_status)
    bench = sub.add_parser("bench", parents=[common], help="measure quality and speed on labeled queries")
    bench.add_argument("--labels", nargs="+", required=True, help="label files (JSON lines)")
    bench.add_argument("--mirrors", required=True, help="folder of bare git mirrors (owner+name/repo)")
    bench.add_argument("--work", required=True, help="scratch folder for trees and the bench's own index cache")
    bench.add_argument("--out", required=True, help="where per_query.jsonl, summary.md/json and plots go")
    bench.add_argument("--pipelines", default="bm25,dense,hybrid,ripgrep")
    bench.add_argument("--cross-repo-negatives", action="store_true",
                       help="also ask each SWE-bench issue against another repository as a not_here query")
    bench.add_argument("--scale", action="store_true", help="describe queries on one repository vs all of them")
    bench.add_argument("--embed-scope", choices=("all", "source"), default="all",
                       help="'source' leaves tests and docs to BM25 alone (faster cold runs)")
    bench.add_argument("--limit", type=int, default=10,
                       help="files (or chunks) each find of the bench returns (default 10)")
    bench.add_argument("--resume", action="store_true",
                       help="keep the records already in OUT (records are written as the run goes) and ask the rest")
    bench.set_defaults(handler=cmd_bench)

    scale = sub.add_parser("bench-scale", parents=[common],
                           help="grow one workspace of real code to 10k, 100k, 1M chunks and measure each size")
    scale.add_argument("--mirrors", required=True, help="folder of bare git mirrors (owner+name/repo)")
    scale.add_argument("--work", required=True, help="scratch folder for the trees and indexes (large)")
    scale.add_argument("--out", required=True, help="where scale.json, scale.md and scale.png go")
    scale.add_argument("--sizes", default="10000,100000,1000000", help="chunk counts to grow to (comma-separated)")
    scale.add_argument("--labels", nargs="*", default=[],
                       help="label files whose query texts are asked (only the texts are used)")
    scale.add_argument("--probe-only", action="store_true",
                       help="reuse the workspaces and indexes an earlier run left in WORK: checkpoint and probe them")
    scale.set_defaults(handler=cmd_bench_scale)

    models = sub.add_parser("models", parents=[common],
                            help="list, download (network), export to ONNX, or choose a workspace's models")
    models.add_argument("action", choices=("list", "pull", "export", "use"))
    models.add_argument("names", nargs="*", help="pull: registered names or hub ids; export: a transformers "
                        "checkpoint folder; use: model names or folders (`default`, `none`)")
    models.add_argument("--json", action="store_true")
    models.add_argument("--weights", action="store_true", help="pull: the torch weights too, for export")
    models.add_argument("--out", help="export: the folder to write")
    models.add_argument("--kind", choices=("auto", "embedder", "reranker"), default="auto")
    models.add_argument("--int8", action="store_true", help="export: also an int8 model, kept only if it agrees")
    models.add_argument("--no-optimize", action="store_true", help="export: skip onnxruntime's graph fusion")
    models.add_argument("--min-agreement", type=float,
                        help="export: lowest accepted int8 score agreement (default 0.95)")
    models.add_argument("--max-length", type=int, default=256,
                        help="export: tokens of each input in the checks (default 256); check a model at the "
                             "length it runs at, e.g. a reranker at the rerank stage's 160")
    models.add_argument("--path", default=".", help="use: the workspace folder (default: current)")
    models.set_defaults(handler=cmd_models)

    calibrate = sub.add_parser("calibrate", help="fit P(here) on bench records (per_query.jsonl)")
    calibrate.add_argument("records", nargs="+", help="per_query.jsonl files from noul bench")
    calibrate.add_argument("--pipeline", default="hybrid",
                           help="the records to fit on (default: hybrid); `hybrid-all,instant` fits the static "
                           "pair's file with its models for finds while the transformer fills in")
    calibrate.add_argument("--out", default=str(recipes_directory() / "calibration"),
                           help="folder for the parameter file (default: models/calibration of this tree)")
    calibrate.add_argument("--plot", help="write a reliability diagram PNG here")
    _add_extra_records(calibrate, "other repositories' commit labels, benched with --cross-repo-negatives, "
                       "that only train P(here)", "the extra records of a query shape", "the records of that shape")
    calibrate.set_defaults(handler=cmd_calibrate)

    fit = sub.add_parser("rank-fit", help="fit the ranking stage on bench records (per_query.jsonl)")
    fit.add_argument("records", nargs="+", help="per_query.jsonl files from noul bench (hybrid pipeline)")
    fit.add_argument("--out", default=str(recipes_directory() / "ranking"),
                     help="folder for the model file (default: models/ranking of this tree)")
    fit.add_argument("--l2", type=float, default=1.0, help="L2 penalty on the standardised weights (default 1)")
    fit.add_argument("--no-ablation", action="store_true", help="skip the held-out ablation (faster)")
    _add_extra_records(fit, "other repositories' labels (`noul train labels`) that only train: every fit sees "
                       "them", "the extra records", "the records fitted with")
    fit.add_argument("--pipelines", help="the records to fit on (default: hybrid,hybrid-all,instant; records of "
                     "different dense legs must not mix)")
    fit.add_argument("--rerank", action="store_true",
                     help="from rerank-pipeline records (bench --limit 20): fit the weight of the cross-encoder's "
                     "logit against the ranker, stored in the ranking file")
    fit.set_defaults(handler=cmd_rank_fit)

    train = sub.add_parser("train", help="mine (query, code) pairs from git history; fine-tune the models on them",
                           formatter_class=argparse.RawDescriptionHelpFormatter,
                           epilog="""mine:     noul train mine --repo PATH [--repo PATH ...] --out DATA   (torch-free)
labels:   noul train labels --repo PATH [--repo PATH ...] --out LABELS.jsonl   (commits as ranking labels)
embedder: noul train embedder --data DATA --out RUN                  (pip install 'noul-lsp[train]')
reranker: noul train reranker --data DATA --out RUN
static:   noul train static --data DATA [--base RUN/model] [--teacher-texts N] --out DIR   (distil, then tune)
then:     noul models export RUN/model --out MODEL --int8 && noul models use MODEL --path .""")
    train.add_argument("action", choices=("mine", "labels", "embedder", "reranker", "static"))
    train.add_argument("--repo", action="append", metavar="PATH", help="mine: a git repository (bare or not)")
    train.add_argument("--out", required=True, help="mine: the data folder; labels: the label file; "
                       "embedder/reranker: the run folder; "
                       "static: the model folder")
    train.add_argument("--exclude", help="mine: a file of owner/name lines never to mine (e.g. benchmark repositories)")
    train.add_argument("--own", action="store_true", help="mine: the code is yours; mine it whatever its licence")
    train.add_argument("--max-commits", type=int, default=3000, help="mine: commits read per repository")
    train.add_argument("--max-pairs-per-repository", type=int, default=3000,
                       help="mine: pairs kept at most from one repository, so that one large history does not "
                            "outweigh the rest (default 3000)")
    train.add_argument("--test-negatives", type=int, default=0, metavar="N",
                       help="mine: add each pair's N best-matching test chunks (the tests that call its code) to "
                       "its negatives (default 0: definitions of source files only)")
    train.add_argument("--per-repository", type=int, default=40,
                       help="labels: ranking labels taken per repository (its newest qualifying commits)")
    train.add_argument("--static-model", metavar="NAME", help="mine: also rank with this static model (e.g. "
                       "noul-code-static-v2) for the consistency filter and the hard negatives (default: BM25 alone)")
    train.add_argument("--data", help="embedder/reranker/static: the folder `noul train mine` wrote")
    train.add_argument("--base", help="the model to start from (default: all-MiniLM-L6-v2 of the train extra); "
                       "static: the sentence-transformers teacher to distil")
    train.add_argument("--epochs", type=float, help="passes over the pairs (default: 1; static: 3)")
    train.add_argument("--held-out", action="append", metavar="OWNER/NAME",
                       help="static: a mined repository never trained on, whose MRR is reported before and after")
    train.add_argument("--teacher-texts", type=int, default=0, metavar="N",
                       help="static: also pull the table towards the teacher's vectors of N mined texts (queries and "
                       "code; embedded once, resumable, into OUT/teacher.npz; default 0: the pairs alone)")
    train.add_argument("--max-pairs", type=int, default=0, help="train on at most this many pairs (0: all)")
    train.add_argument("--max-steps", type=int, default=0, help="stop after this many steps (0: the epochs)")
    train.add_argument("--batch-size", type=int, default=32)
    train.add_argument("--learning-rate", type=float, help="AdamW's learning rate (default 5e-5; static: Adam, 3e-3)")
    train.add_argument("--max-tokens", type=int, default=128)
    train.add_argument("--hard-negatives", type=int, default=1, help="mined hard negatives per pair in the loss")
    train.add_argument("--in-batch-negatives", type=int, default=1, help="reranker: texts of other pairs (their "
                       "positives and hard negatives) each pair is also scored against; the bi-encoder uses the whole "
                       "batch for free")
    train.add_argument("--head", choices=HEADS, default="classifier", help="reranker: classifier (a fresh one-logit "
                       "layer) or segment-cosine (the cosine of the query's and the code's mean tokens in the joint pass: "
                       "starts where the bi-encoder is, no new weights)")
    train.add_argument("--layers", type=int, default=0, help="embedder/reranker: keep the base model's first N "
                       "transformer layers (default: all); a shallower cross-encoder reranks faster")
    train.add_argument("--docstring-share", type=float, help="embedder/reranker: the share of docstring pairs among "
                       "the sampled ones (default: as mined)")
    train.add_argument("--bf16", action="store_true",
                       help="bf16 autocast: faster on CPUs with AMX, 20x slower on those without (default: fp32)")
    train.add_argument("--device", choices=("cpu", "cuda"), default="cpu",
                       help="embedder/reranker: cuda trains on a GPU (with --bf16); scripts/train_gpu.py runs a lease")
    train.add_argument("--freeze-token-embeddings", action="store_true",
                       help="embedder/reranker: keep the base's token embeddings (half of MiniLM's weights)")
    train.add_argument("--max-seconds", type=float, default=0.0,
                       help="embedder/reranker: stop and save after this many seconds (default: no limit)")
    train.add_argument("--loader-workers", type=int, default=0,
                       help="embedder/reranker: processes that tokenize batches beside the trainer; on a GPU one "
                       "tokenizing process holds the embedder back (default 0: the trainer's own)")
    train.set_defaults(handler=cmd_train)

    mcp = sub.add_parser("mcp", parents=[common], help="serve coding agents over MCP (stdio)",
                         formatter_class=argparse.RawDescriptionHelpFormatter,
                         description="Serve coding agents over the Model Context Protocol on stdin/stdout.\n\n"
                         "tools: find (the fewest files and line ranges for a description, sized to a token\n"
                         "       budget), status, reindex. Roots are indexed in the background; find answers\n"
                         "       from what is indexed and says what is pending.",
                         epilog='''any MCP client (e.g. .mcp.json, or the "mcpServers" of its settings):
  {"mcpServers": {"noul": {"command": "/path/to/noul-lsp/.venv/bin/noul",
                           "args": ["mcp", "--path", "/path/to/project"]}}}
without --path, each call's `path` opens its root; with it, paths outside are refused.
needs the SDK: pip install "noul-lsp[mcp]"''')
    mcp.add_argument("--path", action="append", metavar="DIR",
                     help="a root to serve (repeatable); calls may then name only paths inside these roots")
    mcp.add_argument("--answer-tokens", type=int, metavar="N",
                     help="default token budget of a find answer, approximate (characters / 4; default 2000): "
                          "the find tool's `token_budget`, not --token-budget (the tokens of each chunk the "
                          "embedder sees)")
    mcp.add_argument("--org", action="store_true",
                     help="a find without `path` also searches the shared store's organisation index (the "
                          "repositories the store's role is granted; a hit names its `repository`)")
    mcp.set_defaults(handler=cmd_mcp)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    for stream in (sys.stdout, sys.stderr):  # a path with undecodable bytes prints as \xNN, never a traceback
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        _check_arguments(args)
        code = args.handler(args)
        sys.stdout.flush()  # here, not at exit: a reader gone by then is still a closed pipe, said quietly
        return code
    except BrokenPipeError:
        # the reader (e.g. `| head`) went away: end quietly, and keep Python from complaining at exit
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_PIPE
    except CliError as error:
        print(f"noul: error: {error}", file=sys.stderr)
        return error.code
    except (FileNotFoundError, NotADirectoryError, QueryError) as error:
        print(f"noul: error: {error}", file=sys.stderr)
        return EXIT_USAGE
    except (StoreError, ModelMissing, OSError) as error:
        print(f"noul: error: {error}", file=sys.stderr)
        return EXIT_FAILURE
    except KeyboardInterrupt:
        print("noul: interrupted; everything committed so far is kept", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
