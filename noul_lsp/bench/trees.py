"""Commit trees from bare git mirrors (the folders `fetch` returns), written with `git archive`."""

from __future__ import annotations

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


def write_tree(git_dir: Path, commit: str, out: Path) -> None:
    """Replace the contents of `out` with the tree of `commit` (its files carry the commit's time)."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    archive = subprocess.Popen(["git", f"--git-dir={git_dir}", "archive", "--format=tar", commit],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    extract = subprocess.run(["tar", "-x", "-C", str(out)], stdin=archive.stdout, capture_output=True)
    archive.stdout.close()
    error = archive.stderr.read().decode(errors="replace")
    if archive.wait() != 0 or extract.returncode != 0:
        raise RuntimeError(f"cannot write {commit} of {git_dir}: {error or extract.stderr.decode(errors='replace')}")


def commit_date(git_dir: Path, commit: str) -> str:
    """The committer date of `commit` in ISO 8601 (labels without a date are ordered by it)."""
    done = subprocess.run(["git", f"--git-dir={git_dir}", "log", "-1", "--format=%cI", commit],
                          capture_output=True, text=True)
    return done.stdout.strip()
