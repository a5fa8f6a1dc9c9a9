"""Calibration fitting on synthetic data with a known answer, and how calibration files are found."""

import json

import numpy as np
import pytest

from noul_lsp.bench import metrics as m
from noul_lsp.bench.calibration import CalibrationDataError, calibrate
from noul_lsp.config import parse_settings
from noul_lsp.retrieval.calibrate import (
    HIT_FEATURES,
    INSTANT,
    QUERY_FEATURES,
    RANKED_SHORT_FEATURES,
    Calibration,
    LogisticModel,
    apply_calibration,
    calibration_file_name,
    fit_logistic,
    load_calibration,
    pair_name,
    query_shape,
)
from noul_lsp.session.workspace import Workspace
from noul_lsp.workspace.project import project_names


def synthetic(n: int, seed: int):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2))
    p = 1 / (1 + np.exp(-(2.0 * x[:, 0] - 1.0 * x[:, 1] + 0.5)))
    y = (rng.random(n) < p).astype(int)
    return [{"a": float(a), "b": float(b)} for a, b in x], y.tolist(), p


def test_logistic_fit_recovers_known_coefficients_and_is_calibrated():
    rows, labels, _ = synthetic(20000, 0)
    model = fit_logistic(rows, labels, ("a", "b"), l2=0.0)
    coef = model.coef / model.scale  # back to the raw feature scale
    intercept = model.intercept - float((model.coef * model.mean / model.scale).sum())
    np.testing.assert_allclose(coef, [2.0, -1.0], atol=0.1)
    assert intercept == pytest.approx(0.5, abs=0.1)
    test_rows, test_labels, truth = synthetic(20000, 1)
    predicted = model.predict(test_rows)
    assert m.expected_calibration_error(predicted, test_labels) < 0.02
    assert np.abs(predicted - truth).max() < 0.05


def _calibration(pair: str) -> Calibration:
    rows, labels, _ = synthetic(500, 2)
    here_rows = [{name: r["a"] if i % 2 else r["b"] for i, name in enumerate(QUERY_FEATURES)} for r in rows]
    hit_rows = [{name: r["a"] for name in HIT_FEATURES} for r in rows]
    return Calibration(pair, {"all": fit_logistic(here_rows, labels, QUERY_FEATURES)},
                       fit_logistic(hit_rows, labels, HIT_FEATURES), {"data": "synthetic"})


def test_a_file_is_used_only_for_its_own_pair(tmp_path, monkeypatch):
    monkeypatch.setenv("NOUL_CALIBRATION_DIR", str(tmp_path))
    pair = pair_name("all-minilm-l6-v2-int8@256", "")
    assert pair == "all-minilm-l6-v2-int8@256+none"
    (tmp_path / calibration_file_name(pair)).write_text(json.dumps(_calibration(pair).to_json()))
    loaded = load_calibration(pair)
    assert loaded is not None and loaded.provenance == {"data": "synthetic"}
    # another pair's parameters under this pair's file name are refused
    other = pair_name("bge-small@512", "")
    (tmp_path / calibration_file_name(other)).write_text(json.dumps(_calibration(pair).to_json()))
    assert load_calibration(other) is None
    assert load_calibration(pair_name("never-fitted@256", "")) is None


