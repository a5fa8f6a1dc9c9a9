"""Runs labeled queries through every pipeline and records what each returned, and how fast.

Queries of one repository run in commit-date order on one tree folder that is rewritten commit by
commit, so the index is updated incrementally from one commit to the next: every step records how many
chunks it re-embedded (the real-world test of incremental indexing).
"""

from __future__ import annotations

import json
import resource
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path

from noul_lsp.bench.labels import LabeledQuery, load_labels
from noul_lsp.bench.ripgrep import ripgrep_available, ripgrep_rank
from noul_lsp.bench.trees import commit_date, find_mirror, write_tree
from noul_lsp.config import Settings
from noul_lsp.retrieval.answer import DEFAULT_TOKEN_BUDGET, agent_answer, lines_from_disk
from noul_lsp.retrieval.engine import find_across
from noul_lsp.retrieval.rerank import shortlist
from noul_lsp.retrieval.result import FindResult
from noul_lsp.session.workspace import Workspace

#: "hybrid" is the default find (BM25 and the transformer, with the static leg while the transformer fills
#: in, which in the bench it never is: it embeds first); "hybrid-all" keeps the static leg in beside the
#: transformer; "instant" is what a find gives before the transformer has embedded anything (BM25 and the
#: static leg)
PIPELINE_LEGS = {"bm25": ("bm25",), "dense": ("dense",), "static": ("static",),
                 "hybrid": ("bm25", "dense", "static"), "hybrid-all": ("bm25", "dense", "static"),
                 "instant": ("bm25", "static"), "rerank": ("bm25", "dense", "static")}
#: the pipelines whose own-repository records carry the ranking stage's candidates (for `noul rank-fit`)
RANKED_PIPELINES = ("hybrid", "hybrid-all", "instant")
KNOWN_PIPELINES = (*PIPELINE_LEGS, "ripgrep")
#: the short lists measured on every hybrid query: the plain top of the fusion, and at most N chunks per file
SHORTLIST_VARIANTS = {"plain": 0, "per_file_1": 1, "per_file_2": 2, "per_file_3": 3}


@dataclass
class BenchConfig:
    labels: list[Path]
    mirrors: Path
    work: Path
    out: Path
    pipelines: tuple[str, ...] = ("bm25", "dense", "hybrid", "ripgrep")
    cross_repo_negatives: bool = False
    scale: bool = False
    #: "all" embeds every chunk; "source" leaves files matching `embed_last` (tests, docs) to BM25 alone
    embed_scope: str = "all"
    limit: int = 10
    settings: Settings = field(default_factory=Settings)
    #: keep the records already in OUT/per_query.jsonl and ask only what they lack
    resume: bool = False


@dataclass
class QueryRecord:
    """One query through one pipeline: everything the summary and later analysis need."""

    id: str
    label_file: str
    source: str
    repo: str
    commit: str
    kind: str
    tags: list[str]
    pipeline: str
    gold_files: list[str]
    gold_lines: dict
    ranked: list[list]  # [[path, score], ...]
    ranges: dict  # path -> [[start, end], ...]
    here_probability: float | None
    timings: dict
    chunks_in_index: int
    searched: str = "own"  # "own", "cross-repo" (a negative asked against another repository), "multi-root"
    searched_repo: str = ""
    pair: str = ""  # embedder+reranker the engine ran with (calibration files are per pair)
    features: dict = field(default_factory=dict)
    hits: list = field(default_factory=list)  # [{path, score, bm25Rank, denseRank, rerankScore, probability}]
    #: hybrid only: the files each short-list variant would hand a reranker (SHORTLIST_VARIANTS)
    shortlists: dict = field(default_factory=dict)
    #: hybrid on its own repository only: the ranking stage's candidate files and feature rows (rank-fit)
    rank_candidates: dict = field(default_factory=dict)
    #: how the answer was made (FindResult.signals: the ranking, the reranker)
    signals: dict = field(default_factory=dict)
    #: the agent's answer (`noul mcp`'s find, default token budget): {"files": [path, ...], "tokens": n}
    answer: dict = field(default_factory=dict)


@dataclass
class StepRecord:
    repo: str
    commit: str
    cold: bool
    update_seconds: float
    embed_seconds: float
    files_indexed: int
    chunks_added: int
    chunks_embedded: int
    chunks_total: int
    #: the static pass (every chunk's static vector), before the transformer's
    static_seconds: float = 0.0


def _log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


#: a repository's embedding says how far it is at most this often (saleor's 34,556 chunks took ten silent minutes)
PROGRESS_SECONDS = 60.0


