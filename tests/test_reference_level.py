"""A workspace's own level of P(here)'s evidence (retrieval/reference.py): measured with the reference
queries, read by the short shape's model, kept beside the index."""

import json
import time

import numpy as np
import pytest
from test_calibration import _records_by_shape, _write

from noul_lsp.bench.calibration import _fit_here, calibrate
from noul_lsp.retrieval import reference
from noul_lsp.models.registry import fitted_file_name
from noul_lsp.retrieval.calibrate import (
    HIT_FEATURES,
    INSTANT,
    RANKED_SHORT_FEATURES,
    UNLEVELLED,
    Calibration,
    calibration_file_name,
    fit_logistic,
    pair_name,
    query_shape,
)
from noul_lsp.retrieval.reference import (
    LEVELLED,
    LEVELLED_COLUMNS,
    REFERENCE_QUERIES,
    SHORT_FEATURES_WITH_LEVEL,
    WorkspaceLevel,
)
from noul_lsp.session.background import BackgroundIndexer
from noul_lsp.session.workspace import LEVELS_FILE, Workspace


def test_a_level_reads_each_feature_as_its_distance_from_the_median_in_spreads():
    answers = [{"rank_lead": lead, "dense_top": 0.3} for lead in (1.0, 2.0, 3.0, 4.0, 5.0)]
    level = WorkspaceLevel.measure(answers, chunks=1000)
    assert level.medians == {"rank_lead": 3.0}  # only what is read against the level
    assert level.spreads["rank_lead"] == pytest.approx(np.std([1, 2, 3, 4, 5]))
    levelled = level.levelled({"rank_lead": 3.0 + 2 * level.spreads["rank_lead"], "dense_top": 0.3})
    assert levelled == {"rank_lead_z": pytest.approx(2.0)}
    flat = WorkspaceLevel.measure([{"rank_lead": 2.0}] * 5, chunks=1000)
    assert flat.levelled({"rank_lead": 2.0})["rank_lead_z"] == 0.0  # no spread: not a division by zero
    assert "rank_lead_z" not in level.levelled({"dense_top": 0.5})  # no lead (no fitted ranker): none made up
    assert level.fresh(1040) and not level.fresh(1060) and not level.fresh(900)
    assert WorkspaceLevel.from_json(level.to_json()) == level
    written = json.loads(level.to_json())
    for damaged in ("", "{", "[]", '{"queries": 40}', json.dumps({**written, "queries": 3}),
                    json.dumps({**written, "medians": {**level.medians, "rank_lead": float("nan")}}),
                    json.dumps({**written, "spreads": {**level.spreads, "rank_lead": -1.0}}),
                    json.dumps({**written, "medians": {"dense_top": 0.3}}),  # not what is levelled now
                    json.dumps({**written, "chunks": "many"})):
        assert WorkspaceLevel.from_json(damaged) is None


def test_a_one_line_description_reads_the_workspace_level_where_the_records_carry_it(tmp_path):
    """Descriptions whose kinds differ only in the lead's distance from their workspace's level (each
    repository's own level moves the raw lead): the short model reads the levelled columns, and its
    unlevelled twin answers a find that has no level."""
    rng = np.random.default_rng(5)
    shift = {"r1": -2.0, "r2": 0.0, "r3": 2.0}
    records = _records_by_shape(rng, 40, describe=lambda sign: {"rank_lead_z": sign + float(rng.normal(scale=0.3)),
                                                                "rank_top_cosine": float(rng.normal())})
    for record in records:
        features = record["features"]
        if "rank_lead_z" in features:
            features["rank_lead"] = 3.0 + shift[record["searched_repo"]] + features["rank_lead_z"]
    written, metrics = calibrate([_write(tmp_path / "per_query.jsonl", records)], pipeline="hybrid",
                                 out_dir=tmp_path / "out")
    assert metrics["by_query_style"]["description"]["auroc"] > 0.95
    calibration = Calibration.from_json(json.loads(written.read_text()))
    assert calibration.here["short"].features == SHORT_FEATURES_WITH_LEVEL
    assert calibration.here["short" + UNLEVELLED].features == RANKED_SHORT_FEATURES
    one_line = dict(records[1]["features"])
    assert query_shape(one_line) == "short" and calibration.reads_level(one_line)
    assert calibration.here_probability({**one_line, "rank_lead_z": 1.5}) > 0.9
    assert calibration.here_probability({**one_line, "rank_lead_z": -1.5}) < 0.1
    unlevelled = {k: v for k, v in one_line.items() if k not in LEVELLED_COLUMNS}
    assert calibration.here_probability(unlevelled) is not None  # several roots, an organisation: the twin
    assert calibration.here_probability({k: v for k, v in unlevelled.items() if k != "rank_lead"}) is None
    assert calibration.here_probability({k: v for k, v in one_line.items() if k != "rank_top_cosine"}) is None
    assert not calibration.reads_level(records[0]["features"])  # an issue text: its own model, no level
    name = {**one_line, "symbol_query": 1.0}  # a bare name, and no symbol model: read as a description
    assert query_shape(name) == "symbol" and calibration.reads_level(name)
    assert calibration.here_probability(name) == calibration.here_probability(one_line)
    unlevelled_name = {k: v for k, v in name.items() if k not in LEVELLED_COLUMNS}
    assert calibration.here_probability(unlevelled_name) == calibration.here_probability(unlevelled)


