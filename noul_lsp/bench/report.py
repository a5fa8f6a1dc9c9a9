"""summary.json, summary.md and plots from a finished run."""

from __future__ import annotations

import json
import os
import platform
import subprocess
from collections import defaultdict
from pathlib import Path

from noul_lsp.bench import metrics as m
from noul_lsp.retrieval.answer import answer_size

SLICES = ("all", "multi", "gap", "lite274", "names-file", "no-file-named")
STAGES = ("load", "bm25", "embed_query", "dense", "rerank", "fuse", "aggregate", "total")


def _mean(values: list[float]) -> float | None:
    return round(sum(values) / len(values), 4) if values else None


def quality(records: list) -> dict:
    """Mean retrieval metrics over answerable records (+ count)."""
    answerable = [r for r in records if r.kind == "answerable"]
    rows: dict[str, list[float]] = defaultdict(list)
    for r in answerable:
        ranked = [path for path, _ in r.ranked]
        gold = r.gold_files
        rows["acc@1"].append(m.accuracy_at(ranked, gold, 1))
        rows["acc@3"].append(m.accuracy_at(ranked, gold, 3))
        rows["acc@5"].append(m.accuracy_at(ranked, gold, 5))
        rows["p@1"].append(m.precision_at_1(ranked, gold))
        rows["r@3"].append(m.recall_any_at(ranked, gold, 3))
        rows["complete@5"].append(m.complete_at(ranked, gold, 5))
        rows["mrr"].append(m.reciprocal_rank(ranked, gold))
        rows["f1"].append(m.f_beta(ranked, gold, 1.0))
        rows["f2"].append(m.f_beta(ranked, gold, 2.0))
        if r.ranges and r.gold_lines:  # labels without lines (bare names) have no line figure, not a 0
            rows["line_hit@5"].append(m.line_hit(r.ranges, r.gold_lines))
            opened = m.located(ranked, r.ranges, r.gold_lines)
            if opened is not None:
                rows["located@5"].append(opened)
        if r.hits:  # the agent's answer: `noul mcp`'s set of files, scored as the search-subagent metric does
            answer = answer_files(r)
            rows["answer_f1"].append(m.f_beta(answer, gold, 1.0))
            rows["answer_f2"].append(m.f_beta(answer, gold, 2.0))
            rows["answer_files"].append(len(answer))
    summary = {name: _mean(values) for name, values in rows.items()}
    tokens = [r.answer["tokens"] for r in answerable if getattr(r, "answer", None) and "tokens" in r.answer]
    summary["answer_tokens_p50"] = m.percentile(tokens, 50)
    summary["n"] = len(answerable)
    return summary


def answer_files(record) -> list[str]:
    """The files of the agent's answer for a record: as recorded, or (records of older runs) chosen again
    from its ranked hits by the same rule (retrieval/answer.py's `answer_size`)."""
    recorded = getattr(record, "answer", None) or {}
    if "files" in recorded:
        return list(recorded["files"])
    hits = record.hits
    scores = [h["score"] for h in hits]
    probabilities = [h.get("probability") for h in hits]
    signals = getattr(record, "signals", None) or {}
    if any(p is None for p in probabilities) and signals.get("ranking", "").startswith("fitted") and \
            all(0 < s <= 1 for s in scores):  # the fitted ranker's shares, as labels.score_is_share
        probabilities = scores
    return [h["path"] for h in hits[:answer_size(probabilities, scores)]]


def not_here(records: list) -> dict:
    """AUROC / ECE / Brier of hereProbability, and the AUROC of the raw top score as a reference."""
    labeled = [r for r in records if r.kind in ("answerable", "not_here")]
    labels = [int(r.kind == "answerable") for r in labeled]
    top_scores = [r.ranked[0][1] if r.ranked else 0.0 for r in labeled]
    probabilities = [r.here_probability for r in labeled]
    result = {"answerable": sum(labels), "not_here": len(labels) - sum(labels),
              "raw_top_score_auroc": m.auroc(top_scores, labels)}
    if labeled and all(p is not None for p in probabilities):
        result.update(auroc=m.auroc(probabilities, labels), ece=m.expected_calibration_error(probabilities, labels),
                      brier=m.brier(probabilities, labels))
    else:
        result.update(auroc=None, ece=None, brier=None, note="no hereProbability: the pipeline is not calibrated")
    return result