def embedding_progress(repo: str, log: Callable[[str], None], every: float = PROGRESS_SECONDS,
                       clock: Callable[[], float] = time.perf_counter) -> Callable[[int, int], None]:
    """An `embed_pending` progress callback that logs "<repo>: 12000/34556 chunks embedded (205 s)" at most
    once every `every` seconds, never for the last batch (the step's own line says it)."""
    started = last = clock()

    def report(done: int, total: int) -> None:
        nonlocal last
        now = clock()
        if done < total and now - last >= every:
            last = now
            log(f"{repo}: {done}/{total} chunks embedded ({now - started:.0f} s)")
    return report


def _record(query: LabeledQuery, pipeline: str, result: FindResult | None, ripgrep: tuple | None,
            chunks: int, searched: str = "own", searched_repo: str = "", pair: str = "") -> QueryRecord:
    if result is not None:
        def name(hit) -> str:  # multi-root paths carry their root, as the gold files of those records do
            return f"{hit.root}::{hit.path}" if searched == "multi-root" else hit.path

        ranked = [[name(h), round(h.score, 6)] for h in result.hits]
        ranges = {name(h): [list(r) for r in h.ranges] for h in result.hits[:5]}
        here, timings = result.here_probability, {k: round(v, 3) for k, v in result.timings.items()}
    else:
        hits, ms = ripgrep
        ranked = [[path, score] for path, score in hits]
        ranges, here, timings = {}, None, {"total": round(ms, 3)}
    hits = [{"path": path, "score": score} for path, score in ranked]
    if result is not None:
        for row, hit in zip(hits, result.hits, strict=True):
            row.update(rank=hit.rank, bm25Rank=hit.bm25_rank, denseRank=hit.dense_rank, staticRank=hit.static_rank, rerankScore=hit.rerank_score,
                       rankScore=hit.rank_score, probability=hit.probability)
    answer = {}
    if result is not None:
        made = agent_answer(result, DEFAULT_TOKEN_BUDGET, source=lines_from_disk)
        answer = {"files": [name(f) for f in made.files], "tokens": made.tokens}
    return QueryRecord(query.id, query.label_file, query.source, query.repo, query.commit, query.kind, list(query.tags),
                       pipeline, list(query.gold_files), query.gold_lines, ranked, ranges, here, timings, chunks, searched,
                       searched_repo or query.repo, pair, result.features if result is not None else {}, hits,
                       signals=dict(result.signals) if result is not None else {}, answer=answer)