def _levelled_calibration(pair: str) -> Calibration:
    rng = np.random.default_rng(2)
    rows = [{name: float(rng.normal()) for name in (*SHORT_FEATURES_WITH_LEVEL, *RANKED_SHORT_FEATURES,
                                                    *HIT_FEATURES)} for _ in range(200)]
    labels = [int(row["rank_lead_z"] > 0) for row in rows]
    here = {"short": fit_logistic(rows, labels, SHORT_FEATURES_WITH_LEVEL),
            "short" + UNLEVELLED: fit_logistic(rows, labels, RANKED_SHORT_FEATURES),
            "all": fit_logistic(rows, labels, RANKED_SHORT_FEATURES)}
    return Calibration(pair, here, fit_logistic(rows, labels, HIT_FEATURES), {"data": "synthetic"})


def test_the_engine_measures_the_level_once_and_keeps_it_beside_the_index(polyglot, settings, tmp_path,
                                                                          monkeypatch):
    monkeypatch.setenv("NOUL_CALIBRATION_DIR", str(tmp_path / "cal"))
    workspace = Workspace(polyglot, settings)
    workspace.indexer.update()
    workspace.indexer.embed_pending(workspace.embedder())
    (tmp_path / "cal").mkdir()
    query = "retry failed uploads with exponential backoff"
    pair = workspace.find(query).pair
    (tmp_path / "cal" / calibration_file_name(pair)).write_text(json.dumps(_levelled_calibration(pair).to_json()))

    small = Workspace(polyglot, settings).find(query)  # 39 chunks: read by the unlevelled twin, no level
    assert not LEVELLED_COLUMNS & set(small.features) and 0.0 <= small.here_probability <= 1.0
    assert not (workspace.store.directory / LEVELS_FILE).exists()

    monkeypatch.setattr(reference, "MIN_CHUNKS", 0)  # the fixture stands for a workspace of some size
    first = Workspace(polyglot, settings).find(query)
    assert set(SHORT_FEATURES_WITH_LEVEL) <= set(first.features) and "level" in first.timings
    assert 0.0 <= first.here_probability <= 1.0
    stored = json.loads((workspace.store.directory / LEVELS_FILE).read_text())
    assert len(stored) == 1 and WorkspaceLevel.from_json(next(iter(stored.values()))) is not None

    reopened = Workspace(polyglot, settings)

    def never(text: str) -> dict:
        raise AssertionError(f"measured again: {text}")

    assert reopened.here_level(next(iter(stored)), reopened.loaded().live_rows, never).medians == WorkspaceLevel.from_json(
        next(iter(stored.values()))).medians
    again = reopened.find(query)  # read from beside the index: the same level, the same probability
    assert again.features["rank_lead_z"] == pytest.approx(first.features["rank_lead_z"])
    assert again.here_probability == pytest.approx(first.here_probability)
    assert "rank_lead_z" not in reopened.find("a traceback\nof several lines").features  # not the short shape

    (workspace.store.directory / LEVELS_FILE).unlink()
    preparing = Workspace(polyglot, settings)
    preparing.prepare_level()  # what the end of an indexing pass does: the level is there before a find
    assert json.loads((workspace.store.directory / LEVELS_FILE).read_text()) == stored
    assert preparing.here_level(next(iter(stored)), preparing.loaded().live_rows, never) == WorkspaceLevel.from_json(next(iter(stored.values())))
    # a branch switch moved the chunk count past the level's 5%: while the index catches up (stale) the kept
    # level stands (the first finds each measured it again inline, 1-3 s); once up to date it is measured
    moved = 2 * preparing.loaded().live_rows
    assert preparing.here_level(next(iter(stored)), moved, never, stale=True) == WorkspaceLevel.from_json(
        next(iter(stored.values())))
    with pytest.raises(AssertionError, match="measured again"):
        preparing.here_level(next(iter(stored)), moved, never)

    (workspace.store.directory / LEVELS_FILE).write_text("{ damaged")
    damaged = Workspace(polyglot, settings).find(query)  # measured again, the find loses nothing
    assert damaged.features["rank_lead_z"] == pytest.approx(first.features["rank_lead_z"])
    assert len(REFERENCE_QUERIES) >= 30 and set(LEVELLED) <= set(first.features)