def test_the_engine_gives_probabilities_only_when_calibrated(polyglot, tmp_path, monkeypatch):
    # a token budget no shipped file is fitted for: the pair is uncalibrated until a file appears
    settings, _ = parse_settings({"cacheDir": str(tmp_path / "cache"), "index": {"tokenBudget": 64}})
    monkeypatch.setenv("NOUL_CALIBRATION_DIR", str(tmp_path / "cal"))
    workspace = Workspace(polyglot, settings)
    workspace.indexer.update()
    workspace.indexer.embed_pending(workspace.embedder())
    result = workspace.find("retry failed uploads with exponential backoff")
    assert result.here_probability is None and all(h.probability is None for h in result.hits)
    assert any("uncalibrated" in n for n in result.notes)
    assert set(result.features) == set(QUERY_FEATURES)

    (tmp_path / "cal").mkdir()
    (tmp_path / "cal" / calibration_file_name(workspace.model_pair)).write_text(
        json.dumps(_calibration(workspace.model_pair).to_json()))
    calibrated = Workspace(polyglot, settings).find("retry failed uploads with exponential backoff")
    assert 0.0 <= calibrated.here_probability <= 1.0
    assert all(0.0 <= h.probability <= calibrated.here_probability for h in calibrated.hits)
    assert Workspace(polyglot, settings).find("retry", legs=("bm25",)).here_probability is None


def test_while_the_transformer_fills_in_p_here_reads_the_static_legs_evidence(polyglot, tmp_path, monkeypatch):
    """Before the transformer has embedded every chunk, the static leg is the dense evidence P(here) reads
    (it covers every chunk): with the INSTANT models of a file fitted on such finds, and none without them."""
    settings, _ = parse_settings({"cacheDir": str(tmp_path / "cache"), "index": {"tokenBudget": 64}})
    monkeypatch.setenv("NOUL_CALIBRATION_DIR", str(tmp_path / "cal"))
    (tmp_path / "cal").mkdir()
    workspace = Workspace(polyglot, settings)
    workspace.indexer.update()
    workspace.embed_static()  # the transformer has embedded nothing
    query = "retry failed uploads with exponential backoff"
    first = workspace.find(query)
    assert first.features["static_evidence"] == 1.0 and first.features["dense_top"] > 0.0
    transformer_only = _calibration(first.pair)
    (tmp_path / "cal" / calibration_file_name(first.pair)).write_text(json.dumps(transformer_only.to_json()))
    uncalibrated = Workspace(polyglot, settings).find(query)
    assert uncalibrated.here_probability is None and all(h.probability is None for h in uncalibrated.hits)
    assert any("no model of the static leg's evidence" in n and "hybrid-all,instant" in n for n in uncalibrated.notes)

    instant = _calibration(first.pair)
    instant.here = {"all": instant.here["all"], INSTANT + "all": LogisticModel.from_json(
        {**instant.here["all"].to_json(), "intercept": 5.0})}  # another model: reads "here" for any find
    instant.hit_instant = instant.hit
    (tmp_path / "cal" / calibration_file_name(first.pair)).write_text(json.dumps(instant.to_json()))
    calibrated = Workspace(polyglot, settings).find(query)
    assert calibrated.here_probability == pytest.approx(instant.here[INSTANT + "all"].predict([first.features])[0])
    assert calibrated.here_probability != pytest.approx(instant.here["all"].predict([first.features])[0])
    assert all(0.0 <= h.probability <= calibrated.here_probability for h in calibrated.hits)


def test_noul_calibrate_fits_the_static_legs_models_beside_the_transformers(tmp_path):
    """Records of the instant pipeline (the static leg's evidence) fit the INSTANT models, the others the
    rest, each measured apart; the static leg's records alone make no file."""
    rng = np.random.default_rng(13)
    records = []
    for repo in ("r1", "r2", "r3"):
        for kind in ("answerable", "not_here"):
            sign = 1.0 if kind == "answerable" else -1.0
            for _ in range(40):
                full = _record(repo, kind, sign, rng)
                full["pipeline"] = "hybrid-all"
                instant = _record(repo, kind, -sign, rng)  # fused_top points the other way
                instant["pipeline"] = "instant"
                instant["features"]["static_evidence"] = 1.0
                records += [full, instant]
    path = _write(tmp_path / "per_query.jsonl", records)
    written, metrics = calibrate([path], pipeline="hybrid-all,instant", out_dir=tmp_path / "out")
    assert metrics["queries"] == 240 and metrics["instant"]["queries"] == 240
    assert metrics["auroc"] > 0.95 and metrics["instant"]["auroc"] > 0.95
    saved = json.loads(written.read_text())
    # every shape without records of its own falls back to "all", of the same evidence
    assert set(saved["here"]) == {"long", "all", INSTANT + "long", INSTANT + "all"} and "hit_instant" in saved
    assert saved["provenance"]["instant_leave_one_repository_out"]["auroc"] == metrics["instant"]["auroc"]
    calibration = Calibration.from_json(saved)
    assert calibration.reads_static_evidence()
    strong = {**records[0]["features"], "fused_top": 2.0}
    assert calibration.here_probability(strong) > 0.9
    assert calibration.here_probability({**strong, "static_evidence": 1.0}) < 0.1
    with pytest.raises(CalibrationDataError, match="transformer's too"):
        calibrate([path], pipeline="instant", out_dir=tmp_path / "alone")


