"""The static leg: the bundled static model, the hand-over to the transformer, and `noul train static`."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from noul_lsp.config import ModelSettings, Settings
from noul_lsp.models.registry import DEFAULT_STATIC, resolve_embedder
from noul_lsp.models.static import StaticEmbedder, StaticModelError, StaticSpec, read_safetensors_matrix
from noul_lsp.session.workspace import Workspace

QUERY = "retry failed uploads with exponential backoff"


def _settings(tmp_path: Path, **models) -> Settings:
    return replace(Settings(cache_dir=str(tmp_path / "cache")), models=ModelSettings(**models))


def test_the_bundled_static_model_loads_offline_and_ranks_the_known_file_first(polyglot, tmp_path):
    spec = resolve_embedder(DEFAULT_STATIC, tmp_path)
    assert isinstance(spec, StaticSpec) and spec.dims == 256
    model = StaticEmbedder(spec)
    vectors = model.embed_documents(["def retry(upload):\n    pass", "", "日本語だけ"])
    assert vectors.shape == (3, 256)
    assert abs(float(np.linalg.norm(vectors[0])) - 1.0) < 1e-5 and not vectors[1].any()  # no token: no direction
    workspace = Workspace(polyglot, _settings(tmp_path))
    workspace.indexer.update()
    report = workspace.embed_static()
    assert report is not None and report.embedded > 0
    transformer_texts = workspace.embedder().texts_embedded  # the process shares one embedder
    result = workspace.find(QUERY, legs=("static",))
    assert result.hits[0].path == "src/net/retry.py"
    assert result.hits[0].static_rank == 1 and result.hits[0].dense_rank is None
    assert workspace.embedder().texts_embedded == transformer_texts  # the static leg alone never ran it


def test_every_chunk_is_in_a_dense_leg_while_the_transformer_fills_in(polyglot, tmp_path):
    workspace = Workspace(polyglot, _settings(tmp_path))
    workspace.indexer.update()
    workspace.embed_static()
    chunks = workspace.state().chunks
    before = workspace.find(QUERY)
    assert before.index.static == chunks and before.index.embedded == 0 and before.index.pending == chunks
    assert before.signals["denseLegs"] == f"static {chunks}/{chunks}, transformer 0/{chunks}"
    assert before.hits[0].path == "src/net/retry.py"

    workspace.indexer.embed_pending(workspace.embedder(), limit=chunks // 2)  # the background pass, halfway
    halfway = workspace.find(QUERY)
    assert halfway.index.static == chunks and 0 < halfway.index.embedded < chunks
    arrays = workspace.loaded()
    assert arrays.covered["static"] == arrays.rows  # no chunk missing from the dense side at any moment
    assert 0 < arrays.covered["dense"] < arrays.rows

    assert halfway.signals["denseLegs"].startswith(f"static {chunks}/{chunks}, transformer ")

    workspace.indexer.embed_pending(workspace.embedder())
    done = workspace.find(QUERY)
    assert done.index.static == done.index.embedded == chunks and done.index.pending == 0
    assert done.hits[0].path == "src/net/retry.py"
    # every chunk has its transformer vector: the static leg steps aside, the transformer's files apply
    assert done.signals["denseLegs"] == f"transformer {chunks}/{chunks}"
    assert done.pair == workspace.model_key + "+none" and done.hits[0].static_rank is None
    both = workspace.find(QUERY, static_aside=False)
    assert both.pair == workspace.ranking_key + "+none" and both.hits[0].static_rank is not None


def test_the_static_leg_can_be_turned_off_and_a_missing_one_is_named(polyglot, tmp_path):
    off = Workspace(polyglot, _settings(tmp_path, static="none"))
    assert off.static_key is None and off.ranking_key == off.model_key and off.embed_static() is None
    missing = Workspace(polyglot, _settings(tmp_path, static=str(tmp_path / "nowhere")))
    assert missing.static_key is None and "nowhere" in missing.static_problem
    missing.indexer.update()
    result = missing.find(QUERY, legs=("bm25", "static"))
    assert any(note.startswith("no static leg:") and "nowhere" in note for note in result.notes)
    assert result.hits[0].path == "src/net/retry.py"  # BM25 still answers


def test_a_damaged_static_model_is_a_clear_error(tmp_path):
    folder = tmp_path / "static"
    source = resolve_embedder(DEFAULT_STATIC, tmp_path).directory
    folder.mkdir()
    for name in ("config.json", "tokenizer.json"):
        (folder / name).write_bytes((source / name).read_bytes())
    (folder / "model.safetensors").write_bytes((source / "model.safetensors").read_bytes()[:5000])
    with pytest.raises(StaticModelError, match="cut short"):
        read_safetensors_matrix(folder / "model.safetensors")
    (folder / "model.safetensors").write_bytes(b"\x00" * 3)
    with pytest.raises(StaticModelError, match="not a safetensors file"):
        StaticEmbedder(resolve_embedder(str(folder), tmp_path))
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "retry.py").write_text("def retry_upload():\n    pass\n")
    workspace = Workspace(tmp_path / "ws", _settings(tmp_path, static=str(folder)))
    workspace.indexer.update()
    assert workspace.embed_static() is None and "failed to load" in workspace.static_problem
    result = workspace.find("retry upload", legs=("bm25", "static"))
    assert result.hits[0].path == "retry.py" and any("failed to load" in note for note in result.notes)


def test_code_words_missing_from_the_teacher_are_added_most_frequent_first():
    from noul_lsp.train.static import StaticSettings, code_vocabulary

    texts = ["def getattr_safe(kwargs): return kwargs", "kwargs = middleware(kwargs)", "x = 1"]
    vocabulary = code_vocabulary(texts, {"return", "def"}, StaticSettings(min_count=2))
    assert vocabulary == ["kwargs"]  # `middleware` once, `return` known, `x` too short


@pytest.mark.slow
def test_distilling_and_tuning_a_tiny_teacher_writes_a_model_the_engine_reads(tmp_path):
    pytest.importorskip("model2vec.distill")
    from random_checkpoints import build_checkpoint
    from test_train import make_repository

    from noul_lsp.train.mine import mine
    from noul_lsp.train.pairs import read_pairs
    from noul_lsp.train.static import (
        StaticSettings,
        TuneSettings,
        distil_static,
        teacher_texts,
        teacher_vectors,
        tune_static,
    )

    data = tmp_path / "data"
    mine([make_repository(tmp_path / "acme")], data)
    pairs = read_pairs(data)
    teacher = build_checkpoint(tmp_path / "teacher", kind="embedder", shape="tiny")
    record = distil_static(str(teacher), [p.positive for p in pairs], tmp_path / "static",
                           StaticSettings(min_count=1, pca_dims=16))
    assert record["added_words"] > 0 and record["dims"] == 16
    texts = teacher_texts(pairs, 12)
    assert len(texts) == len(set(texts)) == min(12, len({t for p in pairs for t in (p.query[:300], p.positive, *p.negatives)}))
    cache = tmp_path / "teacher.npz"
    vectors = teacher_vectors(str(teacher), texts, cache, batch=4, log=lambda _: None)
    assert vectors.shape[0] == len(texts) and np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)
    # a run stopped after the first batch resumes from the cache to the same vectors
    with np.load(cache) as stored:
        np.savez(cache, teacher=stored["teacher"], hashes=stored["hashes"][:4], vectors=vectors[:4])
    assert np.allclose(teacher_vectors(str(teacher), texts, cache, batch=4, log=lambda _: None), vectors, atol=1e-5)
    # fewer texts (a prefix of the same order) come from the cache alone, the teacher not loaded again
    lines = []
    assert np.array_equal(teacher_vectors(str(teacher), texts[:6], cache, log=lines.append), vectors[:6]) and not lines
    # another teacher (here: the same weights at another length) computes its own
    assert len(teacher_vectors(str(teacher), texts[:6], cache, max_tokens=16, log=lines.append)) == 6 and lines
    tuned = tune_static(tmp_path / "static", pairs * 32, tmp_path / "tuned",
                        TuneSettings(epochs=2, batch_size=4, hard_negatives=1, held_out=(), regression_batch=4),
                        log=lambda _: None, teacher=(texts, vectors))
    # strict JSON: without held-out repositories there is no figure (a NaN made the file invalid JSON)
    written = json.loads((tmp_path / "tuned" / "tuning.json").read_text(), parse_constant=pytest.fail)
    assert written["held_out_mrr_before"] is None and written["held_out_mrr_after"] is None
    assert tuned["steps"] > 0 and written["pairs"] == len(pairs) * 32 and written["teacher_texts"] == len(texts)
    model = StaticEmbedder(resolve_embedder(str(tmp_path / "tuned"), tmp_path))
    assert model.embed_documents(["def save_upload(path, data): pass"]).shape == (1, 16)


def test_noul_index_gives_every_chunk_a_static_vector_first(polyglot, tmp_path):
    done = subprocess.run([sys.executable, "-m", "noul_lsp", "index", str(polyglot), "--cache-dir",
                           str(tmp_path / "cache")], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    output = " ".join((done.stdout + done.stderr).split())  # rich wraps at 80 columns
    assert "static vectors for" in output and "every chunk has a dense leg now" in output
    assert output.index("static vectors for") < output.index("embedded")


def test_the_ranker_sees_the_static_cosine_and_whether_the_transformer_is_missing(polyglot, tmp_path):
    from noul_lsp.retrieval.analyse import analyse
    from noul_lsp.retrieval.fusion import fuse
    from noul_lsp.retrieval.rank import rank_candidates, untrained_model
    from noul_lsp.retrieval.retrieve import retrieve

    workspace = Workspace(polyglot, _settings(tmp_path))
    workspace.indexer.update()
    workspace.embed_static()
    arrays = workspace.loaded()
    candidate = retrieve(workspace, analyse(QUERY), arrays, legs=("bm25", "static"), include=(), exclude=(),
                         query_vectors={}, stage=lambda name, started: None, notes=[])
    fused = fuse([candidate.bm25], [candidate.dense], [candidate.static], size=200, rrf_k=60)
    assert fused.static_ranking and not fused.dense_ranking
    ranking = rank_candidates(untrained_model(""), [candidate], fused, analyse(QUERY), mode="files", rrf_k=60,
                              record=True)
    rows = {path: dict(zip(ranking.record["features"], row, strict=True))
            for path, row in zip(ranking.record["files"], ranking.record["matrix"], strict=True)}
    retry = rows["src/net/retry.py"]
    assert retry["static_missing"] == 0.0 and retry["dense_missing"] == 1.0
    assert retry["static"] > 0 and retry["static_if_dense_missing"] == retry["static"]
    assert retry["static_gap"] == min(r["static_gap"] for r in rows.values())  # the best static chunk is here


def test_an_answer_at_once_gives_the_static_leg_its_budget_and_no_more(polyglot, tmp_path):
    from noul_lsp.cli import _update

    workspace = Workspace(polyglot, _settings(tmp_path))
    _update(workspace, embed=False, quiet=True, static_seconds=0.0)  # spent before the first batch
    state = workspace.state()
    assert state.static == 0 and state.embedded == 0
    _update(workspace, embed=False, quiet=True, static_seconds=60.0)
    state = workspace.state()
    assert state.static == state.chunks > 0 and state.embedded == 0  # the transformer still waits
