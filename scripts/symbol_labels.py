"""Bare-symbol labels for the dev repositories: what an agent or a person types when they look for a name.

Answerable: an identifier defined in exactly one non-test source file of the repository (tree-sitter
definitions, at least 8 characters, snake_case or camelCase: a name, not a word), whose gold file is that
file. Not here: an identifier defined in another repository of the same language that no file of this
tree contains, in any case (`grep -riF`). Both drawn with a fixed seed, so the file is reproducible from
the mirrors:

    python scripts/symbol_labels.py --mirrors /work/.mirror --out bench/labels/symbol-dev.jsonl

`--multi` draws what that set leaves out, the names people type most: defined in two or three source
files (a function and the method that wraps it, a class and its subclass of the same name, `url_for`,
`Blueprint`), 5 characters or more, a capitalised word allowed, all defining files gold; and absent
names by the same rule (donor repositories without a mirror are skipped):

    python scripts/symbol_labels.py --mirrors /work/.mirror --multi --out bench/labels/symbol-multi-dev.jsonl

`--qualified` draws what people and agents type to tell one of several same-named definitions from the
others: `Scope.name` (`Type::name` in Rust), a method or member whose bare name is defined in two or more
source files while the qualified name is defined in one (`Session.request` where `request` is also a
module function), its file gold; answerable only:

    python scripts/symbol_labels.py --mirrors /work/.mirror --qualified --out bench/labels/symbol-qualified-dev.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import re
import subprocess
import tempfile
from pathlib import Path

from noul_lsp.bench.trees import MirrorMissing, find_mirror, write_tree
from noul_lsp.chunking import FileChunker
from noul_lsp.chunking.languages import language_for_path
from noul_lsp.config import IndexSettings
from noul_lsp.retrieval.roles import file_role

#: each dev repository of the describe labels at their commit, and repositories of its language whose
#: definitions are the candidate absent names (their HEAD)
TARGETS = {
    "pallets/flask": ("2ac89889f4cc330eabd50f295dcef02828522c69",
                      ("pallets/werkzeug", "httpie/cli", "urllib3/urllib3", "pallets/jinja")),
    "psf/requests": ("1f6589ec3a1ee910f9a65cc3ceac60b26677bc0e",
                     ("pallets/werkzeug", "httpie/cli", "urllib3/urllib3", "pallets/jinja")),
    "pytest-dev/pytest": ("df87db7b0462fb764ef73fa00561adf8ad047572",
                          ("pallets/werkzeug", "httpie/cli", "urllib3/urllib3", "pallets/jinja")),
    "spf13/cobra": ("adbc8813901bba65827259daa8e22ff94ec1f30e", ("urfave/cli", "spf13/pflag")),
    "expressjs/express": ("a3714473feb3d2908add734d340e7755fd85e0a3", ("koajs/koa", "fastify/fastify")),
    "clap-rs/clap": ("6982fb1c98c7247e38a6d4f04191b94e30497e7b", ("sharkdp/fd", "sharkdp/bat", "rust-lang/log")),
}
PER_KIND = 15
#: names drawn from the other repositories before the absence check keeps the first PER_KIND
ABSENT_POOL = 400
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _distinctive(name: str) -> bool:
    """The first set's rule: 8 characters or more, snake_case or camelCase."""
    return len(name) >= 8 and ("_" in name.strip("_") or bool(re.search(r"[a-z][A-Z]", name)))


def _typed(name: str) -> bool:
    """The multi set's rule: 5 characters or more, snake_case, camelCase or a capitalised word."""
    return len(name) >= 5 and ("_" in name.strip("_") or bool(re.search(r"[a-z][A-Z]", name)) or name[0].isupper())


def _tree(mirrors: Path, repo: str, commit: str | None, out: Path) -> Path:
    """The tree of `commit` (None: the mirror's HEAD) written into `out`, once."""
    git_dir = find_mirror(mirrors, repo)
    if commit is None:
        commit = subprocess.run(["git", f"--git-dir={git_dir}", "rev-parse", "HEAD"], capture_output=True, text=True,
                                check=True).stdout.strip()
    if not out.exists():
        write_tree(git_dir, commit, out)
    return out


def _source_chunks(root: Path):
    """(relative path, chunk) of the tree's non-test source files (500 kB or less)."""
    chunker = FileChunker(IndexSettings())
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if (not path.is_file() or language_for_path(relative) is None or file_role(relative) != "source"
                or path.stat().st_size > 500_000):
            continue
        try:
            text = path.read_text()
        except (UnicodeDecodeError, OSError):
            continue
        for chunk in chunker.chunk(relative, text):
            yield relative, chunk


def definitions(root: Path, keep=_distinctive) -> dict[str, set[str]]:
    """Definition names of the tree's non-test source files that `keep` accepts, each with the files
    defining it."""
    found: dict[str, set[str]] = {}
    for relative, chunk in _source_chunks(root):
        name = (chunk.symbol or "").split(".")[-1].split("::")[-1]
        if _NAME.match(name) and keep(name):
            found.setdefault(name, set()).add(relative)
    return found