def _record(repo: str, kind: str, strength: float, rng, *, long: bool = True) -> dict:
    features = {name: float(rng.normal()) for name in QUERY_FEATURES}
    features["fused_top"] = strength + float(rng.normal(scale=0.3))
    features["long_query"] = features["multi_line"] = float(long)
    features["symbol_query"] = 0.0
    gold = ["a.py"] if kind == "answerable" else []
    hits = [{"path": p, "score": s, "rank": i + 1, "bm25Rank": i + 1, "denseRank": None}
            for i, (p, s) in enumerate([("a.py", 0.03), ("b.py", 0.02), ("c.py", 0.01)])]
    return {"pipeline": "hybrid", "searched": "own", "searched_repo": repo, "kind": kind, "features": features,
            "gold_files": gold, "hits": hits, "pair": "m@256+none"}


def _records_by_shape(rng, per_kind: int, *, describe=None, symbol=None) -> list[dict]:
    """Per repository and kind, `per_kind` issue texts that separate by `fused_top` (as `_record` makes
    them), each followed by a one-line description and a bare name where `describe` / `symbol` give their
    features (a function of the kind's sign: +1 answerable, -1 not_here)."""
    records = []
    for repo in ("r1", "r2", "r3"):
        for kind in ("answerable", "not_here"):
            sign = 1.0 if kind == "answerable" else -1.0
            for _ in range(per_kind):
                records.append(_record(repo, kind, sign, rng))
                for source, features_of in (("describe", describe), ("symbol", symbol)):
                    if features_of is not None:
                        record = _record(repo, kind, 0.0, rng, long=False)
                        record["source"] = source
                        record["features"].update(features_of(sign))
                        records.append(record)
    return records


def _write(path, records: list[dict]):
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_noul_calibrate_measures_leave_one_repository_out_and_writes_provenance(tmp_path):
    rng = np.random.default_rng(3)
    records = [_record(repo, kind, 1.0 if kind == "answerable" else -1.0, rng)
               for repo in ("r1", "r2", "r3") for kind in ("answerable", "not_here") for _ in range(60)]
    path = tmp_path / "per_query.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    written, metrics = calibrate([path], pipeline="hybrid", out_dir=tmp_path / "out", plot=tmp_path / "rel.png")
    assert written.name == "m@256+none.json"
    assert metrics["repositories"] == ["r1", "r2", "r3"] and metrics["queries"] == 360
    assert metrics["auroc"] > 0.95 and metrics["ece"] < 0.1
    saved = json.loads(written.read_text())
    assert saved["provenance"]["leave_one_repository_out"]["auroc"] == metrics["auroc"]
    assert saved["provenance"]["pipeline"] == "hybrid" and saved["provenance"]["fitted_on"] == 360
    styles = metrics["by_query_style"]  # these records have no source: all count as issue texts
    assert list(styles) == ["issue"] and styles["issue"]["queries"] == 360 and styles["issue"]["auroc"] == metrics["auroc"]
    assert (tmp_path / "rel.png").stat().st_size > 1000


