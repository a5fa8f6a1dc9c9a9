"""Benchmark metrics on hand-made rankings with answers worked out by hand."""

import math

import pytest

from noul_lsp.bench import metrics as m

RANKED = ["a.py", "b.py", "c.py", "d.py", "e.py", "f.py"]


def test_accuracy_with_two_gold_files_needs_both_in_the_top_k():
    gold = ["b.py", "e.py"]
    assert m.accuracy_at(RANKED, gold, 1) == 0.0  # min(1, 2) = 1 gold file in the top 1? a.py is not gold
    assert m.accuracy_at(["b.py", *RANKED], gold, 1) == 1.0
    assert m.accuracy_at(RANKED, gold, 3) == 0.0  # only b.py of the two in the top 3
    assert m.accuracy_at(RANKED, gold, 5) == 1.0  # both in the top 5


def test_precision_recall_complete_mrr():
    assert m.precision_at_1(RANKED, ["a.py"]) == 1.0
    assert m.recall_any_at(RANKED, ["c.py", "z.py"], 3) == 1.0
    assert m.complete_at(RANKED, ["c.py", "z.py"], 5) == 0.0
    assert m.complete_at(RANKED, ["c.py", "e.py"], 5) == 1.0
    assert m.reciprocal_rank(RANKED, ["d.py", "f.py"]) == pytest.approx(0.25)
    assert m.reciprocal_rank(RANKED, ["z.py"]) == 0.0


def test_f_scores():
    # 1 hit of 4 returned, 1 of 2 gold: P = 0.25, R = 0.5
    assert m.f_beta(RANKED[:4], ["a.py", "z.py"], 1.0) == pytest.approx(2 * 0.25 * 0.5 / 0.75)
    assert m.f_beta(RANKED[:4], ["a.py", "z.py"], 2.0) == pytest.approx(5 * 0.25 * 0.5 / (4 * 0.25 + 0.5))
    assert m.f_beta(RANKED, ["z.py"], 1.0) == 0.0


def test_line_hit_needs_an_overlap_in_the_same_file():
    gold = {"a.py": [[10, 20]]}
    assert m.line_hit({"a.py": [[18, 30]]}, gold) == 1.0
    assert m.line_hit({"a.py": [[21, 30]]}, gold) == 0.0
    assert m.line_hit({"b.py": [[10, 20]]}, gold) == 0.0


def test_located_reads_where_each_found_gold_file_opens():
    gold = {"a.py": [[10, 20]], "b.py": [[40, 50]]}
    # a.py opens on its lines; b.py has them in its second range only; c.py is no gold file
    ranges = {"a.py": [[15, 30], [1, 5]], "b.py": [[1, 9], [45, 60]], "c.py": [[10, 20]]}
    assert m.located(["c.py", "a.py", "b.py"], ranges, gold) == 0.5
    assert m.located(["c.py", "a.py", "b.py"], ranges, gold, k=2) == 1.0
    assert m.located(["c.py"], ranges, gold) is None  # no gold file found: no figure


def test_auroc_of_known_orderings():
    assert m.auroc([0.9, 0.8, 0.2, 0.1], [1, 1, 0, 0]) == 1.0
    assert m.auroc([0.1, 0.2, 0.8, 0.9], [1, 1, 0, 0]) == 0.0
    assert m.auroc([0.5, 0.5], [1, 0]) == 0.5
    assert m.auroc([0.9, 0.4, 0.6, 0.1], [1, 1, 0, 0]) == 0.75
    assert m.auroc([0.3], [1]) is None


def test_ece_of_a_known_distribution():
    # Perfectly calibrated: in the 0.8 bin 8 of 10 are positive, in the 0.2 bin 2 of 10.
    probabilities = [0.85] * 10 + [0.25] * 10
    labels = [1] * 8 + [0] * 2 + [1] * 2 + [0] * 8
    assert m.expected_calibration_error(probabilities, labels) == pytest.approx(0.5 * 0.05 + 0.5 * 0.05)
    # Always 0.9 but only half right: ECE 0.4
    assert m.expected_calibration_error([0.9] * 4, [1, 0, 1, 0]) == pytest.approx(0.4)
    assert m.brier([1.0, 0.0], [1, 0]) == 0.0
    assert math.isclose(m.brier([0.5, 0.5], [1, 0]), 0.25)


def test_a_walkthroughs_cited_line_is_its_gold_files_labeled_lines(tmp_path):
    """Walkthrough labels name their answer's line as `cite: "path:line"`; without it line_hit@5 and located@5
    were "–" for every walkthrough file. Given `gold_lines` win; a cite outside the gold files is no line."""
    import json

    from noul_lsp.bench.labels import load_labels

    base = {"source": "walkthrough", "repo": "o/r", "commit": "c" * 40, "query": "q", "kind": "answerable",
            "gold_files": ["player/player.gd"]}
    rows = [{**base, "id": "cited", "cite": "player/player.gd:79"},
            {**base, "id": "given", "cite": "player/player.gd:79", "gold_lines": {"player/player.gd": [[70, 90]]}},
            {**base, "id": "elsewhere", "cite": "enemy.gd:3"}, {**base, "id": "none", "cite": ""}]
    path = tmp_path / "walk-x.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    lines = {q.id: q.gold_lines for q in load_labels([path])}
    assert lines == {"cited": {"player/player.gd": [[79, 79]]}, "given": {"player/player.gd": [[70, 90]]},
                     "elsewhere": {}, "none": {}}
