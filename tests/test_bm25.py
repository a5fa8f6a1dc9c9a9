"""Our BM25 must give the same scores as a reference implementation (bm25s, Lucene variant)."""

import bm25s
import numpy as np

from noul_lsp.retrieval.bm25 import BM25Index

CORPUS = [
    "retry failed upload with exponential backoff",
    "cookie jar persists cookies between requests",
    "parse ini file line into key and value",
    "token bucket rate limiter for api calls api",
    "upload upload upload a blob to storage",
    "least recently used cache evicts the oldest entry",
    "exponential growth of the cache",
]
QUERIES = ["retry upload", "cookie requests", "api rate limiter", "cache exponential", "nothing matches here"]


def _ours(corpus):
    vocabulary: dict[str, int] = {}
    ids, counts = [], []
    for text in corpus:
        words = text.split()
        unique = list(dict.fromkeys(words))
        ids.append(np.array([vocabulary.setdefault(w, len(vocabulary)) for w in unique], dtype=np.int32))
        counts.append(np.array([words.count(w) for w in unique], dtype=np.float32))
    return BM25Index(ids, counts, len(vocabulary)), vocabulary


def test_scores_equal_bm25s_lucene():
    index, vocabulary = _ours(CORPUS)
    reference = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    reference.index([text.split() for text in CORPUS], show_progress=False)
    for query in QUERIES:
        ids = np.array([vocabulary[w] for w in query.split() if w in vocabulary], dtype=np.int64)
        ours = index.scores(ids)
        theirs = reference.get_scores(query.split())
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_unknown_terms_score_nothing_and_empty_index_is_fine():
    index, _ = _ours(CORPUS)
    assert not index.scores(np.array([999], dtype=np.int64)).any()
    empty = BM25Index([], [], 0)
    assert empty.scores(np.array([0], dtype=np.int64)).shape == (0,)


def test_members_of_sorted_postings_whichever_list_is_longer():
    from noul_lsp.retrieval.bm25 import members

    rng = np.random.default_rng(1)
    for _ in range(200):
        postings = np.unique(rng.integers(0, 1000, rng.integers(0, 300))).astype(np.int32)
        rows = np.unique(rng.integers(0, 1000, rng.integers(0, 300))).astype(np.int32)
        assert np.array_equal(members(postings, rows), np.isin(rows, postings))


def test_a_query_term_weighs_by_how_often_the_query_repeats_it():
    """Okapi's query side: each term's part times qtf·(k3+1)/(k3+qtf). Written once, a term keeps its part
    exactly, so a one-line query scores as before; repeated, it counts more, never more than k3+1 times."""
    from noul_lsp.retrieval.bm25 import QUERY_TERM_K3, query_term_weights, repeated_term_weights

    index, vocabulary = _ours(CORPUS)
    ids = np.array([vocabulary["upload"], vocabulary["cache"]], dtype=np.int64)
    weights = query_term_weights(np.array([3, 1]))
    assert weights[1] == 1.0 and 1.0 < weights[0] < query_term_weights(np.array([30]))[0] < QUERY_TERM_K3 + 1
    by_term = [index.scores(ids[i:i + 1]) for i in range(2)]
    np.testing.assert_allclose(index.scores(ids, query_weights=weights), weights[0] * by_term[0] + by_term[1],
                               rtol=1e-6)
    assert repeated_term_weights(["upload", "cache"], {"upload": 1, "cache": 1}) is None
    assert repeated_term_weights(["upload", "cache"], None) is None
    assert repeated_term_weights(["upload", "cache"], {"upload": 3}).tolist() == weights.tolist()
