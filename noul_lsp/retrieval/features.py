"""Features of candidate files and chunks for the ranking stage, as arrays over the candidate set.

Candidates are the files of the fused chunks plus the best files under whole-file BM25 (a file whose
evidence is spread over many chunks may have no single chunk in the fused lists). Every row of a
candidate file is scored, so a file's best chunk is found even when retrieval missed it.

Groups of columns, each built once per query with numpy (the group names are what the ablation in
docs/benchmarks.md removes in turn):
- `legs`: the retrievers' own evidence per chunk (BM25 relative to the query's best, cosine, fused RRF);
- `static`: the static model's cosine beside the transformer's (and alone, where the transformer has not
  embedded a chunk yet: the same model then ranks a workspace seconds after it opens);
- `entities`: what the query names (analyse.py) against the symbol table (symbols.py): the chunk defines
  a named symbol, lives in a named class, mentions a name, its definition name carries query terms; the
  file's path is named, its stem is a named module, its path carries query terms;
- `references`: which candidates the best fused chunks use. An issue text names the function that fails,
  and the fix is often in a helper it calls, in a module the text never names (`_io/saferepr.py` behind
  `assertrepr_compare`): a candidate chunk whose definition name is a term of one of the fused list's
  first chunks (in another file) takes that chunk's fused weight times the name's idf (a rare name is a
  reference, `get` is not), and its file counts the distinct such chunks. Only for long queries (issue
  texts, prompts): a one-line description's best chunks are its answer, not its callers, and computed for
  every shape these columns lost held out what they gained on issues (docs/benchmarks.md);
- `file`: whole-file BM25, how many of the file's chunks were retrieved (coherence), its size, the share
  of copied chunks, whether it is a header whose implementation the workspace holds (symbols.py), its role
  (roles.py) and whether the query asks for that role;
and `shape` interactions: the weight of the legs and of the entity matches per query shape.

A file's row takes the maximum of each chunk column over its chunks (and the second-best fused score);
a chunk's row takes its own chunk columns beside its file's columns, so one linear model scores both.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from noul_lsp.retrieval.analyse import QueryAnalysis
from noul_lsp.retrieval.bm25 import members as members_of
from noul_lsp.retrieval.bm25 import repeated_term_weights
from noul_lsp.retrieval.dense import LegScores
from noul_lsp.retrieval.fusion import SAMPLE_STEP, SAMPLED_FROM, sampled_threshold
from noul_lsp.retrieval.roles import (
    ASKABLE_ROLES,
    ROLE_INDEX,
    ROLES,
    STYLESHEET_TERMS,
    TEMPLATE_FOLDERS,
    asked_tool_terms,
    asks_for_styles,
    asks_for_templates,
    query_asks_for,
    roles_read_as_source,
)
from noul_lsp.retrieval.segment import expand_ranges
from noul_lsp.retrieval.symbols import SymbolTable
from noul_lsp.retrieval.vocabulary import get_many, key_codes
from noul_lsp.text.terms import identifier_terms

CHUNK_COLUMNS = ("bm25", "dense", "dense_gap", "dense_missing", "rrf", "defines", "in_scope", "mentions",
                 "symbol_terms", "static", "static_gap", "static_missing", "static_if_dense_missing", "referenced")
FILE_COLUMNS = ("rrf_second", "dense_second", "dense_mean", "static_second", "static_mean", "file_bm25",
                "file_bm25_inverse_rank", "referencing_seeds", "path_terms", "path_named", "stem_named",
                "fused_chunks", "fused_share", "size", "duplicate_share", "declaration_twin",
                *(f"role_{role}" for role in ROLES if role != "source"),
                *(f"asks_{role}_is_{role}" for role in ASKABLE_ROLES))
#: (shape, column): the column's weight for that query shape is learned on top of its common weight
SHAPE_INTERACTIONS = tuple((shape, column) for shape in ("symbol", "long")
                           for column in ("bm25", "dense", "dense_mean", "rrf", "defines", "mentions", "symbol_terms",
                                          "file_bm25", "path_named", "path_terms", "stem_named", "role_test",
                                          "role_docs"))
FEATURES = (*CHUNK_COLUMNS, *FILE_COLUMNS, *(f"{shape}_x_{column}" for shape, column in SHAPE_INTERACTIONS))
FEATURE_GROUPS = {
    "legs": ("bm25", "dense", "dense_gap", "dense_missing", "rrf", "rrf_second", "dense_second", "dense_mean"),
    "static": ("static", "static_gap", "static_missing", "static_if_dense_missing", "static_second", "static_mean"),
    "entities": ("defines", "in_scope", "mentions", "symbol_terms", "path_terms", "path_named", "stem_named"),
    "file": ("file_bm25", "file_bm25_inverse_rank", "fused_chunks", "fused_share", "size", "duplicate_share",
             "declaration_twin", *(c for c in FILE_COLUMNS if c.startswith(("role_", "asks_")))),
    "references": ("referenced", "referencing_seeds"),
    "shape": tuple(f"{shape}_x_{column}" for shape, column in SHAPE_INTERACTIONS),
}
#: how many files whole-file BM25 adds to the candidates
FILE_BM25_CANDIDATES = 50
#: how many of a root's best fused chunks lend their weight to the definitions they use (`references`)
REFERENCE_SEEDS = 10
#: which of some sorted rows hold a BM25 term id (the lexical index's `contains`)
RowsContaining = Callable[[int, np.ndarray], np.ndarray]
#: (position in the given rows, term code, idf) of every distinct term of some rows: what the `references`
#: features read of the corpus (rank.py builds it from the corpus's row-major terms and vocabulary)
SeedTerms = Callable[[np.ndarray], tuple[np.ndarray, np.ndarray, np.ndarray]]


@dataclass(frozen=True)
class RootFeatures:
    """One root's candidates and their feature rows (columns in FEATURES order). A chunk's row is its
    chunk columns beside its file's columns; it is kept in those two parts, because the candidate files
    of a query hold thousands of chunks, and the full rows would be copied only to be multiplied."""

    files: np.ndarray  # int32 file ids (the corpus's file index) of the candidate files
    file_matrix: np.ndarray  # float32 [files, len(FEATURES)]
    rows: np.ndarray  # int32 corpus rows of every candidate file, grouped by file in `files` order
    row_owner: np.ndarray  # int32 position in `files` of each row's file
    chunk_part: np.ndarray  # float32 [rows, len(CHUNK_COLUMNS)]
    file_part: np.ndarray  # float32 [files, len(FILE_COLUMNS)]
    shape: str  # the query's shape (which interaction columns are filled)

    @property
    def row_matrix(self) -> np.ndarray:
        """float32 [rows, len(FEATURES)]: every candidate chunk's full row."""
        if not len(self.rows):
            return np.zeros((0, len(FEATURES)), dtype=np.float32)
        return _design(self.chunk_part, self.file_part[self.row_owner], self.shape)

    def row_scores(self, weights: np.ndarray, bias: float) -> np.ndarray:
        """`row_matrix @ weights + bias` (weights over FEATURES) without building `row_matrix`: an
        interaction column copies its base column for this shape, so its weight adds to the base's, and
        the file columns are weighed once per file."""
        folded = weights[:len(CHUNK_COLUMNS) + len(FILE_COLUMNS)].copy()
        base = {name: i for i, name in enumerate((*CHUNK_COLUMNS, *FILE_COLUMNS))}
        for position, (interaction_shape, column) in enumerate(SHAPE_INTERACTIONS):
            if interaction_shape == self.shape:
                folded[base[column]] += weights[len(base) + position]
        per_file = self.file_part @ folded[len(CHUNK_COLUMNS):] + bias
        return self.chunk_part @ folded[:len(CHUNK_COLUMNS)] + per_file[self.row_owner]


