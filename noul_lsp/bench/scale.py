"""The scale benchmark: one workspace of real code grown from ~10k to ~100k to ~1M chunks, and at each size
what a user feels (`noul bench-scale`).

The code: the bare git mirrors under `--mirrors`, first every mirror's HEAD, then older tagged releases of
them in turn, written with `git archive` into a pool once and hard-linked into the workspace of each size.
At each size, in this process: the cold index (scan + chunk, the static pass that gives every chunk its
dense leg, the checkpoint that writes the corpus snapshot), the index's size on disk. Then, in fresh
processes as a server would be (`python -m noul_lsp.bench.scale probe ...`, PROBES_PER_SIZE of them, the
last one's figures kept): the time from opening the
workspace to its first answer, p50/p95 of warm finds per stage, its memory, the approximate index's
recall@50 against exact search, and what a save costs the next find. The transformer leg is not in these
figures: on two cores it embeds ~35 chunks/s, eight hours for a million chunks; the static leg is the
dense side at this scale.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np

from noul_lsp.bench.trees import write_tree
from noul_lsp.config import Settings
from noul_lsp.retrieval.dense import CANDIDATES
from noul_lsp.retrieval.snapshot import save_snapshot

#: chunks per indexed file, to pick how many trees make a size before indexing them (then measured), and
#: the margin taken over the size (files of later trees yield fewer chunks than the first ones' did)
FIRST_CHUNKS_PER_FILE = 9.0
MARGIN = 1.3
#: older releases taken per mirror, at most
RELEASES_PER_MIRROR = 12
#: fresh probe processes per size: the first after a long job (the index, the other sizes) pays for the
#: index pages the kernel dropped (a million chunks: 5 GB on disk; its warm descriptions measured 34.6 ms
#: p50 on a second probe and 51.3 on a first), so the figures are the last probe's
PROBES_PER_SIZE = 2


@dataclass(frozen=True)
class ScaleConfig:
    mirrors: Path
    work: Path
    out: Path
    sizes: tuple[int, ...]
    labels: tuple[Path, ...]
    settings: Settings
    #: warm finds per shape of query
    queries: int = 60
    #: reuse each size's workspace and index from an earlier run: checkpoint it with this code, then probe
    probe_only: bool = False


@dataclass(frozen=True)
class Tree:
    name: str
    git_dir: Path
    revision: str

    @property
    def folder(self) -> str:
        return f"{self.name}@{self.revision.replace('/', '_')}"


def plan_trees(mirrors: Path) -> list[Tree]:
    """Every mirror's HEAD, smallest first (so that a small size is many repositories, not one large one),
    then older releases (tags, newest first, spread over the history) in turn."""
    heads: list[tuple[int, Tree]] = []
    older: list[list[Tree]] = []
    for folder in sorted(p for p in mirrors.iterdir() if (p / "repo" / "HEAD").is_file()):
        git_dir = folder / "repo"
        listing = subprocess.run(["git", f"--git-dir={git_dir}", "ls-tree", "-r", "--name-only", "HEAD"],
                                 capture_output=True, text=True).stdout
        heads.append((listing.count("\n"), Tree(folder.name, git_dir, "HEAD")))
        tags = subprocess.run(["git", f"--git-dir={git_dir}", "for-each-ref", "--sort=-creatordate",
                               "--format=%(refname:short)", "refs/tags"], capture_output=True, text=True).stdout.split()
        step = max(1, len(tags) // RELEASES_PER_MIRROR)
        older.append([Tree(folder.name, git_dir, tag) for tag in tags[step::step][:RELEASES_PER_MIRROR]])
    rounds = [tree for round_ in _round_robin(older) for tree in round_]
    return [tree for _, tree in sorted(heads, key=lambda item: item[0])] + rounds


def _round_robin(lists: list[list[Tree]]) -> list[list[Tree]]:
    depth = max((len(x) for x in lists), default=0)
    return [[x[i] for x in lists if i < len(x)] for i in range(depth)]


def _count_files(folder: Path) -> int:
    return sum(len(files) for _, _, files in os.walk(folder))


def _disk_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def run_scale(config: ScaleConfig, log=print) -> dict:
    from noul_lsp.session.workspace import Workspace

    config.out.mkdir(parents=True, exist_ok=True)
    pool = config.work / "pool"
    pool.mkdir(parents=True, exist_ok=True)
    plan = plan_trees(config.mirrors)
    chunks_per_file = FIRST_CHUNKS_PER_FILE
    used = 0
    results = []
    queries_file = config.out / "queries.json"
    queries_file.write_text(json.dumps(_queries(config.labels, config.queries)))
    for size in config.sizes:
        if config.probe_only:
            results.append(_reprobe(config, size, queries_file, log))
            (config.out / "scale.json").write_text(json.dumps(results, indent=1))
            continue
        root = config.work / f"root-{size}"
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        files = 0
        trees = 0
        for tree in plan:
            if files * chunks_per_file >= MARGIN * size:
                break
            source = pool / tree.folder
            if not source.exists():
                try:
                    write_tree(tree.git_dir, tree.revision, source)
                except RuntimeError as error:
                    log(f"skipped {tree.folder}: {error}")
                    continue
            subprocess.run(["cp", "-al", str(source), str(root / tree.folder)], check=True)
            files += _count_files(source)
            trees += 1
        used = max(used, trees)
        cache = config.work / f"cache-{size}"
        shutil.rmtree(cache, ignore_errors=True)
        settings = replace(config.settings, cache_dir=str(cache))
        log(f"size {size}: {trees} trees, {files} files; indexing")
        workspace = Workspace(root, settings)
        started = time.perf_counter()
        update = workspace.indexer.update()
        scanned = time.perf_counter() - started
        static = workspace.embed_static()
        dense_covered = time.perf_counter() - started
        checkpoint_started = time.perf_counter()
        problem = workspace.checkpoint()
        checkpoint = time.perf_counter() - checkpoint_started
        chunks = workspace.corpus.chunk_count
        distinct = int(workspace.corpus.arrays().tables["static"].present.sum())
        workspace.close()
        chunks_per_file = max(chunks / max(update.files_seen, 1), 1.0)
        index_folder = next((cache / "indexes").iterdir())
        row = {"target": size, "trees": trees, "files": update.files_seen, "chunks": chunks, "distinct_texts": distinct,
               "scan_chunk_s": round(scanned, 1), "static_s": round(static.seconds if static else 0.0, 1),
               "cold_index_s": round(dense_covered, 1), "checkpoint_s": round(checkpoint, 1),
               "checkpoint_problem": problem, "indexer_peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024,
               "index_mb": round(_disk_bytes(index_folder) / 1e6, 1),
               "snapshot_mb": round(_disk_bytes(index_folder / "corpus-snapshot") / 1e6, 1)}
        log(f"size {size}: {chunks} chunks indexed in {row['cold_index_s']} s; probing a fresh process")
        (cache / "cold.json").write_text(json.dumps(row))
        row.update(_probe_process(root, cache, queries_file, size))
        results.append(row)
        (config.out / "scale.json").write_text(json.dumps(results, indent=1))
        log(json.dumps(row))
    summary = {"sizes": results, "trees_used": used}
    (config.out / "scale.md").write_text(_markdown(results))
    _plot(results, config.out / "scale.png", log)
    return summary


def _probe_process(root: Path, cache: Path, queries_file: Path, size: int) -> dict:
    """PROBES_PER_SIZE fresh processes in a row; the figures are the last one's, the first one's totals
    are kept beside them (`first_probe`)."""
    runs = []
    for _ in range(PROBES_PER_SIZE):
        probe = subprocess.run([sys.executable, "-m", "noul_lsp.bench.scale", "probe", str(root), str(cache),
                                str(queries_file)], capture_output=True, text=True, env=os.environ.copy())
        if probe.returncode != 0:
            raise RuntimeError(f"the probe at {size} failed: {probe.stderr[-2000:]}")
        runs.append(json.loads(probe.stdout.strip().splitlines()[-1]))
    first = runs[0]
    return runs[-1] | {"first_probe": {"first_answer_s": first["first_answer_s"],
                                       **{shape: first[shape]["total"] for shape in ("descriptions", "issues")
                                          if shape in first}}}


def _reprobe(config: ScaleConfig, size: int, queries_file: Path, log) -> dict:
    """An earlier run's workspace of this size: its cold figures as recorded, a checkpoint with this code
    (a snapshot of this format, the approximate index where this code builds one), then a fresh probe."""
    from noul_lsp.session.workspace import Workspace

    root, cache = config.work / f"root-{size}", config.work / f"cache-{size}"
    row = json.loads((cache / "cold.json").read_text())
    workspace = Workspace(root, replace(config.settings, cache_dir=str(cache)))
    started = time.perf_counter()
    workspace.corpus.sync()
    workspace.corpus.compact(save=False)
    save_snapshot(workspace.corpus)  # again, in this code's format, even when nothing changed
    row["checkpoint_problem"] = None
    row["recheckpoint_s"] = round(time.perf_counter() - started, 1)
    workspace.close()
    index_folder = next((cache / "indexes").iterdir())
    row["index_mb"] = round(_disk_bytes(index_folder) / 1e6, 1)
    row["snapshot_mb"] = round(_disk_bytes(index_folder / "corpus-snapshot") / 1e6, 1)
    log(f"size {size}: checkpointed again in {row['recheckpoint_s']} s; probing a fresh process")
    row.update(_probe_process(root, cache, queries_file, size))
    log(json.dumps(row))
    return row


def _queries(labels: tuple[Path, ...], per_shape: int) -> dict[str, list[str]]:
    """Description queries and issue texts from label files (only their text: nothing is scored here)."""
    found: dict[str, list[str]] = {"descriptions": [], "issues": []}
    for path in labels:
        for line in path.read_text().splitlines():
            if line.strip():
                query = json.loads(line)["query"]
                found["issues" if len(query) > 300 else "descriptions"].append(query)
    return {shape: texts[:per_shape] for shape, texts in found.items() if texts}


def _rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def probe(root: Path, cache: Path, queries_file: Path) -> dict:
    """What a server opening this workspace sees (run in a fresh process)."""
    from noul_lsp.retrieval import dense
    from noul_lsp.session.workspace import Workspace

    queries = json.loads(queries_file.read_text())
    baseline = _rss_mb()
    started = time.perf_counter()
    workspace = Workspace(root, replace(Settings(), cache_dir=str(cache)))
    model = workspace.static_embedder()
    with_model = _rss_mb()
    first_query = next(iter(queries.values()))[0]
    first = workspace.find(first_query)
    first_answer = time.perf_counter() - started
    result = {"first_answer_s": round(first_answer, 3), "first_stages_ms": _rounded(first.timings),
              "opened_from_snapshot": workspace.corpus.opened_from_snapshot is not None}
    for shape, texts in queries.items():
        timings = [workspace.find(text).timings for text in texts]
        stages = sorted({k for t in timings for k in t})
        result[shape] = {stage: {"p50": round(float(np.percentile([t.get(stage, 0.0) for t in timings], 50)), 2),
                                 "p95": round(float(np.percentile([t.get(stage, 0.0) for t in timings], 95)), 2)}
                         for stage in stages}
    rss = _rss_mb()
    result.update({"rss_mb": round(rss), "rss_before_open_mb": round(baseline),
                   "static_model_mb": round(with_model - baseline), "rss_without_model_mb": round(rss - (with_model - baseline))})
    arrays = workspace.loaded()
    table = arrays.tables["static"]
    if table.ann is not None:
        recalls = [_recall(table, model.embed_query(text)) for texts in queries.values() for text in texts]
        result["ann_recall_at_50"] = round(float(np.mean(recalls)), 4)
        result["ann_recall_min"] = round(float(np.min(recalls)), 4)
    else:
        result["ann_recall_at_50"] = None  # exact search below dense.APPROXIMATE_FROM vectors
    result["approximate_from"] = dense.APPROXIMATE_FROM
    result.update(_save_cost(workspace, queries))
    workspace.close()
    return result


def _recall(table, query: np.ndarray) -> float:
    """Of the 50 nearest distinct vectors (exact), the share the leg's candidates hold after rescoring."""
    present = np.flatnonzero(table.present)
    scores = np.concatenate([table.matrix[present[i:i + 65536]].astype(np.float32) @ query
                             for i in range(0, len(present), 65536)])
    exact = set(present[np.argsort(-scores)[:50]].tolist())
    candidates = np.unique(table.ann.search(query, CANDIDATES))
    rescored = table.matrix[candidates].astype(np.float32) @ query
    found = set(candidates[np.argsort(-rescored)[:50]].tolist())
    return len(exact & found) / 50