def shortlist_recall(records: list) -> dict:
    """Per short-list variant: the mean share of a query's gold files that reach the list (the ceiling of
    any reranker), over all answerable queries and over those with several gold files."""
    answerable = [r for r in records if r.kind == "answerable" and r.shortlists]
    result: dict = {}
    for name, subset in (("all", answerable), ("multi", [r for r in answerable if len(r.gold_files) > 1])):
        if subset:
            result[name] = {variant: _mean([len(set(r.shortlists[variant]) & set(r.gold_files)) / len(r.gold_files)
                                            for r in subset]) for variant in subset[0].shortlists}
            result[name]["n"] = len(subset)
    return result


def latency(records: list) -> dict:
    per_stage: dict[str, list[float]] = defaultdict(list)
    for r in records:
        for stage, ms in r.timings.items():
            per_stage[stage].append(ms)
    return {stage: {"p50": round(m.percentile(v, 50), 2), "p95": round(m.percentile(v, 95), 2)}
            for stage, v in per_stage.items() if v}


def speed(steps: list, wall_seconds: float, peak_rss: float) -> dict:
    cold = [s for s in steps if s.cold]
    warm = [s for s in steps if not s.cold]
    embedded = sum(s.chunks_embedded for s in steps)
    embed_seconds = sum(s.embed_seconds for s in steps)
    return {
        "wall_seconds": round(wall_seconds, 1),
        "peak_rss_mb": round(peak_rss, 1),
        "cold_index": {s.repo: {"seconds": round(s.update_seconds + s.embed_seconds, 1), "chunks": s.chunks_total,
                                "embedded": s.chunks_embedded} for s in cold},
        "incremental_steps": len(warm),
        "incremental_step_seconds_p50": m.percentile([s.update_seconds + s.embed_seconds for s in warm], 50),
        "incremental_step_reembedded_p50": m.percentile([s.chunks_embedded for s in warm], 50),
        "incremental_step_reembedded_total": sum(s.chunks_embedded for s in warm),
        "embedding_chunks_per_second": round(embedded / embed_seconds, 1) if embed_seconds else None,
        "chunks_embedded_total": embedded,
    }


def _git_commit() -> str:
    try:
        here = Path(__file__).resolve().parents[2]
        done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=here, capture_output=True, text=True)
        return done.stdout.strip() or "unknown"
    except OSError:
        return "unknown"


def build_summary(runner, *, wall_seconds: float, peak_rss: float) -> dict:
    own = [r for r in runner.queries if r.searched == "own"]
    label_files = sorted({r.label_file for r in own})
    by_pipeline: dict = {}
    for pipeline in runner.pipelines:
        mine = [r for r in own if r.pipeline == pipeline]
        files: dict = {}
        for label_file in label_files:
            subset = [r for r in mine if r.label_file == label_file]
            files[label_file] = {s: quality([r for r in subset if s == "all" or s in r.tags]) for s in SLICES}
            files[label_file] = {s: q for s, q in files[label_file].items() if q["n"]}
        negatives = [r for r in runner.queries if r.pipeline == pipeline and r.searched in ("own", "cross-repo")]
        by_pipeline[pipeline] = {"quality": files, "not_here": not_here(negatives), "latency_ms": latency(mine)}
        if any(r.shortlists for r in mine):
            by_pipeline[pipeline]["shortlist_gold_recall"] = {
                label_file: shortlist_recall([r for r in mine if r.label_file == label_file]) for label_file in label_files}
    scale = {}
    multi = [r for r in runner.queries if r.searched == "multi-root"]
    if multi:
        for pipeline in runner.pipelines:
            single = [r for r in own if r.pipeline == pipeline and r.source == "describe"]
            across = [r for r in multi if r.pipeline == pipeline]
            p50_single = m.percentile([r.timings["total"] for r in single], 50)
            p50_multi = m.percentile([r.timings["total"] for r in across], 50)
            scale[pipeline] = {"p50_single_ms": p50_single, "p50_multi_ms": p50_multi,
                               "ratio": round(p50_multi / p50_single, 2) if p50_single else None,
                               "acc@1_single": quality(single).get("acc@1"), "acc@1_multi": quality(across).get("acc@1")}
        scale["chunks"] = runner.scale
    config = runner.config
    return {
        "commit": _git_commit(),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "labels": [str(p) for p in config.labels],
        "pipelines": list(runner.pipelines),
        "embed_scope": config.embed_scope,
        "token_budget": runner.settings.index.token_budget,
        "embedder": runner.settings.models.embedder or "default",
        "reranker": runner.settings.models.reranker or None,
        "results": by_pipeline,
        "scale": scale,
        "speed": speed(runner.steps, wall_seconds, peak_rss),
        "skipped": runner.skipped,
    }