def qualified_definitions(root: Path) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """(each `Scope.name` of the tree's non-test source files with the files defining it, each bare name's
    files): the last two parts of every definition and nested definition that has a scope."""
    qualified: dict[str, set[str]] = {}
    bare: dict[str, set[str]] = {}
    for relative, chunk in _source_chunks(root):
        for symbol in (chunk.symbol or "", *chunk.names):
            parts = [p for p in re.split(r"\.|::", symbol) if p]
            if not parts or not _NAME.match(parts[-1]):
                continue
            bare.setdefault(parts[-1], set()).add(relative)
            if len(parts) >= 2 and _NAME.match(parts[-2]) and len(parts[-1]) >= 3 and not parts[-1].startswith("__"):
                qualified.setdefault(f"{parts[-2]}.{parts[-1]}", set()).add(relative)
    return qualified, bare


def qualified_labels(mirrors: Path, work: Path, seed: int = 13, per_repository: int = 10) -> list[dict]:
    """`--qualified` (see the module's docstring)."""
    rng = random.Random(seed)
    out: list[dict] = []
    for repo, (commit, _) in TARGETS.items():
        short = repo.split("/")[1]
        root = _tree(mirrors, repo, commit, work / repo.replace("/", "+"))
        qualified, bare = qualified_definitions(root)
        chosen = sorted(name for name, files in qualified.items()
                        if len(files) == 1 and len(bare[name.split(".")[-1]]) >= 2)
        rng.shuffle(chosen)
        separator = "::" if repo == "clap-rs/clap" else "."
        for i, name in enumerate(chosen[:per_repository], 1):
            out.append({"id": f"symbol-qualified-{short}-{i:02d}", "source": "symbol", "split": "dev", "repo": repo,
                        "commit": commit, "query": name.replace(".", separator), "kind": "answerable",
                        "tags": ["qualified"], "gold_files": sorted(qualified[name]), "gold_lines": {}, "cite": [],
                        "why": f"`{name}` is defined in this file alone; `{name.split('.')[-1]}` alone in "
                               f"{len(bare[name.split('.')[-1]])} source files (tree-sitter definitions)"})
    return out


def _absent(root: Path, name: str) -> bool:
    return subprocess.run(["grep", "-rqiF", name, str(root)]).returncode != 0


def labels(mirrors: Path, work: Path, seed: int = 13, *, multi: bool = False) -> list[dict]:
    rng = random.Random(seed)
    keep, defined_in, per_kind = (_typed, (2, 3), 10) if multi else (_distinctive, (1, 1), PER_KIND)
    prefix = "symbol-multi" if multi else "symbol"
    out: list[dict] = []
    for repo, (commit, donors) in TARGETS.items():
        short = repo.split("/")[1]
        root = _tree(mirrors, repo, commit, work / repo.replace("/", "+"))
        chosen = {name: files for name, files in definitions(root, keep).items()
                  if defined_in[0] <= len(files) <= defined_in[1]}
        names = sorted(chosen)
        rng.shuffle(names)
        why = ("defined in exactly this non-test source file (tree-sitter definitions)" if not multi else
               "defined in each of these non-test source files (tree-sitter definitions)")
        for i, name in enumerate(names[:per_kind], 1):
            out.append({"id": f"{prefix}-{short}-{i:02d}", "source": "symbol", "split": "dev", "repo": repo,
                        "commit": commit, "query": name, "kind": "answerable", "tags": ["multi"] if multi else [],
                        "gold_files": sorted(chosen[name]), "gold_lines": {}, "cite": [], "why": why})
        pool: set[str] = set()
        present = []
        for donor in donors:
            try:
                pool |= set(definitions(_tree(mirrors, donor, None, work / donor.replace("/", "+")), keep))
                present.append(donor)
            except MirrorMissing:
                if not multi:
                    raise  # the first set was drawn with every donor: it stays reproducible or fails
        candidates = sorted(pool)
        rng.shuffle(candidates)
        absent = [name for name in candidates[:ABSENT_POOL] if _absent(root, name)][:per_kind]
        for i, name in enumerate(absent, 1):
            out.append({"id": f"{prefix}-nothere-{short}-{i:02d}", "source": "symbol", "split": "dev", "repo": repo,
                        "commit": commit, "query": name, "kind": "not_here", "tags": [], "gold_files": [],
                        "gold_lines": {}, "cite": [],
                        "why": f"defined in {', '.join(present)}; `grep -riF` finds it nowhere in this tree"})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mirrors", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--multi", action="store_true", help="names defined in two or three files (see above)")
    parser.add_argument("--qualified", action="store_true", help="Scope.name where name alone is ambiguous (see above)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        found = qualified_labels(args.mirrors, Path(work)) if args.qualified else \
            labels(args.mirrors, Path(work), multi=args.multi)
    args.out.write_text("".join(json.dumps(record) + "\n" for record in found))
    print(f"{args.out}: {sum(r['kind'] == 'answerable' for r in found)} answerable, "
          f"{sum(r['kind'] == 'not_here' for r in found)} not_here")


if __name__ == "__main__":
    main()
