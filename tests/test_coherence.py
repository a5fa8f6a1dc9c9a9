"""Repository coherence (retrieval/coherence.py): the organisation answer's re-ordering by each
repository's share of the evidence."""

from noul_lsp.retrieval.coherence import Coherence, by_repository_coherence
from noul_lsp.retrieval.result import Hit


def _hit(repository: str, path: str, score: float, rank: int) -> Hit:
    return Hit(path, 1, 2, rank, score, "", "", "function", repository=repository)


def test_a_repository_holding_most_of_the_evidence_lifts_its_file_over_a_lone_look_alike():
    hits = [_hit("other/tokenizer", "queue.py", 0.30, 1),
            _hit("pallets/flask", "helpers.py", 0.25, 2),
            _hit("pallets/flask", "app.py", 0.20, 3),
            _hit("pallets/flask", "sessions.py", 0.15, 4),
            _hit("third/logger", "log.py", 0.10, 5)]
    ranked = by_repository_coherence(hits, Coherence(exponent=0.5, depth=20))
    # 0.25 x sqrt(0.6) = 0.194 over 0.30 x sqrt(0.3) = 0.164; app.py (0.155) stays behind the look-alike
    assert [h.path for h in ranked[:3]] == ["helpers.py", "queue.py", "app.py"]
    assert [h.rank for h in ranked] == [1, 2, 3, 4, 5]
    assert [h.score for h in ranked] == sorted((h.score for h in ranked), reverse=True)
    # flask holds 0.6 of the 1.0 mass: helpers.py scores 0.25 x sqrt(0.6)
    assert abs(ranked[0].score - 0.25 * 0.6 ** 0.5) < 1e-12


def test_the_exponent_zero_or_a_single_repository_leaves_the_order_alone():
    hits = [_hit("a/one", "x.py", 0.5, 1), _hit("b/two", "y.py", 0.4, 2), _hit("b/two", "z.py", 0.3, 3)]
    assert [h.path for h in by_repository_coherence(list(hits), Coherence(exponent=0.0))] == ["x.py", "y.py", "z.py"]
    alone = [_hit("a/one", "x.py", 0.5, 1), _hit("a/one", "y.py", 0.4, 2)]
    assert [(h.path, h.score) for h in by_repository_coherence(alone, Coherence())] == [("x.py", 0.5), ("y.py", 0.4)]


def test_only_the_first_depth_hits_count_towards_a_share():
    # b/two's three hits past the depth do not count: a/one holds all the counted mass
    hits = [_hit("a/one", "x.py", 0.5, 1), *[_hit("b/two", f"{i}.py", 0.45, i + 2) for i in range(3)]]
    ranked = by_repository_coherence(hits, Coherence(exponent=1.0, depth=1))
    assert ranked[0].path == "x.py" and all(h.score == 0.0 for h in ranked[1:])


def test_the_exponent_is_chosen_on_the_other_repositories_and_scored_on_the_held_out_one():
    from noul_lsp.bench.org import EXPONENTS, coherence_loro

    def record(repo: str, right_at: float) -> dict:
        # the gold file is first only with the exponent `right_at`; every other exponent misses it
        return {"repo": repo, "gold": [f"{repo}:gold.py"],
                "org_by_exponent": {str(e): [f"{repo}:gold.py" if e == right_at else "x/y:z.py"] for e in EXPONENTS}}

    records = [record("a/one", 1.0), record("a/one", 1.0), record("b/two", 1.0), record("b/two", 1.0),
               record("c/three", 0.25)]
    figures = coherence_loro(records)
    # every fold sees more queries right at 1.0: c/three's, chosen on a/one and b/two, misses its query
    assert figures["leave_one_repository_out"]["chosen"] == {"a/one": 1.0, "b/two": 1.0, "c/three": 1.0}
    assert figures["leave_one_repository_out"]["acc@1"] == round(4 / 5, 3)
    assert figures["in_sample"]["1.0"]["acc@1"] == round(4 / 5, 3)
    assert figures["in_sample"]["0.25"]["acc@5"] == round(1 / 5, 3)


def test_no_hit_reads_more_likely_than_one_the_reordering_put_above_it():
    # flask holds 0.54 of 0.84: helpers 0.28 x 0.643 = 0.180 and app 0.167 pass the tokenizer's 0.30 x 0.357
    hits = [_hit("other/tokenizer", "queue.py", 0.30, 1), _hit("pallets/flask", "helpers.py", 0.28, 2),
            _hit("pallets/flask", "app.py", 0.26, 3)]
    for hit, probability in zip(hits, (0.6, 0.3, 0.2), strict=True):
        hit.probability = probability
    ranked = by_repository_coherence(hits, Coherence(exponent=1.0))
    assert [h.path for h in ranked] == ["helpers.py", "app.py", "queue.py"]
    assert [h.probability for h in ranked] == [0.3, 0.2, 0.2]
    assert [h.probability for h in hits] == [0.6, 0.3, 0.2]  # the hits given are left as they are