def _fmt(value) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.3f}" if value < 10 else f"{value:.1f}"
    return str(value)


def markdown(summary: dict) -> str:
    lines = [f"# noul bench — commit {summary['commit']}", "",
             f"Machine: {summary['machine']}. Embedder `{summary['embedder']}`, reranker "
             f"`{summary.get('reranker') or 'none'}`, token budget "
             f"{summary['token_budget']}, embed scope `{summary['embed_scope']}`.", ""]
    columns = ("acc@1", "acc@3", "acc@5", "p@1", "r@3", "complete@5", "mrr", "f1", "f2", "line_hit@5", "located@5",
               "answer_f1", "answer_f2", "answer_files", "answer_tokens_p50", "n")
    if summary.get("skipped"):
        lines += [f"**{len(summary['skipped'])} queries skipped** (their commit's tree could not be written; "
                  "skipped.jsonl says why): " + ", ".join(s["id"] for s in summary["skipped"]), ""]
    lines += ["## Quality (answerable queries)", "",
              "acc@k: LocAgent's and SweRank's, 1 when min(k, |gold|) gold files are in the first k (a query with "
              "two gold files counts at acc@3 only with both in the first three, so acc@3 may be below acc@1). "
              "f1, f2: of the ranked list's files. answer_*: of the agent's answer (`noul mcp`'s find at the "
              "default token budget): F1 and F2 of its file set against the gold files, its mean number of files, "
              "the median of its tokens (approximate: characters / 4). located@5: of the gold files among the first 5 "
              "(with labeled lines), the share whose hit opens on the labeled lines.", ""]
    label_files = sorted({f for p in summary["results"].values() for f in p["quality"]})
    for label_file in label_files:
        lines += [f"### {label_file}", "", "| pipeline | slice | " + " | ".join(columns) + " |",
                  "|---|---|" + "---|" * len(columns)]
        for pipeline, result in summary["results"].items():
            for slice_name, q in result["quality"].get(label_file, {}).items():
                lines.append(f"| {pipeline} | {slice_name} | " + " | ".join(_fmt(q.get(c)) for c in columns) + " |")
        lines.append("")
    lines += ["## Not here", "", "| pipeline | answerable | not_here | AUROC P(here) | ECE | Brier | AUROC raw top score |",
              "|---|---|---|---|---|---|---|"]
    for pipeline, result in summary["results"].items():
        n = result["not_here"]
        lines.append(f"| {pipeline} | {n['answerable']} | {n['not_here']} | {_fmt(n['auroc'])} | {_fmt(n['ece'])} | "
                     f"{_fmt(n['brier'])} | {_fmt(n['raw_top_score_auroc'])} |")
    lines += ["", "## Latency per query (ms, p50 / p95)", "", "| pipeline | " + " | ".join(STAGES) + " |",
              "|---|" + "---|" * len(STAGES)]
    for pipeline, result in summary["results"].items():
        cells = []
        for stage in STAGES:
            value = result["latency_ms"].get(stage)
            cells.append(f"{value['p50']:.1f} / {value['p95']:.1f}" if value else "–")
        lines.append(f"| {pipeline} | " + " | ".join(cells) + " |")
    recall_rows = [(pipeline, label_file, name, row) for pipeline, result in summary["results"].items()
                   for label_file, by_slice in result.get("shortlist_gold_recall", {}).items()
                   for name, row in by_slice.items()]
    if recall_rows:
        variants = [k for k in recall_rows[0][3] if k != "n"]
        lines += ["", "## Short list for a reranker: share of gold files that reach it", "",
                  "| pipeline | label file | queries | n | " + " | ".join(variants) + " |",
                  "|---|---|---|---|" + "---|" * len(variants)]
        for pipeline, label_file, name, row in recall_rows:
            lines.append(f"| {pipeline} | {label_file} | {name} | {row['n']} | "
                         + " | ".join(_fmt(row.get(v)) for v in variants) + " |")
    if summary["scale"]:
        lines += ["", "## Scale: one repository vs a multi-root workspace of all of them", "",
                  f"Chunks: {summary['scale']['chunks']}", "",
                  "| pipeline | p50 single (ms) | p50 multi-root (ms) | ratio | acc@1 single | acc@1 multi-root |",
                  "|---|---|---|---|---|---|"]
        for pipeline, row in summary["scale"].items():
            if pipeline != "chunks":
                lines.append(f"| {pipeline} | {_fmt(row['p50_single_ms'])} | {_fmt(row['p50_multi_ms'])} | "
                             f"{_fmt(row['ratio'])} | {_fmt(row['acc@1_single'])} | {_fmt(row['acc@1_multi'])} |")
    speed_figures = summary["speed"]
    lines += ["", "## Indexing speed", "", "| repository | cold index (s) | chunks | embedded |", "|---|---|---|---|"]
    for repo, row in speed_figures["cold_index"].items():
        lines.append(f"| {repo} | {row['seconds']} | {row['chunks']} | {row['embedded']} |")
    lines += ["", f"- incremental steps: {speed_figures['incremental_steps']}, median "
              f"{_fmt(speed_figures['incremental_step_seconds_p50'])} s and "
              f"{_fmt(speed_figures['incremental_step_reembedded_p50'])} chunks re-embedded per step "
              f"({speed_figures['incremental_step_reembedded_total']} in all)",
              f"- embedding: {_fmt(speed_figures['embedding_chunks_per_second'])} chunks/s "
              f"({speed_figures['chunks_embedded_total']} chunks)",
              f"- whole run: {speed_figures['wall_seconds']} s, peak RSS {speed_figures['peak_rss_mb']} MB", ""]
    return "\n".join(lines)


