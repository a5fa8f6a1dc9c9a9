"""`noul train labels`: ranking labels from a repository's history, for fitting the ranking stage.

The ranking stage (retrieval/rank.py) is a linear model fitted on labeled queries. The dev labels hold
208 of them over 9 repositories, and a fit on eight of those ranks the ninth well below the fit's own
sample: the weights follow those repositories. A commit is a labeled query too: its message says what a
developer wanted, and the source files it changed are where that was done, in the tree of its parent
(the SWE-bench setting: the issue is asked of the code before the fix). These labels come from other
repositories than the benchmark's, as many as history holds, and `noul bench` runs them like any label
file, so `noul rank-fit` fits on their records beside the dev records.

The commits kept are those the miner keeps (train/mine.py: no merges, bots, reverts, release bumps or
one-word messages; at most a few source files), newest first, up to `per_repository` of them. A label's
gold files are the changed files whose path role is source; a commit that touches only tests or docs
gives none. Refused like the miner: repositories in the exclusion list, and licences that are not
permissive unless the code is the caller's own.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from noul_lsp.retrieval.roles import file_role
from noul_lsp.train.git import Repository
from noul_lsp.train.mine import MineSettings, MiningRefused, admitted, code_suffixes, commit_query


@dataclass(frozen=True)
class LabelSettings:
    #: labels taken per repository (the newest qualifying commits)
    per_repository: int = 40
    #: commits read from HEAD back to find them
    max_commits: int = 1500
    #: a commit changing more source files than this is a refactor, not one intent
    max_files_per_commit: int = 3


def commit_labels(directory: Path, *, settings: LabelSettings = LabelSettings(), exclusions: set[str] = frozenset(),
                  own_code: bool = False, name: str = "") -> tuple[list[dict], dict]:
    """Label rows (../shared/bench schema, source "commit") of one repository and its provenance record;
    raises MiningRefused for an excluded or non-permissive repository."""
    filters = MineSettings(max_files_per_commit=settings.max_files_per_commit)
    rows: list[dict] = []
    with Repository(directory) as repository:
        repository_name, licence, _licence_file = admitted(repository, name, exclusions, own_code)
        read = 0
        for change in repository.history(max_commits=settings.max_commits, suffixes=code_suffixes()):
            read += 1
            query = commit_query(change, filters)
            if query is None:
                continue
            gold = sorted(path for path in change.changed if file_role(path) == "source")
            if not gold or len(change.changed) > settings.max_files_per_commit:
                continue
            rows.append({"id": f"commit-{repository_name.replace('/', '+')}-{change.sha[:10]}", "source": "commit",
                         "split": "train", "repo": repository_name, "commit": change.parent, "query": query,
                         "kind": "answerable", "tags": [], "gold_files": gold,
                         "gold_lines": {path: [list(span) for span in change.changed[path]] for path in gold}})
            if len(rows) == settings.per_repository:
                break
    record = {"repository": repository_name, "licence": licence, "head": repository.head, "commits_read": read,
              "labels": len(rows)}
    return rows, record


def write_commit_labels(directories: Sequence[Path], out: Path, *, settings: LabelSettings = LabelSettings(),
                        exclusions: set[str] = frozenset(), own_code: bool = False,
                        progress: Callable[[str], None] = lambda _m: None) -> dict:
    """Every repository's labels into `out` (JSON lines) and their provenance into `out` + ".sources.json";
    a refused repository is reported and skipped."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    sources: dict = {"repositories": {}, "refused": {}, "settings": settings.__dict__}
    with out.open("w") as handle:
        for directory in directories:
            try:
                rows, record = commit_labels(Path(directory), settings=settings, exclusions=exclusions,
                                             own_code=own_code)
            except MiningRefused as refusal:
                progress(f"refused: {refusal}")
                sources["refused"][str(directory)] = str(refusal)
                continue
            for row in rows:
                handle.write(json.dumps(row) + "\n")
            sources["repositories"][record["repository"]] = record
            progress(f"{record['repository']}: {record['labels']} labels from {record['commits_read']} commits")
    sources["labels"] = sum(r["labels"] for r in sources["repositories"].values())
    Path(str(out) + ".sources.json").write_text(json.dumps(sources, indent=2) + "\n")
    return sources
