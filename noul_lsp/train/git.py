"""Reading a git repository (bare mirror or working copy) without checking anything out: file contents at
any commit through one `git cat-file --batch` process, and the history as (commit, message, changed line
ranges) from one `git log -p -U0` stream. Nothing in the repository is ever executed."""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path


class GitError(RuntimeError):
    """git refused (not a repository, unknown commit); the message says which command and why."""


def _git(directory: Path, *args: str) -> str:
    result = subprocess.run(["git", "-C", str(directory), *args], capture_output=True, text=True,
                            encoding="utf-8", errors="replace")
    if result.returncode != 0:
        raise GitError(f"git {' '.join(args[:3])} in {directory}: {result.stderr.strip()[:300]}")
    return result.stdout


@dataclass
class CommitChange:
    """One non-merge commit: its message and, per file, the line ranges of the parent that it changed."""

    sha: str
    parent: str
    author: str
    email: str
    message: str
    #: path -> [(first, last)] 1-based inclusive ranges of the parent's lines; (n + 1, n) marks an insertion
    #: between parent lines n and n + 1
    changed: dict[str, list[tuple[int, int]]] = field(default_factory=dict)


_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


class Repository:
    """A git repository read in place; use as a context manager (it holds a cat-file process)."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory).resolve()
        if not self.directory.is_dir():
            raise GitError(f"{self.directory}: not a folder")
        try:
            self.git_dir = Path(_git(self.directory, "rev-parse", "--absolute-git-dir").strip())
        except GitError:
            raise GitError(f"{self.directory}: not a git repository (give a clone or a bare mirror)") from None
        try:
            self.head = _git(self.directory, "rev-parse", "--verify", "-q", "HEAD^{commit}").strip()
        except GitError:
            raise GitError(f"{self.directory}: the repository has no commits yet") from None
        self._batch: subprocess.Popen | None = None

    def __enter__(self) -> Repository:
        return self

    def __exit__(self, *_exc) -> None:
        self.close()

    def close(self) -> None:
        if self._batch is not None:
            self._batch.stdin.close()
            self._batch.wait(timeout=10)
            self._batch = None

    def name(self) -> str:
        """owner/name: from a mirror folder `owner+name/repo`, else the origin URL (a clone's of such a mirror
        too), else the folder name."""
        top = self.git_dir.parent if self.git_dir.name == ".git" else self.git_dir  # the work tree, or a bare one
        for candidate in (top.name, top.parent.name):  # owner+name, or owner+name/repo (bare or checked out)
            if "+" in candidate:
                return candidate.replace("+", "/", 1)
        try:
            url = _git(self.directory, "config", "--get", "remote.origin.url").strip()
        except GitError:
            url = ""
        segments = [part for part in re.split(r"[:/\\]", url.removesuffix("/").removesuffix(".git")) if part]
        for candidate in segments[-2:]:  # a clone of a local mirror: its origin is `.../owner+name/repo`
            if "+" in candidate:
                return candidate.replace("+", "/", 1)
        match = re.search(r"[:/]([^/:]+/[^/]+?)(?:\.git)?/?$", url)
        if match:
            return match.group(1)
        return top.name.removesuffix(".git")

    def resolve(self, revision: str) -> str:
        """The full id of the commit `revision` names (a branch, a tag, a short id)."""
        try:
            return _git(self.directory, "rev-parse", "--verify", "-q", f"{revision}^{{commit}}").strip()
        except GitError:
            raise GitError(f"{self.directory}: no commit {revision!r}") from None

    def files(self, commit: str) -> list[str]:
        """Every file path of the commit's tree."""
        return [line for line in _git(self.directory, "ls-tree", "-r", "--name-only", "-z", commit).split("\0") if line]

    def read(self, commit: str, path: str, *, max_bytes: int) -> str | None:
        """The file at `commit` as text, or None when it is missing, binary, over `max_bytes` or not UTF-8."""
        if "\n" in path:
            return None  # cannot be asked for over the line protocol
        if self._batch is None:
            self._batch = subprocess.Popen(["git", "-C", str(self.directory), "cat-file", "--batch"],
                                           stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self._batch.stdin.write(f"{commit}:{path}\n".encode("utf-8", "surrogateescape"))
        self._batch.stdin.flush()
        header = self._batch.stdout.readline().decode("utf-8", "replace").split()
        # "<sha> <type> <size>", or "<what was asked> missing" (which may hold spaces)
        if len(header) != 3 or header[-1] == "missing" or not header[2].isdigit():
            return None
        size = int(header[2])
        remaining, data = size + 1, b""
        while remaining > 0:  # read it all (the protocol needs it), keep only what may be used
            part = self._batch.stdout.read(min(remaining, 1 << 20))
            if not part:
                break
            remaining -= len(part)
            if size <= max_bytes:
                data += part
        data = data[:size]
        if header[1] != "blob" or size > max_bytes or b"\0" in data[:8192]:
            return None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError:
            return None

    def history(self, *, max_commits: int, suffixes: tuple[str, ...]) -> Iterator[CommitChange]:
        """Non-merge commits from HEAD back, newest first, with the parent line ranges each changed in
        files ending in one of `suffixes` (modified files only: an added file has no parent version)."""
        command = ["git", "-C", str(self.directory), "-c", "core.quotePath=false", "log", "--no-merges", f"-n{max_commits}", "--no-color",
                   "--no-renames", "--diff-filter=M", "-U0", "--format=%x1e%H%x1f%P%x1f%an%x1f%ae%x1f%B%x1d",
                   "HEAD", "--", *(f"*{suffix}" for suffix in suffixes)]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        buffer: list[str] = []
        try:
            for raw in process.stdout:
                line = raw.decode("utf-8", "replace")
                if line.startswith("\x1e") and buffer:
                    change = _parse_commit("".join(buffer))
                    if change is not None:
                        yield change
                    buffer = []
                buffer.append(line)
            if buffer:
                change = _parse_commit("".join(buffer))
                if change is not None:
                    yield change
        finally:
            process.stdout.close()
            process.kill()
            process.wait()


def _parse_commit(record: str) -> CommitChange | None:
    header, _, diff = record.lstrip("\x1e").partition("\x1d")
    parts = header.split("\x1f", 4)
    if len(parts) < 5:
        return None
    sha, parents, author, email, message = parts[0], parts[1].split(), parts[2], parts[3], parts[4]
    if len(parents) != 1:
        return None  # a root commit has no parent version; merges are excluded by --no-merges
    change = CommitChange(sha, parents[0], author, email, message.strip())
    path = None
    in_header = False  # between "diff --git" and the first hunk: only there is "--- a/x" a file name
    for line in diff.splitlines():
        if line.startswith("diff --git "):
            in_header, path = True, None
        elif in_header and line.startswith("--- "):
            path = line[6:].rstrip("\t") if line.startswith("--- a/") else None
        elif line.startswith("@@") and path is not None:
            in_header = False
            match = _HUNK.match(line)
            if match:
                start, count = int(match.group(1)), int(match.group(2) if match.group(2) is not None else 1)
                span = (start + 1, start) if count == 0 else (start, start + count - 1)
                change.changed.setdefault(path, []).append(span)
    return change