def plots(summary: dict, records: list, out: Path) -> list[str]:
    """Quality vs latency per pipeline, and latency vs corpus size; needs the `plots` extra."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return []
    made = []
    figure, axes = plt.subplots(figsize=(6, 4))
    for pipeline, result in summary["results"].items():
        accs = [q["all"]["acc@5"] for q in result["quality"].values() if "all" in q and q["all"].get("acc@5") is not None]
        total = result["latency_ms"].get("total")
        if accs and total:
            axes.scatter(total["p50"], sum(accs) / len(accs), s=60)
            axes.annotate(pipeline, (total["p50"], sum(accs) / len(accs)), textcoords="offset points", xytext=(6, 4))
    axes.set_xscale("log")
    axes.set_xlabel("p50 latency per query (ms, log)")
    axes.set_ylabel("Acc@5, mean over label files")
    axes.set_title("Quality vs latency")
    figure.tight_layout()
    figure.savefig(out / "quality_vs_latency.png", dpi=110)
    plt.close(figure)
    made.append("quality_vs_latency.png")

    figure, axes = plt.subplots(figsize=(6, 4))
    for pipeline in summary["results"]:
        points = [(r.chunks_in_index, r.timings.get("total", 0.0)) for r in records
                  if r.pipeline == pipeline and r.chunks_in_index]
        if points:
            xs, ys = zip(*points, strict=True)
            axes.scatter(xs, ys, s=10, label=pipeline, alpha=0.6)
    axes.set_xscale("log")
    axes.set_yscale("log")
    axes.set_xlabel("chunks in the searched index (log)")
    axes.set_ylabel("latency per query (ms, log)")
    axes.set_title("Latency vs corpus size")
    axes.legend()
    figure.tight_layout()
    figure.savefig(out / "latency_vs_size.png", dpi=110)
    plt.close(figure)
    made.append("latency_vs_size.png")
    return made


def write_report(runner, *, wall_seconds: float, peak_rss: float) -> dict:
    out = runner.config.out
    summary = build_summary(runner, wall_seconds=wall_seconds, peak_rss=peak_rss)
    summary["plots"] = plots(summary, runner.queries, out)
    (out / "summary.json").write_text(json.dumps(summary, indent=2))
    (out / "summary.md").write_text(markdown(summary))
    return summary
