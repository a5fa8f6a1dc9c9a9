"""Commit trees from bare git mirrors (the folders `fetch` returns), written blob by blob."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path


class MirrorMissing(FileNotFoundError):
    pass


def find_mirror(mirrors: Path, repo: str) -> Path:
    """The git directory of `owner/name` under `mirrors`: owner+name/repo, owner+name, owner/name(.git)."""
    owner, name = repo.split("/", 1)
    candidates = [mirrors / f"{owner}+{name}" / "repo", mirrors / f"{owner}+{name}", mirrors / owner / name,
                  mirrors / owner / f"{name}.git", mirrors / name, mirrors / f"{name}.git"]
    for candidate in candidates:
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return candidate
        if (candidate / ".git" / "HEAD").is_file():
            return candidate / ".git"
    raise MirrorMissing(f"no git mirror of {repo} under {mirrors} (looked for {owner}+{name}/repo, {owner}/{name})")


def write_tree(git_dir: Path, commit: str, out: Path) -> list[str]:
    """Replace the contents of `out` with the tree of `commit`, every file as committed, carrying the
    commit's time; returns the paths whose blobs the mirror lacks (left out).

    Not `git archive`: it leaves out what `.gitattributes` marks `export-ignore` (PHP packages mark their
    adapters, tests and docs so, and a benchmark's gold file can be among them), and it gives up on the
    whole tree when one blob is missing (a mirror keeps none over its size limit).
    """
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    git = ["git", f"--git-dir={git_dir}"]
    listing = subprocess.run([*git, "ls-tree", "-r", "-z", "--full-tree", commit], capture_output=True)
    when = subprocess.run([*git, "log", "-1", "--format=%ct", commit], capture_output=True, text=True)
    if listing.returncode != 0 or when.returncode != 0:
        error = listing.stderr.decode(errors="replace") or when.stderr
        raise RuntimeError(f"cannot write {commit} of {git_dir}: {error}")
    committed = int(when.stdout.strip())
    missing: list[str] = []
    with subprocess.Popen([*git, "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE) as blobs:
        for record in listing.stdout.split(b"\0"):
            meta, _, raw_path = record.partition(b"\t")
            mode, kind, sha = (meta.split() + [b"", b"", b""])[:3]
            parts = raw_path.decode("utf-8", "surrogateescape").split("/")
            if kind != b"blob" or not raw_path or any(part in ("", ".", "..") for part in parts):
                continue  # a submodule, or a path no checkout would write
            blobs.stdin.write(sha + b"\n")
            blobs.stdin.flush()
            header = blobs.stdout.readline().split()
            if len(header) < 3:
                missing.append("/".join(parts))
                continue
            data = blobs.stdout.read(int(header[2]) + 1)[:-1]
            target = out.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            if mode == b"120000":
                target.symlink_to(data.decode("utf-8", "surrogateescape"))
                continue
            target.write_bytes(data)
            if mode == b"100755":
                target.chmod(0o755)
            os.utime(target, (committed, committed))
        blobs.stdin.close()
    return missing


def commit_date(git_dir: Path, commit: str) -> str:
    """The committer date of `commit` in ISO 8601 (labels without a date are ordered by it)."""
    done = subprocess.run(["git", f"--git-dir={git_dir}", "log", "-1", "--format=%cI", commit],
                          capture_output=True, text=True)
    return done.stdout.strip()