def test_the_background_indexer_measures_the_level_after_it_goes_idle(polyglot, settings, tmp_path, monkeypatch):
    """The level is measured once the index is complete, and only then: `idle` (what a find reads as "the
    index is being updated") is set before it, since measuring changes nothing in the index. (The static
    leg's level, of the finds while the transformer fills in, is measured before: the next test.)"""
    monkeypatch.setenv("NOUL_CALIBRATION_DIR", str(tmp_path / "cal"))
    monkeypatch.setattr(reference, "MIN_CHUNKS", 0)  # the fixture stands for a workspace of some size
    workspace = Workspace(polyglot, settings)
    (tmp_path / "cal").mkdir()
    pair = workspace.model_pair
    (tmp_path / "cal" / calibration_file_name(pair)).write_text(json.dumps(_levelled_calibration(pair).to_json()))
    levels = workspace.store.directory / LEVELS_FILE
    phases: list[str] = []
    measured_when_idle: list[bool] = []

    def transformers_level() -> str | None:
        kept = json.loads(levels.read_text()) if levels.exists() else {}
        return next((level for key, level in kept.items() if "static evidence" not in key), None)

    def progress(update) -> None:  # called on the indexer's thread, in order
        phases.append(update.phase)
        if update.phase == "idle":
            measured_when_idle.append(transformers_level() is not None)

    indexer = BackgroundIndexer(on_progress=progress)
    try:
        indexer.add(workspace)
        indexer.scan(workspace.root)
        deadline = time.monotonic() + 120
        while not (indexer.idle.is_set() and transformers_level() is not None):
            assert time.monotonic() < deadline, phases
            time.sleep(0.1)
        assert workspace.root in indexer.rescanned
        indexer.remove(workspace.root)  # closed and opened again, a root waits for its own first pass again
        assert workspace.root not in indexer.rescanned
    finally:
        indexer.stop()
    assert "embedding" in phases and phases[-1] == "idle" and measured_when_idle == [False]
    assert WorkspaceLevel.from_json(transformers_level()) is not None


def test_an_extra_record_without_a_column_trains_only_the_models_that_read_what_it_has():
    """Commit messages asked of a workspace under MIN_CHUNKS carry no level, and those of an older run no
    first-file cosine: they train the models they can, and never switch the levelled fit off."""
    rng = np.random.default_rng(9)

    def record(repo: str, kind: str, **missing: bool) -> dict:
        sign = 1.0 if kind == "answerable" else -1.0
        features = {"rank_lead_z": sign + float(rng.normal(scale=0.5)), "rank_lead": 3 + sign,
                    "rank_top_cosine": 0.4 + 0.1 * sign + float(rng.normal(scale=0.05)), "dense_top": 0.5,
                    "long_query": 0.0, "multi_line": 0.0, "symbol_query": 0.0}
        for name in missing:
            features.pop(name)
        return {"kind": kind, "searched_repo": repo, "source": "describe", "features": features}

    records = [record(repo, kind) for repo in ("r1", "r2") for kind in ("answerable", "not_here") for _ in range(20)]
    extra = [record("e", kind, **({"rank_lead_z": True} if i % 2 else {"rank_top_cosine": True, "rank_lead_z": True}
                                  if i % 3 == 0 else {}))
             for kind in ("answerable", "not_here") for i in range(30)]
    models = _fit_here(records, extra)
    assert models["short"].features == SHORT_FEATURES_WITH_LEVEL
    assert models["short" + UNLEVELLED].features == RANKED_SHORT_FEATURES
    without_level = _fit_here(records, [r for r in extra if "rank_lead_z" not in r["features"]])
    assert without_level["short"].features == SHORT_FEATURES_WITH_LEVEL  # the main records decide


def _instant_levelled_calibration(pair: str) -> Calibration:
    """`_levelled_calibration` with the same models for finds that read the static leg's evidence."""
    calibration = _levelled_calibration(pair)
    calibration.here |= {INSTANT + name: model for name, model in calibration.here.items()}
    calibration.hit_instant = calibration.hit
    return calibration