@dataclass(frozen=True)
class Blocks:
    """Runs of equal values in a sorted array (a candidate file's rows are adjacent): per-file maxima,
    runners-up and heads by `reduceat` over the runs, in O(rows). Sorting every candidate row by (file,
    value) instead, once per column, cost a description's ranking stage 1.1 of its 5.8 ms at 127k chunks
    and 1.5 of 7.4 ms at 973k (docs/benchmarks.md, "Scale")."""

    starts: np.ndarray  # int64 index of each run's first element
    sizes: np.ndarray  # int64 length of each run

    @classmethod
    def of(cls, sorted_keys: np.ndarray) -> Blocks:
        n = len(sorted_keys)
        starts = np.flatnonzero(np.diff(sorted_keys, prepend=sorted_keys[:1] - 1)) if n else np.zeros(0, np.int64)
        return cls(starts, np.diff(np.append(starts, n)))

    def first_of_best(self, values: np.ndarray, best: np.ndarray) -> np.ndarray:
        """Per run, the index of its first element equal to the run's `best` value (its maximum)."""
        n = len(values)
        return np.minimum.reduceat(np.where(values == np.repeat(best, self.sizes), np.arange(n), n), self.starts)

    def second_best(self, values: np.ndarray, best: np.ndarray | None = None) -> np.ndarray:
        """Per run, the second-largest value (its maximum again when that occurs twice; -inf in a run of one):
        what the second element of a descending sort within the run would be."""
        if best is None:
            best = np.maximum.reduceat(values, self.starts)
        rest = values.astype(np.float64)
        first = self.first_of_best(values, best)
        rest[first[first < len(values)]] = -np.inf  # a run whose maximum is NaN has no first best
        return np.maximum.reduceat(rest, self.starts)

    def top(self, values: np.ndarray, k: int) -> np.ndarray:
        """The indexes of each run's k largest values (fewer in a shorter run), run by run, each run's best
        first, ties in index order: the rows a stable sort by (run, -value) puts first in each run."""
        rest = values.astype(np.float64)
        picked = np.full((len(self.starts), k), -1, dtype=np.int64)
        for place in range(min(k, int(self.sizes.max()) if len(self.sizes) else 0)):
            best = np.maximum.reduceat(rest, self.starts)
            first = self.first_of_best(rest, best)
            filled = (best > -np.inf) & (first < len(values))
            picked[filled, place] = first[filled]
            rest[first[filled]] = -np.inf
        flat = picked.ravel()
        return flat[flat >= 0]