class BenchRunner:
    def __init__(self, config: BenchConfig, *, log: Callable[[str], None] = _log) -> None:
        unknown = set(config.pipelines) - set(KNOWN_PIPELINES)
        if unknown:
            raise ValueError(f"unknown pipelines {sorted(unknown)}; known: {', '.join(KNOWN_PIPELINES)}")
        self.config = config
        self.log = log
        pipelines = list(config.pipelines)
        if "ripgrep" in pipelines and not ripgrep_available():
            log("ripgrep (rg) is not installed: the ripgrep baseline is skipped (apt-get install ripgrep)")
            pipelines.remove("ripgrep")
        self.pipelines = tuple(pipelines)
        settings = config.settings
        if "rerank" in self.pipelines and not settings.models.reranker:
            raise ValueError("the rerank pipeline needs a cross-encoder: pass --reranker NAME (a registered name, "
                             "a pulled hub id or a local ONNX folder)")
        self.settings = replace(settings, cache_dir=str(config.work / "cache"))
        self.queries: list[QueryRecord] = []
        self.steps: list[StepRecord] = []
        #: queries that could not be asked, with why (a commit the mirror lacks, or a gold file it lacks)
        self.skipped: list[dict] = []
        self.scale: dict = {}
        self.workspaces: dict[str, Workspace] = {}
        self._done: set[tuple[str, str, str, str]] = set()
        self._open_records()

    # -- records are written as they are made, so a run that dies keeps every answer it had -------------

    def _open_records(self) -> None:
        out = self.config.out
        out.mkdir(parents=True, exist_ok=True)
        records, steps = out / "per_query.jsonl", out / "steps.jsonl"
        if self.config.resume and records.is_file():
            for line in records.read_text().splitlines():
                try:
                    record = QueryRecord(**json.loads(line))
                except (ValueError, TypeError):
                    continue  # the last line of a run killed mid-write
                self.queries.append(record)
                self._done.add(_record_key(record.id, record.pipeline, record.searched, record.searched_repo))
            self.log(f"resuming: {len(self.queries)} records kept from {records}")
            # rewrite the kept records whole: a torn last line must not stay in the file
            records.write_text("".join(json.dumps(r.__dict__) + "\n" for r in self.queries))
            if steps.is_file():
                for line in steps.read_text().splitlines():
                    try:
                        self.steps.append(StepRecord(**json.loads(line)))
                    except (ValueError, TypeError):
                        continue
            steps.write_text("".join(json.dumps(step.__dict__) + "\n" for step in self.steps))
        else:
            records.write_text("")
            steps.write_text("")
        (out / "skipped.jsonl").write_text("")

    def _append(self, name: str, value: dict) -> None:
        with open(self.config.out / name, "a") as handle:
            handle.write(json.dumps(value) + "\n")

    def _keep(self, record: QueryRecord) -> None:
        self.queries.append(record)
        self._append("per_query.jsonl", record.__dict__)

    def tree_folder(self, repo: str) -> Path:
        return self.config.work / "trees" / repo.replace("/", "+")

    def run(self) -> None:
        labels = load_labels(self.config.labels)
        by_repo: dict[str, list[LabeledQuery]] = {}
        for query in labels:
            by_repo.setdefault(query.repo, []).append(query)
        for repo in sorted(by_repo):
            git_dir = find_mirror(self.config.mirrors, repo)
            dates = {q.commit: q.commit_date or commit_date(git_dir, q.commit) for q in by_repo[repo]}
            self._run_repository(repo, sorted(by_repo[repo], key=lambda q: (dates[q.commit], q.commit, q.id)))
        if self.config.cross_repo_negatives:
            self._run_negatives(labels)
        if self.config.scale:
            self._run_scale(labels)

    def _run_repository(self, repo: str, queries: list[LabeledQuery]) -> None:
        git_dir = find_mirror(self.config.mirrors, repo)
        tree = self.tree_folder(repo)
        commits = list(dict.fromkeys(q.commit for q in queries))
        workspace = None
        for number, commit in enumerate(commits):
            asked = [q for q in queries if q.commit == commit]
            if self.config.resume and all(self._answered(q) for q in asked):
                continue
            try:
                missing = write_tree(git_dir, commit, tree)
            except RuntimeError as error:  # a commit the mirror lacks: skip it, keep the run
                self.log(f"{repo} {commit[:10]}: skipped, {error}")
                self._skip(asked, repo, commit, str(error))
                continue
            lacking = set(missing)  # a blob over the mirror's size limit: only a query it answers is skipped
            for query in [q for q in asked if lacking.intersection(q.gold_files)]:
                gold = min(lacking.intersection(query.gold_files))
                self._skip([query], repo, commit, f"the mirror lacks its gold file {gold}")
                asked.remove(query)
            if workspace is None:
                workspace = Workspace(tree, self.settings)
                self.workspaces[repo] = workspace
            step = self._index(workspace, repo, commit, cold=number == 0)
            self.log(f"{repo} {commit[:10]} ({number + 1}/{len(commits)}): {step.files_indexed} files changed, "
                     f"{step.chunks_embedded} chunks embedded in {step.update_seconds + step.embed_seconds:.1f}s"
                     + (f" ({len(missing)} files the mirror lacks left out)" if missing else ""))
            for query in asked:
                self._ask(workspace, query)

    def _skip(self, queries: list[LabeledQuery], repo: str, commit: str, reason: str) -> None:
        for query in queries:
            skipped = {"id": query.id, "repo": repo, "commit": commit, "reason": reason}
            self.skipped.append(skipped)
            self._append("skipped.jsonl", skipped)

    def _index(self, workspace: Workspace, repo: str, commit: str, *, cold: bool) -> StepRecord:
        update = workspace.indexer.update()
        static = workspace.embed_static()
        embedder = workspace.embedder()
        embedded, embed_seconds = 0, 0.0
        if embedder is not None:
            report = workspace.indexer.embed_pending(embedder, include_last=self.config.embed_scope == "all",
                                                     progress=embedding_progress(repo, self.log))
            embedded, embed_seconds = report.embedded, report.seconds
        step = StepRecord(repo, commit, cold, update.seconds, embed_seconds, update.files_indexed, update.chunks_added,
                          embedded, workspace.state().chunks, static.seconds if static is not None else 0.0)
        self.steps.append(step)
        self._append("steps.jsonl", step.__dict__)
        return step

    def _answered(self, query: LabeledQuery) -> bool:
        return all(_record_key(query.id, p, "own", query.repo) in self._done for p in self.pipelines)

    def _ask(self, workspace: Workspace, query: LabeledQuery, *, searched: str = "own", searched_repo: str = "") -> None:
        chunks = workspace.corpus.chunk_count
        for pipeline in self.pipelines:
            if _record_key(query.id, pipeline, searched, searched_repo or query.repo) in self._done:
                continue
            if pipeline == "ripgrep":
                record = _record(query, pipeline, None, ripgrep_rank(workspace.root, query.query, self.config.limit),
                                 chunks, searched, searched_repo)
            else:
                recorded = pipeline in RANKED_PIPELINES and searched == "own"
                # level=True: every one-line query's features read against the workspace's level too, so
                # that `noul calibrate` can fit the columns (retrieval/reference.py) whatever file is shipped
                result = workspace.find(query.query, limit=self.config.limit, legs=PIPELINE_LEGS[pipeline],
                                        rerank=pipeline == "rerank", record_candidates=recorded,
                                        static_aside=pipeline != "hybrid-all", level=True)
                record = _record(query, pipeline, result, None, chunks, searched, searched_repo, result.pair)
                if recorded:
                    record.rank_candidates = result.rank_candidates
                if recorded and pipeline == "hybrid":
                    record.shortlists = self._shortlists(workspace, query.query)
            self._keep(record)

    def _shortlists(self, workspace: Workspace, query: str) -> dict[str, list[str]]:
        """The files of each short-list variant over the fused chunk ranking (what a reranker would see)."""
        search = workspace.settings.search
        chunks = workspace.find(query, mode="chunks", limit=search.candidates, rerank=False).hits
        return {name: list(dict.fromkeys(h.path for h in shortlist(chunks, lambda h: h.path, search.rerank_shortlist,
                                                                     per_file)))
                for name, per_file in SHORTLIST_VARIANTS.items()}

    def _run_negatives(self, labels: list[LabeledQuery]) -> None:
        """Each SWE-bench issue and each commit label (`noul train labels`) asked against the next repository
        (in name order) as a not_here query: a question about other code, in the words its developers used.
        Describe labels have their own not_here queries, written to be near misses."""
        repos = sorted(self.workspaces)
        if len(repos) < 2:
            self.log("cross-repo negatives need at least two repositories: skipped")
            return
        for query in labels:
            if not query.source.startswith(("swebench", "commit")) or query.repo not in self.workspaces:
                continue
            other = repos[(repos.index(query.repo) + 1) % len(repos)]
            negative = replace(query, id=f"{query.id}@{other}", kind="not_here", gold_files=(), gold_lines={},
                               tags=(*query.tags, "cross-repo"))
            self._ask(self.workspaces[other], negative, searched="cross-repo", searched_repo=other)

    def _run_scale(self, labels: list[LabeledQuery]) -> None:
        """Describe queries on their own repository and on a multi-root workspace of every repository."""
        describe = [q for q in labels if q.source == "describe" and q.repo in self.workspaces]
        everything = [self.workspaces[r] for r in sorted(self.workspaces)]
        if not describe or len(everything) < 2:
            self.log("the scale run needs describe queries and several repositories: skipped")
            return
        trees_root = self.config.work / "trees"
        for query in describe:
            own = self.workspaces[query.repo]
            for pipeline in self.pipelines:
                if _record_key(query.id, pipeline, "multi-root", query.repo) in self._done:
                    continue
                if pipeline == "ripgrep":
                    hits, ms = ripgrep_rank(trees_root, query.query, self.config.limit)
                    # "owner+name/src/x.py" -> "<tree root>::src/x.py", as the engine's multi-root hits
                    hits = [(f"{trees_root.resolve() / p.split('/', 1)[0]}::{p.split('/', 1)[1]}", s)
                            for p, s in hits if "/" in p]
                    record = _record(query, pipeline, None, (hits, ms), 0, "multi-root")
                else:
                    result = find_across(everything, query.query, limit=self.config.limit, legs=PIPELINE_LEGS[pipeline],
                                         rerank=pipeline == "rerank", static_aside=pipeline != "hybrid-all")
                    record = _record(query, pipeline, result, None, result.index.chunks, "multi-root")
                record.gold_files = [f"{own.root}::{p}" for p in query.gold_files]
                record.gold_lines = {f"{own.root}::{p}": v for p, v in query.gold_lines.items()}
                self._keep(record)
        self.scale = {"single_chunks": {r: w.corpus.chunk_count for r, w in self.workspaces.items()},
                      "multi_chunks": sum(w.corpus.chunk_count for w in everything)}



def _record_key(query_id: str, pipeline: str, searched: str, searched_repo: str) -> tuple[str, str, str, str]:
    return (query_id, pipeline, searched, searched_repo)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def run_bench(config: BenchConfig) -> dict:
    """Run everything (per_query.jsonl, steps.jsonl and skipped.jsonl are written as the run goes), then
    summary.json, summary.md and the plots."""
    from noul_lsp.bench.report import write_report

    started = time.perf_counter()
    runner = BenchRunner(config)
    runner.run()
    return write_report(runner, wall_seconds=time.perf_counter() - started, peak_rss=peak_rss_mb())
