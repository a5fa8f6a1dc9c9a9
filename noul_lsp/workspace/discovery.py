"""Which files of a workspace root get indexed.

Inside a git work tree the list comes from `git ls-files` (tracked plus untracked-not-ignored), which is
exactly what the user sees as "their code". Elsewhere a walk honours every `.gitignore` on the way down.
`.noulignore` (gitignore syntax, at the root) and the configured excludes apply on top. Symlinks are
never followed out of the root, and directory symlinks are not followed at all (no loops).

Only regular, readable files inside the root come back; the size and binary guards run when a file is
read (`read_text_file`) so that discovery stays a cheap stat-only pass.
"""

from __future__ import annotations

import functools
import json
import os
import re
import stat
import subprocess
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pathspec

from noul_lsp.config import DEFAULT_EXCLUDES, IndexSettings
from noul_lsp.text.decode import UTF16_MARKS, source_text


@dataclass(frozen=True, slots=True)
class DiscoveredFile:
    """A candidate file: `path` is relative to the root with forward slashes."""

    path: str
    absolute: Path
    size: int
    mtime_ns: int
    #: committed although the project's ignore rules match it (`_git_ignored_but_tracked`): a library copied in
    #: and force-added, a build's output kept, which the project itself says is none of its code; None when
    #: git could not say (the index keeps what it knew)
    vendored: bool | None = False


class SkippedFile(Exception):
    """A file that is not indexed, with the reason a user can act on.

    `transient` marks a failure to read (permissions, a file vanishing mid-read): what was indexed from
    the file before is kept. A binary or oversized file is not transient: its old chunks go.
    """

    def __init__(self, message: str, *, transient: bool = False) -> None:
        super().__init__(message)
        self.transient = transient


def gitignore_spec(lines) -> pathspec.PathSpec:
    """Patterns in .gitignore syntax (also used for excludes, include filters and `embed_last`). A line
    that is no valid pattern (a lone `!`) is passed over, as git passes it over: one bad line in some
    nested .gitignore must not stop the indexing of a workspace."""
    lines = list(lines)
    with warnings.catch_warnings():  # `[[x]]` is a valid class that `re` warns of ("Possible nested set")
        warnings.simplefilter("ignore", FutureWarning)
        try:
            return pathspec.GitIgnoreSpec.from_lines(lines)
        except (ValueError, TypeError):  # GitIgnorePatternError is a ValueError
            return pathspec.GitIgnoreSpec.from_lines([line for line in lines if _valid_pattern(line)])


def _valid_pattern(line) -> bool:
    try:
        pathspec.GitIgnoreSpec.from_lines([line])
    except (ValueError, TypeError):
        return False
    return True