def test_project_names_come_from_what_the_tree_says(tmp_path):
    root = tmp_path / "acme-widgets-main"
    (root / "src" / "_widgetry").mkdir(parents=True)
    (root / "src" / "_widgetry" / "__init__.py").write_text("")
    (root / "tests").mkdir()
    (root / "tests" / "__init__.py").write_text("")
    (root / "pyproject.toml").write_text('[project]\nname = "gizmo-kit"\n')
    (root / "web").mkdir()
    (root / "web" / "package.json").write_text('{"name": "not-at-the-root"}')
    (root / "go.mod").write_text("module github.com/acme/gadgetry\n\ngo 1.22\n")
    assert project_names(root) == {"acme", "widgets", "widgetry", "gizmo", "gadgetry"}  # "kit" short, "main" generic
    (root / "pyproject.toml").write_text("this is not toml [")
    assert project_names(root) == {"acme", "widgets", "widgetry", "gadgetry"}  # a broken manifest loses its name only


def test_an_issue_naming_the_project_is_a_feature_of_each_find(polyglot, settings):
    (polyglot / "package.json").write_text('{"name": "polyglot-shop"}')
    issue = ("Uploads fail after a timeout and are never retried. Steps: start the worker, cut the network for "
             "ten seconds, watch the queue. Expected a retry with exponential backoff and a log line per attempt; "
             "got one error and the file was dropped from the queue without notice. Version 2.3 on Debian, "
             "default settings, both with and without the proxy configured.")
    workspace = Workspace(polyglot, settings)
    try:
        workspace.indexer.update()
        features = [workspace.find(q, legs=("bm25",)).features for q in
                    (f"In the shop: {issue}", issue, "where does the shop retry uploads")]
    finally:
        workspace.close()
    assert [(f["long_query"], f["names_project_long"]) for f in features] == [(1.0, 1.0), (1.0, 0.0), (0.0, 0.0)]


def test_each_query_shape_gets_its_own_here_model(tmp_path):
    """Issue texts separate by one feature, one-line descriptions by another pointing the other way: one
    model for both cannot fit them, one per shape can."""
    rng = np.random.default_rng(5)
    records = _records_by_shape(rng, 60, describe=lambda sign: {"fused_top": float(rng.normal(scale=0.3)),
                                                                "dense_top": -sign + float(rng.normal(scale=0.3))})
    path = _write(tmp_path / "per_query.jsonl", records)
    written, metrics = calibrate([path], pipeline="hybrid", out_dir=tmp_path / "out")
    styles = metrics["by_query_style"]
    assert styles["description"]["auroc"] > 0.95 and styles["issue"]["auroc"] > 0.95
    saved = json.loads(written.read_text())
    assert set(saved["here"]) == {"short", "long"}
    calibration = Calibration.from_json(saved)
    one_line = {**records[1]["features"], "dense_top": -2.0}  # here, for a one-line description
    assert calibration.here_probability(one_line) > 0.9
    assert calibration.here_probability({**one_line, "long_query": 1.0, "multi_line": 1.0, "fused_top": -2.0}) < 0.1