def _save_cost(workspace, queries: dict[str, list[str]]) -> dict:
    """Edit one source file (a function appended), update the index as the server does on a save, and
    time the next find against warm finds of the same query; the file is restored after."""
    texts = next(iter(queries.values()))[:10]
    arrays = workspace.loaded()
    path = next(p for p in arrays.files if p.endswith(".py"))
    target = workspace.root / path
    original = target.read_bytes()
    warm = [workspace.find(t).timings["total"] for t in texts]
    try:
        with open(target, "ab") as handle:
            handle.write(b"\n\ndef noul_scale_probe_edit():\n    return 'an edit the scale bench made'\n")
        started = time.perf_counter()
        with workspace.store.indexing_lock():
            workspace.indexer.update(paths=[path])
            workspace.embed_static()
        update = time.perf_counter() - started
        after = workspace.find(texts[0]).timings
        later = [workspace.find(t).timings["total"] for t in texts[1:]]
    finally:
        target.write_bytes(original)
        with workspace.store.indexing_lock():
            workspace.indexer.update(paths=[path])
            workspace.embed_static()
    return {"save_update_ms": round(update * 1000, 1), "find_after_save_ms": round(after["total"], 1),
            "find_after_save_load_ms": round(after.get("load", 0.0), 1),
            "warm_find_ms_p50": round(float(np.median(warm)), 1),
            "extra_after_save_ms": round(after["total"] - float(np.median(warm)), 1),
            "finds_after_save_ms_p50": round(float(np.median(later)), 1) if later else None}