def test_while_the_transformer_fills_in_a_find_reads_the_static_legs_own_level(polyglot, settings, tmp_path,
                                                                               monkeypatch):
    """The static pair's ranker has a lead of its own units, so a find with the static leg's evidence is read
    against a level measured with such finds, kept apart from the transformer's; a ranker refitted since a
    level was measured (a new release) measures it again."""
    monkeypatch.setenv("NOUL_CALIBRATION_DIR", str(tmp_path / "cal"))
    monkeypatch.setattr(reference, "MIN_CHUNKS", 0)  # the fixture stands for a workspace of some size
    (tmp_path / "cal").mkdir()
    workspace = Workspace(polyglot, settings)
    workspace.indexer.update()
    workspace.embed_static()  # the transformer has embedded nothing
    query = "retry failed uploads with exponential backoff"
    pair = workspace.find(query).pair
    (tmp_path / "cal" / calibration_file_name(pair)).write_text(json.dumps(_instant_levelled_calibration(pair).to_json()))
    filling = Workspace(polyglot, settings).find(query)
    assert filling.features["static_evidence"] == 1.0 and "level" in filling.timings
    assert set(SHORT_FEATURES_WITH_LEVEL) <= set(filling.features) and 0.0 <= filling.here_probability <= 1.0
    levels = workspace.store.directory / LEVELS_FILE
    (static_key,) = json.loads(levels.read_text())
    assert static_key.endswith(workspace.rank_model(workspace.ranking_key_for(static=True)).fingerprint())
    assert "static evidence" in static_key
    static_level = json.loads(levels.read_text())[static_key]

    workspace.indexer.embed_pending(workspace.embedder())  # the transformer covers every chunk: its own pair
    covered = Workspace(polyglot, settings)
    full_pair = covered.find(query).pair
    (tmp_path / "cal" / calibration_file_name(full_pair)).write_text(
        json.dumps(_levelled_calibration(full_pair).to_json()))
    full = covered.find(query)
    assert "static_evidence" not in full.features and "rank_lead_z" in full.features
    stored = json.loads(levels.read_text())
    assert len(stored) == 2 and stored[static_key] == static_level
    assert not any("static evidence" in key for key in stored if key != static_key)

    ranker = covered.rank_model(covered.ranking_key_for(static=False))  # refitted: the same features, other weights
    monkeypatch.setenv("NOUL_RANKING_DIR", str(tmp_path / "rankers"))
    (tmp_path / "rankers").mkdir()
    (tmp_path / "rankers" / fitted_file_name(ranker.embedder)).write_text(
        json.dumps({**ranker.to_json(), "coef": (2 * ranker.coef).tolist()}))
    refitted = Workspace(polyglot, settings).find(query)
    assert "level" in refitted.timings and len(json.loads(levels.read_text())) == 3


def test_the_background_indexer_measures_the_static_legs_level_before_the_transformer_fills_in(
        polyglot, settings, tmp_path, monkeypatch):
    """On opening a workspace the transformer takes minutes, the static leg seconds: the static leg's level is
    measured as soon as it covers every chunk, so the first description asked meanwhile does not wait for it."""
    monkeypatch.setenv("NOUL_CALIBRATION_DIR", str(tmp_path / "cal"))
    monkeypatch.setattr(reference, "MIN_CHUNKS", 0)  # the fixture stands for a workspace of some size
    workspace = Workspace(polyglot, settings)
    (tmp_path / "cal").mkdir()
    static_pair = pair_name(workspace.ranking_key_for(static=True), "")
    (tmp_path / "cal" / calibration_file_name(static_pair)).write_text(
        json.dumps(_instant_levelled_calibration(static_pair).to_json()))
    levels = workspace.store.directory / LEVELS_FILE
    kept_when_embedding: list[list[str]] = []

    def progress(update) -> None:  # called on the indexer's thread, in order
        if update.phase == "embedding" and not kept_when_embedding:
            kept_when_embedding.append(list(json.loads(levels.read_text())) if levels.exists() else [])

    indexer = BackgroundIndexer(on_progress=progress)
    try:
        indexer.add(workspace)
        indexer.scan(workspace.root)
        deadline = time.monotonic() + 120
        while not indexer.idle.is_set():
            assert time.monotonic() < deadline
            time.sleep(0.1)
    finally:
        indexer.stop()
    (keys,) = kept_when_embedding
    assert len(keys) == 1 and "static evidence" in keys[0]