def test_a_one_line_query_reads_the_rankers_lead_where_the_ranker_ran(tmp_path):
    """Descriptions whose kinds differ only in the fitted ranker's lead (every other feature noise): the
    short model reads the lead and the cosine of the ranker's first file, the long model keeps its features,
    and a find without a lead (no fitted ranker ran) gets no probability rather than one read from a
    missing value."""
    rng = np.random.default_rng(7)
    records = _records_by_shape(rng, 40, describe=lambda sign: {"fused_top": float(rng.normal(scale=0.3)),
                                                                "rank_lead": 3.0 + sign + float(rng.normal(scale=0.5)),
                                                                "rank_top_cosine": float(rng.normal(0.4, 0.1))})
    path = _write(tmp_path / "per_query.jsonl", records)
    written, metrics = calibrate([path], pipeline="hybrid", out_dir=tmp_path / "out")
    assert metrics["by_query_style"]["description"]["auroc"] > 0.95
    calibration = Calibration.from_json(json.loads(written.read_text()))
    assert calibration.here["short"].features == RANKED_SHORT_FEATURES
    assert "rank_lead" not in calibration.here["long"].features
    one_line = dict(records[1]["features"])
    assert calibration.here_probability({**one_line, "rank_lead": 5.0}) > 0.9
    assert calibration.here_probability({**one_line, "rank_lead": 1.0}) < 0.1
    del one_line["rank_lead"]
    assert calibration.here_probability(one_line) is None
    notes: list[str] = []
    assert apply_calibration(calibration, "m@256+none", ("bm25", "dense"), {**one_line, "dense_top": 0.5}, [],
                             notes) is None
    assert any("no fitted ranker ranked candidates" in note for note in notes)

    for record in records:  # the records of a pair without a fitted ranker: the short model keeps its features
        record["features"].pop("rank_lead", None)
        record["features"].pop("rank_top_cosine", None)
    _write(path, records)
    written, _ = calibrate([path], pipeline="hybrid", out_dir=tmp_path / "out2")
    short = Calibration.from_json(json.loads(written.read_text())).here["short"]
    assert "rank_lead" not in short.features and "fused_top" in short.features


def test_a_bare_symbol_gets_its_own_here_model_or_the_short_one(tmp_path):
    """Bare names separate by how much of the query BM25 matched (an absent name matches none of its whole
    identifier), descriptions by the ranker's lead: each shape's model reads its own evidence, and without
    enough symbol records a name is read by the short model."""
    rng = np.random.default_rng(11)
    records = _records_by_shape(
        rng, 30, describe=lambda sign: {"rank_lead": 3.0 + sign + float(rng.normal(scale=0.5)),
                                        "rank_top_cosine": float(rng.normal(0.4, 0.1))},
        symbol=lambda sign: {"symbol_query": 1.0, "rank_lead": 3.0 + float(rng.normal(scale=0.5)),
                             "rank_top_cosine": float(rng.normal(0.4, 0.1)),
                             "bm25_coverage": 0.5 + 0.4 * sign + float(rng.normal(scale=0.1))})
    path = _write(tmp_path / "per_query.jsonl", records)
    written, metrics = calibrate([path], pipeline="hybrid", out_dir=tmp_path / "out")
    assert metrics["by_query_style"]["symbol"]["auroc"] > 0.95
    assert metrics["by_query_style"]["description"]["auroc"] > 0.95
    calibration = Calibration.from_json(json.loads(written.read_text()))
    assert set(calibration.here) == {"short", "long", "symbol"}
    assert "bm25_coverage" in calibration.here["symbol"].features
    assert "symbol_query" not in calibration.here["symbol"].features
    name = records[2]["features"]
    assert query_shape(name) == "symbol"
    assert calibration.here_probability({**name, "bm25_coverage": 1.0}) > 0.9
    assert calibration.here_probability({**name, "bm25_coverage": 0.0}) < 0.1

    _write(path, [r for r in records if r.get("source") != "symbol"])
    written, _ = calibrate([path], pipeline="hybrid", out_dir=tmp_path / "out2")
    without = Calibration.from_json(json.loads(written.read_text()))
    assert set(without.here) == {"short", "long"}
    assert without.here_probability(name) == without.here_probability({**name, "symbol_query": 0.0})