def _rounded(timings: dict[str, float]) -> dict[str, float]:
    return {k: round(v, 1) for k, v in timings.items()}


def _markdown(results: list[dict]) -> str:
    head = ("| chunks | distinct texts | cold index s (scan+chunk, static) | checkpoint s | index MB (snapshot) | "
            "first answer s | warm p50/p95 ms (descriptions) | warm p50/p95 ms (issues) | RSS MB (no model) | "
            "ANN recall@50 | save: update ms, next find extra ms |\n|" + "---|" * 11 + "\n")
    lines = []
    for r in results:
        d, i = r.get("descriptions", {}).get("total", {}), r.get("issues", {}).get("total", {})
        recall = "exact" if r.get("ann_recall_at_50") is None else f"{r['ann_recall_at_50']:.3f}"
        lines.append(f"| {r['chunks']:,} | {r['distinct_texts']:,} | {r['cold_index_s']} ({r['scan_chunk_s']}, "
                     f"{r['static_s']}) | {r['checkpoint_s']} | {r['index_mb']} ({r['snapshot_mb']}) | "
                     f"{r['first_answer_s']} | {d.get('p50')}/{d.get('p95')} | {i.get('p50')}/{i.get('p95')} | "
                     f"{r['rss_mb']} ({r['rss_without_model_mb']}) | {recall} | {r['save_update_ms']}, "
                     f"{r['extra_after_save_ms']} |")
    return head + "\n".join(lines) + "\n"