class _Positions:
    """`lookup[ids]`: the position of each id among the sorted `members`, -1 for the others. A binary
    search over the candidates, not an array the size of the corpus per query."""

    def __init__(self, members: np.ndarray) -> None:
        self.members = members

    def __getitem__(self, ids) -> np.ndarray:
        ids = np.asarray(ids, dtype=np.int64)
        if not len(self.members):
            return np.full(ids.shape, -1, dtype=np.int64)
        position = np.minimum(np.searchsorted(self.members, ids), len(self.members) - 1)
        return np.where(self.members[position] == ids, position, -1)


@dataclass(frozen=True)
class WeightedTerms:
    """The query's terms that have an idf here (a term absent from the corpus weighs nothing), their idf
    and key codes: computed once a find, read by each name-match share."""

    terms: list[str]
    idf: np.ndarray  # float64, aligned with terms
    codes: np.ndarray  # uint64 key codes, aligned with terms

    @classmethod
    def of(cls, terms: Sequence[str], idf: np.ndarray) -> WeightedTerms:
        """`terms` (the query's terms the vocabulary knows) and their idf, aligned."""
        weighted = np.asarray(idf, dtype=np.float64) > 0
        kept = [t for t, keep in zip(terms, weighted.tolist(), strict=True) if keep]
        return cls(kept, np.asarray(idf, dtype=np.float64)[weighted], key_codes(kept))


def _weighted_share(members: np.ndarray, postings: Mapping[str, np.ndarray], query: WeightedTerms) -> np.ndarray:
    """Per sorted member, the idf-weighted share of query terms whose (sorted) postings contain it. The
    symbol table's postings grow with the corpus: `bm25.members` searches the shorter list in the longer."""
    weights = query.idf.tolist()
    total = sum(weights)
    share = np.zeros(len(members), dtype=np.float64)
    if total <= 0:
        return share.astype(np.float32)
    for weight, ids in zip(weights, get_many(postings, query.terms, query.codes), strict=True):
        if ids is not None:
            share[members_of(ids, members)] += weight
    return (share / total).astype(np.float32)


