"""Fault runs for tests/test_faults.py, in a process of their own (a crash kills it, not pytest).

  python tests/fault_runs.py flips PRISTINE_CACHE WORKSPACE SCRATCH SEEDS FLIPS QUERY...

For each seed: a copy of the pristine index cache, FLIPS bytes of its data.mdb XOR-ed at random offsets
(random.Random(seed)), then `noul find QUERY --json` through the real CLI for every query. One JSON line
per seed: the outcome ("same": the pristine index's answer; "rebuilt": damage reported, the index set
aside and the answer then the pristine one; anything else is a failure) and the details.

  python tests/fault_runs.py index WORKSPACE CACHE

`noul index` of the workspace (killed at random points by the test).
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import shutil
import sys
from pathlib import Path

from noul_lsp import cli


def find(query: str, workspace: Path, cache: Path) -> tuple[int, list, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli.main(["find", query, "--path", str(workspace), "--cache-dir", str(cache), "--json",
                         "--mode", "chunks", "--limit", "8"])
    answer = []
    if code == 0:
        report = json.loads(out.getvalue())
        answer = [(r["path"], r["startLine"], r["endLine"], r["rank"], round(r["score"], 6)) for r in report["results"]]
    return code, answer, err.getvalue()


def flips(pristine: Path, workspace: Path, scratch: Path, seeds: list[int], count: int, queries: list[str]) -> None:
    expected = {q: find(q, workspace, pristine)[1] for q in queries}
    for seed in seeds:
        cache = scratch / f"seed-{seed}"
        shutil.copytree(pristine, cache)
        (index,) = (cache / "indexes").iterdir()
        data = index / "data.mdb"
        raw = bytearray(data.read_bytes())
        rng = random.Random(seed)
        offsets = sorted(rng.randrange(len(raw)) for _ in range(count))
        for offset in offsets:
            raw[offset] ^= rng.randrange(1, 256)
        data.write_bytes(bytes(raw))
        outcome, details = "same", []
        for query in queries:
            code, answer, err = find(query, workspace, cache)
            damaged = "was damaged" in err
            if code != 0 or "Traceback" in err:
                outcome = "error"
            elif answer != expected[query]:
                outcome = "wrong"
            elif damaged and outcome == "same":
                outcome = "rebuilt"
            details.append({"query": query, "code": code, "stderr": err[-400:], "damaged": damaged})
        kept = sorted(p.name for p in (cache / "indexes").iterdir() if ".damaged-" in p.name)
        if outcome == "rebuilt" and not kept:
            outcome = "not-kept"
        print(json.dumps({"seed": seed, "outcome": outcome, "offsets": offsets[:5], "kept": kept,
                          "details": details}), flush=True)
        shutil.rmtree(cache, ignore_errors=True)


def main(argv: list[str]) -> int:
    if argv[0] == "flips":
        pristine, workspace, scratch, seeds, count, *queries = argv[1:]
        first, _, last = seeds.partition("-")
        flips(Path(pristine), Path(workspace), Path(scratch), list(range(int(first), int(last or first) + 1)),
              int(count), queries)
        return 0
    if argv[0] == "index":
        return cli.main(["index", argv[1], "--cache-dir", argv[2], "--quiet"])
    raise SystemExit(f"unknown run {argv[0]!r}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