def test_a_find_with_the_fitted_ranker_reports_its_lead(polyglot, settings):
    workspace = Workspace(polyglot, settings)
    workspace.indexer.update()
    workspace.indexer.embed_pending(workspace.embedder())
    ranked = workspace.find("retry failed uploads with exponential backoff")
    assert ranked.signals["ranking"].startswith("fitted")
    assert ranked.features["rank_lead"] > 0.0  # the first file above the median candidate
    chunks = workspace.find("retry failed uploads with exponential backoff", mode="chunks")
    assert chunks.features["rank_lead"] == ranked.features["rank_lead"]
    # the cosine of the file the ranker put first: its best chunk's, from the stored vectors
    first = [c for c in workspace.store.chunks() if c.path == ranked.hits[0].path]
    query = workspace.embedder().embed_query("retry failed uploads with exponential backoff")
    cosines = [float(np.dot(query, np.asarray(v, dtype=np.float32)))
               for v in workspace.store.vectors(workspace.model_key, [c.hash for c in first])]
    assert ranked.features["rank_top_cosine"] == pytest.approx(max(cosines), abs=1e-4)
    assert ranked.features["rank_top_cosine"] <= ranked.features["dense_top"] + 1e-6
    assert chunks.features["rank_top_cosine"] == ranked.features["rank_top_cosine"]
    unranked = workspace.find("retry failed uploads", rank=False).features
    assert "rank_lead" not in unranked and "rank_top_cosine" not in unranked
    workspace.embed_static()
    assert "static_evidence" not in ranked.features  # the transformer covers every chunk: its evidence is read
    static = workspace.find("retry failed uploads", legs=("bm25", "static")).features  # ranked, no dense leg
    # without the transformer, the dense evidence P(here) reads is the static leg's: its best cosine, and its
    # cosine of the ranker's first file
    assert static["static_evidence"] == 1.0 and "rank_lead" in static
    assert 0.0 < static["rank_top_cosine"] <= static["dense_top"] + 1e-6
    named = workspace.find("upload_with_retry").features
    assert named["symbol_query"] == 1.0 and query_shape(named) == "symbol"
    assert ranked.features["symbol_query"] == 0.0


def test_a_file_fitted_before_the_split_answers_for_every_shape(tmp_path, monkeypatch):
    monkeypatch.setenv("NOUL_CALIBRATION_DIR", str(tmp_path))
    pair = pair_name("old-model@128", "")
    data = _calibration(pair).to_json()
    data["here"] = data["here"]["all"]  # the old layout: one model, not one per shape
    (tmp_path / calibration_file_name(pair)).write_text(json.dumps(data))
    loaded = load_calibration(pair)
    features = {name: 0.5 for name in QUERY_FEATURES}
    short = loaded.here_probability({**features, "long_query": 0.0, "multi_line": 0.0})
    assert 0.0 < short < 1.0 and short == loaded.here_probability({**features, "long_query": 0.0, "multi_line": 0.0})
    assert 0.0 < loaded.here_probability({**features, "long_query": 1.0}) < 1.0


def test_a_query_of_several_lines_is_read_by_the_long_model(polyglot, settings):
    workspace = Workspace(polyglot, settings)
    workspace.indexer.update()
    workspace.indexer.embed_pending(workspace.embedder())
    one_line = workspace.find("retry failed uploads with exponential backoff").features
    pasted = workspace.find("Upload fails\nretry failed uploads with exponential backoff").features
    assert one_line["multi_line"] == 0.0 and query_shape(one_line) == "short"
    assert pasted["multi_line"] == 1.0 and query_shape(pasted) == "long"


def test_row_weights_count_like_repeated_rows():
    rows, labels, _ = synthetic(2000, 4)
    twice = fit_logistic(rows + rows[:500], labels + labels[:500], ("a", "b"), l2=0.0)
    weighted = fit_logistic(rows, labels, ("a", "b"), l2=0.0, weights=[2.0] * 500 + [1.0] * 1500)
    # the standardisation is over the rows given, so compare on the raw scale
    np.testing.assert_allclose(weighted.coef / weighted.scale, twice.coef / twice.scale, rtol=0.05)


