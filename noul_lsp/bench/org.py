"""`noul bench-org`: the organisation search against each repository's own, on labeled descriptions.

Every label's query is asked three times with the same pipeline (BM25 + the organisation index's vector
leg, the fitted ranker): of the organisation index (`find_org`, every repository the reader may see); of
the organisation index as a role granted only the label's repository (row-level security does the
narrowing: what the two-step search itself costs, without the other repositories' look-alike code); and
of the label's repository alone (its local index, written by `noul org index` under the same work folder).
The reader must own the store (the bench creates one login role per label repository).
A hit counts when its repository is the label's and its path a gold file; labels of what is not there
(`not_here`) are left out, as `noul bench` leaves them out of Acc@k. The figures: Acc@1/Acc@5 per
label file for both, and the organisation search's latency per stage (p50/p95), from one run.
The organisation search is asked once before repository coherence (retrieval/coherence.py) and each
exponent of `EXPONENTS` is scored from that list, in sample and leave-one-repository-out
(`coherence_loro`): the figures the shipped exponent was chosen by.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from pathlib import Path

from noul_lsp.bench.metrics import accuracy_at, percentile
from noul_lsp.config import Settings
from noul_lsp.retrieval.coherence import Coherence, by_repository_coherence
from noul_lsp.session.workspace import Workspace
from noul_lsp.team.org import COHERENCE, find_org
from noul_lsp.team.schema import connect, grant

#: hits looked at per query
DEPTH = 10
#: the repository-coherence exponents the leave-one-repository-out choice is made among
EXPONENTS = (0.0, 0.25, 0.5, 1.0, 2.0)


def _ranked(hits: list[tuple[str, str]]) -> list[str]:
    """Hits as `repository:path`, the form the gold files are compared in (`metrics.accuracy_at`)."""
    return [f"{repo}:{path}" for repo, path in hits]


def _accuracy(records: list[dict], way: str, k: int) -> float:
    """Acc@k as `noul bench` counts it (bench.metrics: min(k, |gold|) gold files in the top k)."""
    return round(sum(accuracy_at(r[way], r["gold"], k) for r in records) / max(len(records), 1), 3)


def _alone_url(url: str, repo: str) -> str:
    """A login role that sees only `repo` (created and granted by the owner's connection `url`)."""
    from psycopg import conninfo, sql

    role = "noul_bench_" + "".join(c if c.isalnum() else "_" for c in repo.lower())
    with connect(url, vectors=False) as connection:
        exists = connection.execute("SELECT 1 FROM pg_roles WHERE rolname = %s", (role,)).fetchone()
        if not exists:
            connection.execute(sql.SQL("CREATE ROLE {} LOGIN").format(sql.Identifier(role)))
    grant(url, role, [repo])
    return conninfo.make_conninfo(url, user=role)


def _exponents() -> tuple[float, ...]:
    """The exponents each query is scored with: the grid and the shipped one."""
    return tuple(dict.fromkeys((*EXPONENTS, COHERENCE.exponent)))


def coherence_loro(records: list[dict]) -> dict:
    """Acc@1/Acc@5 of the organisation search per coherence exponent (in sample; each record's
    `org_by_exponent` holds its ranked list per exponent), and with the exponent chosen
    leave-one-repository-out: for each repository, the exponent best on the other repositories' queries
    (Acc@5, then Acc@1, then the smaller exponent) scores its own."""
    def score(part: list[dict], exponent: float) -> tuple[float, float]:
        ranked = [r | {"way": r["org_by_exponent"][str(exponent)]} for r in part]
        return _accuracy(ranked, "way", 5), _accuracy(ranked, "way", 1)

    exponents = _exponents()
    chosen = {repo: max(exponents, key=lambda e: (*score([r for r in records if r["repo"] != repo], e), -e))
              for repo in dict.fromkeys(r["repo"] for r in records)}
    held_out = [r | {"way": r["org_by_exponent"][str(chosen[r["repo"]])]} for r in records]
    return {"shipped_exponent": COHERENCE.exponent, "depth": COHERENCE.depth,
            "in_sample": {str(e): dict(zip(("acc@5", "acc@1"), score(records, e), strict=True)) for e in exponents},
            "leave_one_repository_out": {"acc@5": _accuracy(held_out, "way", 5),
                                         "acc@1": _accuracy(held_out, "way", 1), "chosen": chosen}}


def run_org_bench(url: str, labels: list[Path], work: Path, settings: Settings, out: Path,
                  log: Callable[[str], None] = print) -> dict:
    settings = settings if settings.cache_dir else dataclasses.replace(settings, cache_dir=str(work / "cache"))
    out.mkdir(parents=True, exist_ok=True)
    queries = [(path.stem, label) for path in labels for line in path.read_text().splitlines() if line.strip()
               if (label := json.loads(line)).get("kind", "answerable") == "answerable"]  # as `noul bench` scores
    workspaces: dict[str, Workspace] = {}
    alone: dict[str, str] = {}
    records, timings = [], []
    find_org(url, "warm up the models", settings)  # model loading is not a query's cost
    for label_file, label in queries:
        repo, gold = label["repo"], label["gold_files"]
        started = time.perf_counter()
        # as find_org asks (deep enough for coherence), before coherence: each exponent is scored from it
        org = find_org(url, label["query"], settings, coherence=Coherence(0.0), limit=max(DEPTH, COHERENCE.depth))
        wall = (time.perf_counter() - started) * 1000
        coherent = {exponent: _ranked([(h.repository, h.path) for h in by_repository_coherence(
            org.hits, dataclasses.replace(COHERENCE, exponent=exponent))[:DEPTH]])
            for exponent in _exponents()}
        timings.append(org.timings | {"wall": wall})
        if repo not in workspaces:
            workspaces[repo] = Workspace(work / "trees" / repo.replace("/", "+"), settings)
        own = workspaces[repo].find(label["query"], limit=DEPTH, legs=("bm25", "static"))
        if repo not in alone:
            alone[repo] = _alone_url(url, repo)
        narrowed = find_org(alone[repo], label["query"], settings, limit=DEPTH)
        record = {"id": label["id"], "labels": label_file, "repo": repo, "gold": [f"{repo}:{g}" for g in gold],
                  "org": coherent[COHERENCE.exponent], "org_by_exponent": {str(e): v for e, v in coherent.items()},
                  "own": _ranked([(repo, h.path) for h in own.hits]),
                  "alone": _ranked([(h.repository, h.path) for h in narrowed.hits]),
                  "org_repos_in_top5": sorted({hit.split(":")[0] for hit in coherent[COHERENCE.exponent][:5]}),
                  "org_ms": round(wall, 1)}
        records.append(record)
    for workspace in workspaces.values():
        workspace.close()
    summary: dict = {"queries": len(records), "per_label_file": {}}
    for name in dict.fromkeys(r["labels"] for r in records):
        part = [r for r in records if r["labels"] == name]
        summary["per_label_file"][name] = {
            "queries": len(part),
            **{name: {"acc@1": _accuracy(part, way, 1), "acc@5": _accuracy(part, way, 5)}
               for name, way in (("org", "org"), ("org_granted_only_its_repository", "alone"), ("own", "own"))}}
    summary["repository_coherence"] = coherence_loro(records)
    stages = sorted({k for t in timings for k in t})
    summary["latency_ms"] = {stage: {f"p{q}": round(percentile([t.get(stage, 0.0) for t in timings], q), 1)
                                     for q in (50, 95)} for stage in stages}
    (out / "per_query.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (out / "summary.json").write_text(json.dumps(summary, indent=2) + "\n")
    log(json.dumps(summary, indent=2))
    return summary