#: the roles whose files, asked for outright (`roles.roles_read_as_source`), keep the ranker's lift for asking as
#: well as losing its prior against them: "documentation of the PromQL functions" (as source alone the page was
#: not in the first ten), "the test that checks ..." (the code it tests first: of 71 walkthrough questions of 41
#: repositories asking for tests outright, 37 had the test first, 48 with the lift; of 29 asking for a page, 23
#: and 25). Not the others: the lift for a word asking for a changelog is below zero ("release the lock")
LIFTED_WHEN_ASKED_OUTRIGHT = frozenset({"test", "docs"})


def _best(scores: np.ndarray, positive: np.ndarray, k: int) -> np.ndarray:
    """The indexes of the k highest positive scores (`positive`: the indexes of every positive one, in
    order), best first (ties by index), in O(n): a sort of every file's score cost a million-chunk
    workspace milliseconds per query."""
    if len(positive) > max(k, SAMPLED_FROM // 8):
        # first narrowed by a sampled threshold (as fusion.top_k is): past 8k files the partition of every
        # matching file's score was the cost (0.34 ms a description at 981k chunks)
        threshold = sampled_threshold(scores[positive[::SAMPLE_STEP]], k)
        above = positive[scores[positive] > threshold] if threshold is not None else positive
        if len(above) >= k:  # every score at or above the k-th is in it: the same answer, ties included
            positive = above
    if len(positive) > k:
        kth = np.partition(scores[positive], len(positive) - k)[len(positive) - k]
        # every score above the k-th, and as many equal to it as fit, in index order (a stable sort's choice)
        above, equal = positive[scores[positive] > kth], positive[scores[positive] == kth]
        positive = np.concatenate([above, equal[:k - len(above)]])
    return positive[np.argsort(-scores[positive], kind="stable")]


def _higher_than(values: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """For each threshold, how many values exceed it: O((n + t) log t), without sorting the n values."""
    if not len(thresholds):
        return np.zeros(0, dtype=np.int64)
    ordered = np.sort(thresholds)
    # a value exceeds ordered[j] exactly when more than j thresholds are below it
    below = np.searchsorted(ordered, values, side="left")
    exceeding = np.cumsum(np.bincount(below, minlength=len(ordered) + 1)[::-1])[::-1]
    return exceeding[np.searchsorted(ordered, thresholds, side="left") + 1]


def root_features(*, analysis: QueryAnalysis, table: SymbolTable, row_file: np.ndarray, term_ids: dict[str, int],
                  idf: np.ndarray, lexical: np.ndarray | None, dense: LegScores | None, fused_rows: np.ndarray,
                  fused_scores: np.ndarray, rrf_k: int, allowed: np.ndarray | None,
                  rows_containing: RowsContaining, static: LegScores | None = None,
                  seed_terms: SeedTerms | None = None,
                  allowed_files: np.ndarray | None = None, lexical_best: float | None = None) -> RootFeatures:
    """The feature rows of one root's candidates (see the module docstring).

    `lexical` is the BM25 score of every row (None without the lexical leg), `dense` the cosine of any
    row (NaN where a row has no vector yet; None without the dense leg), `static` the same of the static
    leg, `fused_rows`/`fused_scores` this root's rows in the fused ranking and their RRF scores, `allowed`
    the include/exclude row mask and `allowed_files` the same at file level (both None: every row), `seed_terms`
    the terms of given rows (None: no `references` features), `lexical_best` the best allowed BM25 score (the
    lexical leg's first hit; None: taken from `lexical`)."""
    file_count = len(table.file_rows)
    counts = analysis.lexical_counts(term_ids)  # the terms BM25 read (a word written whole, read whole)
    ids = {t: term_ids.get(t) for t in counts}
    known = [t for t in counts if ids[t] is not None and ids[t] < len(idf)]
    query_ids = np.array([ids[t] for t in known], dtype=np.int64)
    # one gather for every term: a corpus with a delta computes its idf when asked, per call
    weighted = WeightedTerms.of(known, idf[query_ids] if known else np.zeros(0))

    file_lexical = table.file_bm25.scores(query_ids, query_weights=repeated_term_weights(known, counts)) \
        if len(query_ids) else np.zeros(file_count, dtype=np.float32)
    if allowed_files is not None and file_count:
        file_lexical = np.where(allowed_files, file_lexical, 0.0)
    from_fusion = np.unique(row_file[fused_rows]) if len(fused_rows) else np.zeros(0, dtype=np.int32)
    # the files that hold a query term, found once: the candidates, the best score and the ranks read them,
    # not every file of the corpus again
    matching_files = np.flatnonzero(file_lexical > 0)
    matching_scores = file_lexical[matching_files]
    best_files = _best(file_lexical, matching_files, FILE_BM25_CANDIDATES)
    files = np.unique(np.concatenate([from_fusion, best_files])).astype(np.int32)
    if not len(files):
        return RootFeatures(files, np.zeros((0, len(FEATURES)), np.float32), np.zeros(0, np.int32),
                            np.zeros(0, np.int32), np.zeros((0, len(CHUNK_COLUMNS)), np.float32),
                            np.zeros((0, len(FILE_COLUMNS)), np.float32), analysis.shape)

    counts = table.file_rows[files]
    starts = table.file_start[files]
    owner = np.repeat(np.arange(len(files), dtype=np.int32), counts)
    offsets = np.concatenate([[0], np.cumsum(counts)[:-1]]).astype(np.int64)
    rows = (np.repeat(starts.astype(np.int64) - offsets, counts) + np.arange(int(counts.sum()))).astype(np.int32)
    if allowed is not None:
        keep = allowed[rows]
        rows, owner = rows[keep], owner[keep]
    n = len(rows)
    row_lookup = _Positions(rows)  # rows ascend: files ascend, and each file's rows are adjacent

    chunk = np.zeros((n, len(CHUNK_COLUMNS)), dtype=np.float32)
    column = {name: index for index, name in enumerate(CHUNK_COLUMNS)}
    if lexical is not None and len(lexical):
        top = float(lexical.max()) if lexical_best is None else lexical_best
        if top > 0:
            chunk[:, column["bm25"]] = lexical[rows] / top
    for leg, values in (("dense", dense), ("static", static)):
        filled, gap, missing = _vector_columns(values, rows)
        chunk[:, column[leg]] = filled
        chunk[:, column[f"{leg}_gap"]] = gap
        chunk[:, column[f"{leg}_missing"]] = missing
    # the static cosine where the transformer has not embedded the chunk: lets one linear model lean on the
    # static leg while the transformer fills in, and on both once it has
    chunk[:, column["static_if_dense_missing"]] = chunk[:, column["static"]] * chunk[:, column["dense_missing"]]
    if len(fused_rows):
        found = row_lookup[fused_rows]
        hit = found >= 0
        chunk[found[hit], column["rrf"]] = fused_scores[hit] * (rrf_k + 1) / 2.0
    names = analysis.names
    # a bare name is looked up in smart case: `Token` asked, where `token` is defined too, is the type
    chunk[:, column["defines"]] = members_of(table.rows_defining(names, analysis.spelled), rows)
    chunk[:, column["in_scope"]] = members_of(table.rows_in_scopes(analysis.scopes | names), rows)
    name_terms = {identifier_terms(name)[0] for name in names if identifier_terms(name)}
    name_ids = [term_ids[t] for t in name_terms if t in term_ids]
    if name_ids and n:
        mentioned = np.zeros(n, dtype=np.float32)
        for term in name_ids:
            mentioned += rows_containing(term, rows)
        chunk[:, column["mentions"]] = mentioned / len(name_terms)
    chunk[:, column["symbol_terms"]] = _weighted_share(rows, table.symbol_terms, weighted)
    seeds_per_file = np.zeros(len(files), dtype=np.float32)
    if seed_terms is not None and analysis.shape == "long" and len(fused_rows) and n:
        chunk[:, column["referenced"]], seeds_per_file = _references(
            table, rows, owner, len(files), row_file, fused_rows, fused_scores, seed_terms)

    file_part = np.zeros((len(files), len(FILE_COLUMNS)), dtype=np.float32)
    fcol = {name: index for index, name in enumerate(FILE_COLUMNS)}
    top_file = float(matching_scores.max()) if len(matching_scores) else 0.0
    if top_file > 0:
        scores = file_lexical[files]
        file_part[:, fcol["file_bm25"]] = scores / top_file
        # a file at or below the lowest positive candidate exceeds none that is ranked (a zero score has no
        # rank): left out, the count reads the few files above, not every file that shares a common word
        lowest = float(scores[scores > 0].min()) if (scores > 0).any() else top_file
        rank = _higher_than(matching_scores[matching_scores > lowest], scores) + 1
        file_part[:, fcol["file_bm25_inverse_rank"]] = np.where(scores > 0, 1.0 / rank, 0.0)
    file_part[:, fcol["referencing_seeds"]] = seeds_per_file
    file_part[:, fcol["path_terms"]] = _weighted_share(files, table.path_terms, weighted)
    file_part[:, fcol["path_named"]] = members_of(table.files_ending_with(analysis.paths), files)
    file_part[:, fcol["stem_named"]] = members_of(table.files_with_stems(analysis.modules), files)
    # every fused chunk's file is a candidate: counted among the candidates, not in an array over every file
    fused_per_file = np.bincount(np.searchsorted(files, row_file[fused_rows]), minlength=len(files)) \
        if len(fused_rows) else np.zeros(len(files))
    file_part[:, fcol["fused_chunks"]] = np.log1p(fused_per_file)
    # the share of a file's chunks that were retrieved: coherence that a long file does not get by size alone
    file_part[:, fcol["fused_share"]] = fused_per_file / np.maximum(table.file_rows[files], 1)
    file_part[:, fcol["size"]] = np.log1p(table.file_rows[files])
    file_part[:, fcol["duplicate_share"]] = table.duplicate_share[files]
    file_part[:, fcol["declaration_twin"]] = table.declaration_twin[files]
    written_roles = roles = table.roles[files]
    read_as_source = roles_read_as_source(analysis.terms, analysis.shape, analysis.text)
    for role in read_as_source:  # asked for: no prior against it
        roles = np.where(roles == ROLE_INDEX[role], ROLE_INDEX["source"], roles)
    templates = TEMPLATE_FOLDERS if asks_for_templates(analysis.text, analysis.shape) else ()
    styles = STYLESHEET_TERMS if asks_for_styles(analysis.text, analysis.shape) else ()
    for terms, role in ((templates, "other"),  # a template: its folders' files
                        (styles, "other"),  # styles: the stylesheets
                        (asked_tool_terms(analysis.text, analysis.shape), "config")):  # a tool named: its files
        if terms:
            marked = np.zeros(len(files), dtype=bool)
            for postings in get_many(table.path_terms, list(terms)):
                if postings is not None:
                    marked |= members_of(postings, files)
            roles = np.where(marked & (roles == ROLE_INDEX[role]), ROLE_INDEX["source"], roles)
    for role in ROLES:
        if role != "source":
            file_part[:, fcol[f"role_{role}"]] = roles == ROLE_INDEX[role]
    asks = query_asks_for(analysis.terms, analysis.shape)
    for role in ASKABLE_ROLES:
        if role in read_as_source and role in LIFTED_WHEN_ASKED_OUTRIGHT:
            file_part[:, fcol[f"asks_{role}_is_{role}"]] = written_roles == ROLE_INDEX[role]
        elif asks[role]:
            file_part[:, fcol[f"asks_{role}_is_{role}"]] = roles == ROLE_INDEX[role]

    pooled = np.full((len(files), len(CHUNK_COLUMNS)), 0.0, dtype=np.float32)
    if n:
        blocks = Blocks.of(owner)
        present = owner[blocks.starts]
        pooled[present] = np.maximum.reduceat(chunk, blocks.starts, axis=0)
        # the smallest gap and the "missing" flag pool by minimum: the file's best chunk decides
        for name in ("dense_gap", "dense_missing", "static_gap", "static_missing"):
            pooled[present, column[name]] = np.minimum.reduceat(chunk[:, column[name]], blocks.starts)
        has_second = blocks.sizes > 1
        # the second-best fused chunk, and each vector leg's view of the whole file: its second-best chunk and
        # its mean cosine (a file that is about the query as a whole, not one lucky chunk in a long file)
        for name, leg_column in (("rrf_second", "rrf"), ("dense_second", "dense"), ("static_second", "static")):
            values = chunk[:, column[leg_column]]
            second = blocks.second_best(values, pooled[present, column[leg_column]])
            file_part[present[has_second], fcol[name]] = second[has_second]
        for leg in ("dense", "static"):
            file_part[present, fcol[f"{leg}_mean"]] = np.add.reduceat(chunk[:, column[leg]], blocks.starts) / blocks.sizes
    file_matrix = _design(pooled, file_part, analysis.shape)
    return RootFeatures(files, file_matrix, rows, owner, chunk, file_part, analysis.shape)


def _references(table: SymbolTable, rows: np.ndarray, owner: np.ndarray, candidate_files: int, row_file: np.ndarray,
                fused_rows: np.ndarray, fused_scores: np.ndarray,
                seed_terms: SeedTerms) -> tuple[np.ndarray, np.ndarray]:
    """Per candidate row, the best (seed's fused score / the best seed's) × (the name's idf / the best idf
    among the seeds' terms) over the seeds of other files that carry the row's definition name as a term;
    per candidate file, the share of the seeds (of other files) that use one of its definitions. Every
    (row, seed) match is one array element: no loop over rows or seeds."""
    n = len(rows)
    seeds = np.argsort(-fused_scores, kind="stable")[:REFERENCE_SEEDS]
    seed_rows, seed_weight = fused_rows[seeds].astype(np.int64), fused_scores[seeds] / max(float(fused_scores.max()), 1e-12)
    positions, codes, idf = seed_terms(seed_rows)
    useful = (codes != 0) & (idf > 0)
    positions, codes, idf = positions[useful], codes[useful], idf[useful]
    referenced, seeds_per_file = np.zeros(n, dtype=np.float32), np.zeros(candidate_files, dtype=np.float32)
    definition = table.definition_codes[rows]
    # the seeds' codes are never 0, so a row that defines nothing (code 0) matches no range
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    low = np.searchsorted(sorted_codes, definition, side="left")
    lengths = np.searchsorted(sorted_codes, definition, side="right") - low
    if not lengths.any():
        return referenced, seeds_per_file
    match_row = np.repeat(np.arange(n), lengths)
    pair = order[expand_ranges(low, lengths)]
    seed = positions[pair]
    elsewhere = row_file[seed_rows[seed]] != row_file[rows[match_row]]  # a file's own helpers are no news
    match_row, pair, seed = match_row[elsewhere], pair[elsewhere], seed[elsewhere]
    np.maximum.at(referenced, match_row, (seed_weight[seed] * idf[pair] / idf.max()).astype(np.float32))
    file_seed = np.unique(owner[match_row].astype(np.int64) * REFERENCE_SEEDS + seed)
    seeds_per_file = np.bincount(file_seed // REFERENCE_SEEDS, minlength=candidate_files) / REFERENCE_SEEDS
    return referenced, seeds_per_file.astype(np.float32)


def _vector_columns(values: LegScores | None, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(cosine, gap to the query's best, missing flag) of `rows` for one vector leg. A row without a vector
    (not embedded yet, or no such leg) takes the query's mean cosine: neutral, so that being embedded later
    is neither a penalty nor a boost."""
    if values is None or np.isnan(values.best):
        return np.zeros(len(rows), np.float32), np.ones(len(rows), np.float32), np.ones(len(rows), np.float32)
    cosines = values.at(rows)
    missing = np.isnan(cosines)
    filled = np.where(missing, values.mean, cosines)
    return filled, values.best - filled, missing.astype(np.float32)


def _design(chunk: np.ndarray, file_part: np.ndarray, shape: str) -> np.ndarray:
    """[chunk columns | file columns | shape interactions] in FEATURES order."""
    base = np.hstack([chunk, file_part])
    index = {name: i for i, name in enumerate((*CHUNK_COLUMNS, *FILE_COLUMNS))}
    interactions = np.zeros((len(base), len(SHAPE_INTERACTIONS)), dtype=np.float32)
    for position, (interaction_shape, column) in enumerate(SHAPE_INTERACTIONS):
        if interaction_shape == shape:
            interactions[:, position] = base[:, index[column]]
    return np.hstack([base, interactions]).astype(np.float32, copy=False)