def _described(repo: str, kind: str, rng, *, signal: float, noise: float) -> dict:
    record = _record(repo, kind, 0.0, rng, long=False)
    record["source"] = "describe" if repo.startswith("r") else "commit"
    record["repo"] = repo
    sign = 1.0 if kind == "answerable" else -1.0
    record["features"]["dense_top"] = -sign * signal + float(rng.normal(scale=noise))
    return record


def test_extra_records_train_p_here_of_their_shape_and_are_never_scored(tmp_path):
    """Few one-line descriptions carry a weak signal in one feature; many commit messages of other
    repositories carry it strongly. With them as extra records the short model learns the feature's
    direction from them, in proportion to --extra-weight, and no figure is computed on them."""
    rng = np.random.default_rng(11)
    dev = [_described(repo, kind, rng, signal=0.3, noise=1.0)
           for repo in ("r1", "r2", "r3") for kind in ("answerable", "not_here") for _ in range(15)]
    dev += [_record(repo, kind, 1.0 if kind == "answerable" else -1.0, rng)
            for repo in ("r1", "r2", "r3") for kind in ("answerable", "not_here") for _ in range(15)]
    extra = [_described(repo, kind, rng, signal=2.0, noise=0.3)
             for repo in ("x1", "x2") for kind in ("answerable", "not_here") for _ in range(200)]
    records, commits = tmp_path / "dev.jsonl", tmp_path / "commits.jsonl"
    records.write_text("".join(json.dumps(r) + "\n" for r in dev))
    commits.write_text("".join(json.dumps(r) + "\n" for r in extra))

    def dense_weight(path):
        model = Calibration.from_json(json.loads(path.read_text())).here["short"]
        column = list(model.features).index("dense_top")
        return float(model.coef[column] / model.scale[column])

    alone, alone_metrics = calibrate([records], pipeline="hybrid", out_dir=tmp_path / "alone")
    alone_weight = dense_weight(alone)
    with_extra, metrics = calibrate([records], pipeline="hybrid", out_dir=tmp_path / "extra", extra_paths=[commits])
    assert metrics["queries"] == len(dev) and metrics["repositories"] == ["r1", "r2", "r3"]
    saved = json.loads(with_extra.read_text())["provenance"]
    assert saved["extra_records"] == len(extra) and saved["extra_repositories"] == 2
    light, _ = calibrate([records], pipeline="hybrid", out_dir=tmp_path / "light", extra_paths=[commits],
                         extra_weight=0.01)
    heavy, _ = calibrate([records], pipeline="hybrid", out_dir=tmp_path / "heavy", extra_paths=[commits],
                         extra_weight=100.0)
    # the direction is the same; the weight of the extra records moves the fit from the descriptions' own
    # (weak) estimate to the commits' (strong) one
    assert alone_weight < 0 and dense_weight(with_extra) < 0
    assert abs(dense_weight(light) - alone_weight) < abs(dense_weight(heavy) - alone_weight)
    assert dense_weight(heavy) < dense_weight(with_extra) < dense_weight(light)
    assert (metrics["by_query_style"]["description"]["auroc"]
            >= alone_metrics["by_query_style"]["description"]["auroc"] - 0.02)


def test_a_hit_never_reads_more_likely_than_one_shown_above_it():
    """The hit model reads the legs' ranks: a test both legs put first, which the ranker put last, would
    otherwise read more likely than the hits above it."""
    hit = LogisticModel(("dense_inverse_rank",), np.zeros(1), np.ones(1), np.array([3.0]), -2.0)
    calibration = Calibration("pair", {}, hit, {})
    rows = [{"dense_inverse_rank": 0.5}, {"dense_inverse_rank": 0.0}, {"dense_inverse_rank": 1.0}]
    probabilities = calibration.hit_probabilities(rows, here=0.8)
    raw = 0.8 * hit.predict(rows)
    assert probabilities[:2] == pytest.approx(raw[:2].tolist())
    assert probabilities[2] == pytest.approx(probabilities[1]) and raw[2] > raw[0]