def _git_ls_files(root: Path, flags: list[str], paths: list[str] | None = None) -> set[str] | None:
    """What `git ls-files -z <flags>` lists (under `paths` when given, as literal pathspecs), or None when `root`
    is not inside a git work tree or git is unusable."""
    # core.fsmonitor could name a program from the workspace's config: never let git run it.
    command = ["git", "-c", "core.fsmonitor=false", "-c", "core.quotepath=off", "ls-files", "-z", *flags]
    # a checkout's thousands of changed paths in one command line passed the system's argument limit, git did
    # not start, and the walk's .gitignore rules alone then decided (files ignored by .git/info/exclude
    # indexed, tracked files matching a .gitignore dropped): past a batch, the whole listing, narrowed here
    whole = paths is None or len(paths) > _PATHS_A_CALL
    arguments = [] if whole else ["--", *(f":(literal){p}" for p in paths)]
    try:
        done = subprocess.run(command + arguments, cwd=root, capture_output=True, timeout=120, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    listed = {p for p in done.stdout.decode("utf-8", "surrogateescape").split("\0") if p}
    if paths is not None and whole:
        asked = {path.rstrip("/") for path in paths}
        listed = {p for p in listed if p in asked or any(folder in asked for folder in _folders_of(p))}
    return listed


def _git_listing(root: Path, paths: list[str] | None = None) -> list[str] | None:
    """Paths from git (only under `paths` when given), or None when `root` is not inside a git work tree
    or git is unusable."""
    listed = _git_ls_files(root, ["--cached", "--others", "--exclude-standard"], paths)
    return sorted(listed) if listed is not None else None


def _git_ignored_but_tracked(root: Path, paths: list[str] | None = None) -> set[str] | None:
    """The tracked files (under `paths` when given) that the project's own `.gitignore` files match, or None
    when git cannot say. git lists them, for it ignores nothing it tracks; a walk of an export of the same
    commit (the bench's trees) leaves them out. juice-shop's force-added three.js and its post-processing
    passes, in its own `.gitignore`, were in a checkout's first ten for 4 of 38 questions of a security review,
    as source. Only the project's rules: a user's global excludes or `.git/info/exclude` (a global `*.go` made
    every tracked file of cobra vendored) say what that user leaves untracked, not what the project is."""
    return _git_ls_files(root, ["--cached", "--ignored", "--exclude-per-directory=.gitignore"], paths)


#: changed paths given to one `git ls-files` as arguments (a deep path is ~300 bytes; Linux allows 2 MB)
_PATHS_A_CALL = 1000


def _folders_of(path: str) -> Iterator[str]:
    """`a`, `a/b` of `a/b/c.py`: the folders a path lies in."""
    parts = path.split("/")[:-1]
    for depth in range(1, len(parts) + 1):
        yield "/".join(parts[:depth])


def _walk_listing(root: Path, paths: list[str] | None = None) -> list[str]:
    """Relative paths under root (or under `paths`), honouring nested .gitignore files; directory
    symlinks not followed."""
    found: list[str] = []
    # Each entry: (directory relative to root with trailing slash or "", its compiled .gitignore).
    ignore_stack: list[tuple[str, pathspec.PathSpec]] = []

    def visit(directory: Path, relative_dir: str) -> None:
        pushed = _push_gitignore(directory, relative_dir, ignore_stack)
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError:
            entries = []
        for entry in entries:
            relative = relative_dir + entry.name
            if entry.name == ".git":
                continue
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if _ignored(ignore_stack, relative, is_dir):
                continue
            if is_dir:
                visit(Path(entry.path), relative + "/")
            else:
                found.append(relative)
        if pushed:
            ignore_stack.pop()

    if paths is None:
        visit(root, "")
        return found
    for path in paths:
        parts = [p for p in path.strip("/").split("/") if p]
        if not parts or ".git" in parts or ".." in parts:
            continue
        try:  # under a folder one may not look into (EACCES), a named path is passed over, as in the walk
            ignore_stack.clear()
            directory, relative_dir, followed = root, "", True
            for part in parts[:-1]:  # the .gitignore files on the way, as the walk would have met them
                _push_gitignore(directory, relative_dir, ignore_stack)
                directory, relative_dir = directory / part, relative_dir + part + "/"
                if directory.is_symlink() or not directory.is_dir():
                    followed = False  # the walk never enters a linked folder
                    break
            if not followed:
                continue
            _push_gitignore(directory, relative_dir, ignore_stack)
            target = directory / parts[-1]
            relative = relative_dir + parts[-1]
            is_dir = target.is_dir() and not target.is_symlink()
            if _ignored(ignore_stack, relative, is_dir):
                continue
            if is_dir:
                visit(target, relative + "/")
            elif target.exists() or target.is_symlink():
                found.append(relative)
        except OSError:
            continue
    return sorted(set(found))


def _ignored(stack: list[tuple[str, pathspec.PathSpec]], relative: str, is_dir: bool) -> bool:
    """Whether the .gitignore files on the stack leave out a path relative to the root."""
    for base, spec in stack:
        if relative.startswith(base):
            inner = relative[len(base):] + ("/" if is_dir else "")
            if spec.match_file(inner):
                return True
    return False


def lists_folder(root: Path, folder: Path, settings: IndexSettings) -> bool:
    """Whether a scan of `root` lists the files of `folder`, a folder inside it (both resolved). Not when
    the root is in a git work tree and the folder, or one on the way to it, is a repository of its own
    (git lists nothing inside another repository), nor when the root's excludes, .noulignore or ignore
    rules leave the folder out: then it needs an index of its own."""
    try:
        parts = folder.relative_to(root).parts
    except ValueError:
        return False
    if not parts:
        return True
    in_git = any((above / ".git").exists() for above in (root, *root.parents))
    if in_git and any((root.joinpath(*parts[:depth]) / ".git").exists() for depth in range(1, len(parts) + 1)):
        return False  # git lists nothing inside another repository (the walk, outside git, enters it)
    return not left_out(root, folder, settings)


def left_out(root: Path, folder: Path, settings: IndexSettings) -> bool:
    """Whether the root's excludes, .noulignore or ignore rules leave `folder` (inside it, both resolved)
    out of its scan, whatever the repositories on the way."""
    parts = folder.relative_to(root).parts
    if not parts:
        return False
    relative = "/".join(parts)
    if exclusion_spec(root, settings).match_file(relative + "/"):
        return True
    command = ["git", "-c", "core.fsmonitor=false", "check-ignore", "-q", "--", relative + "/"]
    try:  # git's own answer where the root is in a work tree (it reads every ignore file git reads)
        answer = subprocess.run(command, cwd=root, capture_output=True, timeout=30).returncode
    except (OSError, subprocess.SubprocessError):
        answer = 128
    if answer in (0, 1):  # 0: ignored, 1: not ignored, 128: not a work tree (or no git)
        return answer == 0
    stack: list[tuple[str, pathspec.PathSpec]] = []
    directory, relative_dir = root, ""
    for part in parts:
        _push_gitignore(directory, relative_dir, stack)
        if _ignored(stack, relative_dir + part, True):
            return True
        directory, relative_dir = directory / part, relative_dir + part + "/"
    return False


def serving_root(roots: Iterable[Path], folder: Path, settings: IndexSettings) -> Path | None:
    """The innermost of `roots` (other than `folder`) whose scan lists the folder's files: the index that
    serves a folder opened inside it (a second index of the same files would scan and embed them twice)."""
    for root in sorted(roots, key=lambda r: -len(r.parts)):
        if root != folder and folder.is_relative_to(root) and lists_folder(root, folder, settings):
            return root
    return None


def roots_served_by(folder: Path, roots: Iterable[Path], settings: IndexSettings) -> list[Path]:
    """The `roots` inside `folder` whose files its scan lists: a root opened around them takes their place."""
    return [r for r in roots if r != folder and r.is_relative_to(folder) and lists_folder(folder, r, settings)]


def _push_gitignore(directory: Path, relative_dir: str, stack: list[tuple[str, pathspec.PathSpec]]) -> bool:
    """Push the folder's .gitignore, if it has one, onto the walk's stack; True when it pushed."""
    gitignore = directory / ".gitignore"
    try:  # is_file raises on a folder it may not look into (EACCES): one such folder failed a whole pass
        if not gitignore.is_file():
            return False
        lines = gitignore.read_text("utf-8", errors="replace").splitlines()
    except OSError:
        return False
    stack.append((relative_dir, gitignore_spec(lines)))
    return True


def exclusion_spec(root: Path, settings: IndexSettings, *, defaults: bool = True) -> pathspec.PathSpec:
    """Configured excludes, the defaults (unless turned off, or `defaults` False) and the root's .noulignore,
    as one spec (compiled once per distinct set of lines: compiling them costs more than a save's whole
    update)."""
    lines = list(settings.exclude)
    if settings.use_default_excludes and defaults:
        lines.extend(DEFAULT_EXCLUDES)
    noulignore = root / ".noulignore"
    try:
        if noulignore.is_file():
            lines.extend(noulignore.read_text("utf-8", errors="replace").splitlines())
    except OSError:  # unreadable: the other excludes still apply
        pass
    return _compiled(tuple(lines))


@functools.lru_cache(maxsize=32)
def _compiled(lines: tuple[str, ...]) -> pathspec.PathSpec:
    return gitignore_spec(lines)


#: the paths `excluded_by_default` gives per pattern (its count is of every file)
EXCLUDED_LISTED = 50


def excluded_by_default(root: Path, settings: IndexSettings) -> dict[str, dict]:
    """The listed files that only the default excludes leave out, by the default pattern that took each
    (`status` shows them): a project's own file whose name looks like a vendored library's
    (`bootstrap-colors.css` under `bootstrap*.css`) was left out without a word. Per pattern, how many
    files and the first `EXCLUDED_LISTED` paths: a folder pattern's folders (`web/node_modules/`), not the
    thousands of files under them. The configured excludes and .noulignore are the user's choice, not listed."""
    if not settings.use_default_excludes:
        return {}
    root = root.resolve()
    listing = _git_listing(root)
    if listing is None:
        listing = _walk_listing(root)
    every, chosen = exclusion_spec(root, settings), exclusion_spec(root, settings, defaults=False)
    left_out = [path for path in listing if every.match_file(path) and not chosen.match_file(path)]
    found: dict[str, dict] = {}
    for pattern in DEFAULT_EXCLUDES:
        if not left_out:
            break
        taken = _compiled((pattern,))
        matched = {path for path in left_out if taken.match_file(path)}
        if not matched:
            continue
        left_out = [path for path in left_out if path not in matched]
        shown = sorted(matched) if not pattern.endswith("/") else sorted({
            _folder_taken(path, taken) for path in matched})
        found[pattern] = {"files": len(matched), "paths": shown[:EXCLUDED_LISTED]}
    return found


def _folder_taken(path: str, taken: pathspec.PathSpec) -> str:
    """The outermost folder of `path` that a folder pattern takes (`web/node_modules/` of its files)."""
    parts = path.split("/")
    for end in range(1, len(parts)):
        folder = "/".join(parts[:end]) + "/"
        if taken.match_file(folder):
            return folder
    return path


def is_inside(root: Path, candidate: Path) -> bool:
    """True when `candidate`, with every symlink resolved, lies inside the resolved `root`."""
    try:
        resolved = candidate.resolve(strict=True)
    except (OSError, RuntimeError):
        return False
    return resolved == root or root in resolved.parents


def discover(root: Path, settings: IndexSettings, passed_over: list[str] | None = None,
             paths: list[str] | None = None) -> list[DiscoveredFile]:
    """Every indexable file under `root` (or only at and under the relative `paths`: a save looks at what
    was saved, not at the whole tree), sorted by path. Stat-only: contents are not read here.

    Listed paths that are not regular files inside the root (links out of it, broken or looping links,
    FIFOs, sockets, devices) are left out; with `passed_over` each gets a line saying why."""
    root = root.resolve()
    listing = _git_listing(root, paths)
    # (None where git listed the files but could not tell which are vendored: each stays as the index knew it)
    vendored = _git_ignored_but_tracked(root, paths) if listing is not None else set()
    if listing is None:
        listing = _walk_listing(root, paths)
    excluded = exclusion_spec(root, settings)
    files: list[DiscoveredFile] = []

    def pass_over(relative: str, why: str) -> None:
        if passed_over is not None:
            passed_over.append(f"{relative}: {why}")

    for relative in listing:
        if excluded.match_file(relative):
            continue
        absolute = root / relative
        try:
            info = absolute.lstat()
        except OSError:
            continue  # deleted since git listed it, or unreadable directory on the way
        if stat.S_ISLNK(info.st_mode):
            if not is_inside(root, absolute):
                pass_over(relative, "a symlink that is broken, loops or points out of the workspace")
                continue
            try:
                info = absolute.stat()
            except OSError:
                pass_over(relative, "a symlink whose target cannot be read")
                continue
        if stat.S_ISDIR(info.st_mode):
            continue  # a link to a folder inside the root: its files are listed on their own
        if not stat.S_ISREG(info.st_mode):
            kind = ("a FIFO" if stat.S_ISFIFO(info.st_mode) else "a socket" if stat.S_ISSOCK(info.st_mode)
                    else "a device" if stat.S_ISCHR(info.st_mode) or stat.S_ISBLK(info.st_mode) else "not a file")
            pass_over(relative, f"{kind}, not a regular file")
            continue
        files.append(DiscoveredFile(relative, absolute, info.st_size, info.st_mtime_ns,
                                    relative in vendored if vendored is not None else None))
    return files


#: a notebook may be this many times the byte cap: its outputs (base64 images, tables) are most of its bytes,
#: and the chunker reads its cells' sources alone
NOTEBOOK_CAP_FACTOR = 20


#: how much of a file over the size cap is read to tell a binary one
BINARY_SNIFF_BYTES = 8192


def read_text_file(file: DiscoveredFile, settings: IndexSettings) -> tuple[bytes, str]:
    """The raw bytes and their text (invalid UTF-8 replaced; UTF-16 with its byte-order mark decoded).
    Raises SkippedFile with the reason."""
    cap = settings.max_file_bytes * (NOTEBOOK_CAP_FACTOR if file.path.lower().endswith(".ipynb") else 1)
    if file.size > cap:
        # a large asset (a game's music, models, textures) is binary first: said so, it is counted with the
        # other binaries, not listed on a line of its own as too large (a game's `status` had 35 such lines)
        try:
            with open(file.absolute, "rb") as handle:
                head = handle.read(BINARY_SNIFF_BYTES)
        except OSError:
            head = b""
        if not head.startswith(UTF16_MARKS):
            _refuse_binary(file, head)
        raise SkippedFile(f"{file.path}: {file.size} bytes is over the {cap}-byte cap")
    try:
        with open(file.absolute, "rb") as handle:
            data = handle.read(cap + 1)
    except OSError as error:
        raise SkippedFile(f"{file.path}: unreadable ({error.strerror or error})", transient=True) from error
    if len(data) > cap:
        raise SkippedFile(f"{file.path}: grew over the {cap}-byte cap while read")
    if len(data) > settings.max_file_bytes:  # a notebook past the cap: only as JSON, whose outputs are not read
        try:
            json.loads(data)
        except ValueError:  # (a merge conflict's markers): it would be cut whole, outputs and all
            raise SkippedFile(f"{file.path}: {len(data)} bytes is over the {settings.max_file_bytes}-byte cap "
                              "and not a notebook's JSON") from None
    if data.startswith(UTF16_MARKS):  # its NUL bytes are no binary: Windows editors and PowerShell write it
        text = source_text(data)
        if "\0" not in text and "\ufffd" not in text:
            return data, text
    # anywhere, not in the first 8 KB alone (git's test): a PDF or an Illustrator file opens with kilobytes
    # of text metadata, and its compressed streams were indexed as code and ranked (one search of memchr)
    _refuse_binary(file, data)
    text = source_text(data)
    if (secret := secret_kind(text)) is not None:
        raise SkippedFile(f"{file.path}: {secret}, never indexed")
    return data, text


def _refuse_binary(file: DiscoveredFile, data: bytes) -> None:
    """Raises SkippedFile where the bytes hold a NUL (outside UTF-16, which the caller has ruled out)."""
    if (nul := data.find(b"\0")) >= 0:
        raise SkippedFile(f"{file.path}: binary (a NUL byte at byte {nul})")


#: a file that is a private key (PEM: `-----BEGIN PRIVATE KEY-----`, `-----BEGIN OPENSSH PRIVATE KEY-----`, an App
#: Store `.p8`), from its first line on: not a test that holds a key among its code
_PRIVATE_KEY = re.compile(r"\A\s*-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----")
#: an Ansible vault: ciphertext from its header on
_VAULT = re.compile(r"\A\s*\$ANSIBLE_VAULT;")


def secret_kind(text: str) -> str | None:
    """What secret a file is, or None: a private key, an encrypted vault. Its text would go into previews, an
    agent's answers over MCP and a shared store (an ops walkthrough found an App Store key in a preview, and a
    vault's ciphertext ranked for unrelated questions); a search never needs it."""
    if _PRIVATE_KEY.match(text):
        return "a private key"
    if _VAULT.match(text):
        return "an encrypted Ansible vault"
    return None