def _plot(results: list[dict], path: Path, log) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("no plot: matplotlib is not installed (the `plots` extra)")
        return
    chunks = [r["chunks"] for r in results]
    figure, axes = plt.subplots(1, 3, figsize=(15, 4.2))
    for shape, style in (("descriptions", "o-"), ("issues", "s--")):
        for stat in ("p50", "p95"):
            values = [r.get(shape, {}).get("total", {}).get(stat) for r in results]
            if all(v is not None for v in values):
                axes[0].plot(chunks, values, style, label=f"{shape} {stat}")
    axes[0].set(xscale="log", xlabel="chunks", ylabel="warm find ms", title="find latency")
    axes[0].legend()
    axes[1].plot(chunks, [r["rss_without_model_mb"] for r in results], "o-", label="server RSS without model")
    axes[1].plot(chunks, [r["index_mb"] for r in results], "s--", label="index on disk")
    axes[1].set(xscale="log", yscale="log", xlabel="chunks", ylabel="MB", title="memory and disk")
    axes[1].legend()
    axes[2].plot(chunks, [r["cold_index_s"] for r in results], "o-", label="cold index (every chunk dense)")
    axes[2].plot(chunks, [r["first_answer_s"] for r in results], "s--", label="open to first answer")
    axes[2].set(xscale="log", yscale="log", xlabel="chunks", ylabel="s", title="cold index, cold open")
    axes[2].legend()
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    plt.close(figure)


if __name__ == "__main__" and len(sys.argv) == 5 and sys.argv[1] == "probe":
    print(json.dumps(probe(Path(sys.argv[2]), Path(sys.argv[3]), Path(sys.argv[4]))))
