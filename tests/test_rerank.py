"""The rerank stage and model export, on tiny random-weight checkpoints of the real architectures built at
test time (BertForSequenceClassification as ms-marco-MiniLM, XLMRobertaForSequenceClassification as
bge-reranker): ONNX must score what torch scores, int8 must be checked, and the engine must order its short
list by the cross-encoder and say what ran where."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="the export extra (torch==2.13.0) is part of the test install")
transformers = pytest.importorskip("transformers")

from random_checkpoints import build_checkpoint  # noqa: E402

from noul_lsp.cli import main as cli  # noqa: E402
from noul_lsp.config import parse_settings  # noqa: E402
from noul_lsp.models.choice import workspace_choice  # noqa: E402
from noul_lsp.models.cross_encoder import CrossEncoder  # noqa: E402
from noul_lsp.models.embedder import OnnxEmbedder  # noqa: E402
from noul_lsp.models.export import INT8_FILE, ExportError, export_model  # noqa: E402
from noul_lsp.models.registry import (  # noqa: E402
    ModelMissing,
    local_model_directory,
    reranker_from_directory,
    resolve_reranker,
    spec_from_directory,
)
from noul_lsp.retrieval.calibrate import pair_name  # noqa: E402
from noul_lsp.retrieval.rerank import shortlist  # noqa: E402
from noul_lsp.session.workspace import Workspace  # noqa: E402

PAIRS = [("retry failed uploads with backoff", "def upload(data):\n    for attempt in range(5):\n        sleep(2 ** attempt)"),
         ("parse the config file", "class ConfigParser:\n    def read(self, path): ..."),
         ("a very long query " * 40, "x = 1"),
         ("where are cookies kept", "cookies = RequestsCookieJar()\nsession.cookies.update(cookies)")]


def _torch_logits(checkpoint: Path, pairs) -> np.ndarray:
    """The reference: transformers' own model and a tokenizer loaded from the same tokenizer.json."""
    from tokenizers import Tokenizer

    model = transformers.AutoModelForSequenceClassification.from_pretrained(str(checkpoint)).eval()
    tokenizer = Tokenizer.from_file(str(checkpoint / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.enable_truncation(256, strategy="longest_first")
    scores = []
    for query, document in pairs:  # one at a time: no padding in the reference
        encoding = tokenizer.encode(query, document)
        inputs = {"input_ids": torch.tensor([encoding.ids]), "attention_mask": torch.tensor([encoding.attention_mask])}
        if model.config.type_vocab_size > 1:
            inputs["token_type_ids"] = torch.tensor([encoding.type_ids])
        with torch.no_grad():
            scores.append(float(model(**inputs).logits[0, 0]))
    return np.array(scores)


@pytest.fixture(scope="module")
def exported(tmp_path_factory) -> dict[str, tuple[Path, Path]]:
    """(checkpoint, ONNX export) of a tiny BERT and a tiny XLM-R cross-encoder, fp32 without fusion."""
    base = tmp_path_factory.mktemp("rerankers")
    made = {}
    for architecture in ("bert", "xlm-roberta"):
        checkpoint = build_checkpoint(base / architecture, architecture=architecture, kind="reranker")
        out = base / f"{architecture}-onnx"
        export_model(checkpoint, out, optimize=False)
        made[architecture] = (checkpoint, out)
    return made


@pytest.mark.parametrize("architecture", ["bert", "xlm-roberta"])
def test_onnx_cross_encoder_scores_equal_torch(exported, architecture):
    checkpoint, out = exported[architecture]
    report = json.loads((out / "export.json").read_text())
    assert report["kind"] == "reranker" and report["fp32_max_abs_diff"] <= 1e-4
    encoder = CrossEncoder(reranker_from_directory(out), max_length=256, batch_size=3, use_gpu=False)
    # batched and padded (the long query forces truncation) against one-by-one torch
    one_by_one = np.concatenate([encoder.score(query, [document]) for query, document in PAIRS])
    np.testing.assert_allclose(one_by_one, _torch_logits(checkpoint, PAIRS), atol=1e-4)
    batched = encoder.score(PAIRS[0][0], [document for _, document in PAIRS])  # padded, sorted by length
    reference = _torch_logits(checkpoint, [(PAIRS[0][0], d) for _, d in PAIRS])
    np.testing.assert_allclose(batched, reference, atol=1e-4)


def test_xlm_roberta_reranker_knows_its_position_limit(exported):
    _, out = exported["xlm-roberta"]
    assert reranker_from_directory(out).max_tokens == 512  # 514 positions minus RoBERTa's offset


def test_embedder_export_matches_torch_mean_pooling(tmp_path):
    checkpoint = build_checkpoint(tmp_path / "enc", architecture="bert", kind="embedder")
    out = tmp_path / "enc-onnx"
    report = export_model(checkpoint, out)
    assert report.kind == "embedder" and report.optimized
    texts = ["def retry(): pass", "class Session:\n    cookies = {}"]
    vectors = OnnxEmbedder(spec_from_directory(out), token_budget=64, use_gpu=False).embed_documents(texts)
    model = transformers.AutoModel.from_pretrained(str(checkpoint)).eval()
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(out / "tokenizer.json"))
    tokenizer.no_padding()  # the shipped tokenizer.json pads to 128
    for text, vector in zip(texts, vectors, strict=True):
        ids = torch.tensor([tokenizer.encode(text).ids])
        with torch.no_grad():
            hidden = model(input_ids=ids, attention_mask=torch.ones_like(ids)).last_hidden_state[0].mean(0).numpy()
        np.testing.assert_allclose(vector, hidden / np.linalg.norm(hidden), atol=1e-4)


def test_int8_is_kept_only_when_it_agrees(tmp_path):
    checkpoint = build_checkpoint(tmp_path / "rr", architecture="bert", kind="reranker")
    accepted = export_model(checkpoint, tmp_path / "lenient", int8=True, min_score_agreement=-1.0,
                            min_top1_agreement=0.0)
    assert accepted.int8.accepted and (tmp_path / "lenient" / INT8_FILE).is_file()
    assert -1.0 <= accepted.int8.score_agreement <= 1.0 and 0.0 <= accepted.int8.overlap_at_5 <= 1.0
    assert reranker_from_directory(tmp_path / "lenient").onnx_path.name == INT8_FILE  # the accepted int8 runs
    export_model(checkpoint, tmp_path / "lenient", optimize=False)  # a new fp32 export: the old int8 goes
    assert reranker_from_directory(tmp_path / "lenient").onnx_path.name == "model.onnx"
    # random weights give near-equal logits that int8 noise reorders: a real drift, refused by default
    with pytest.raises(ExportError, match="int8 refused: it drifts from fp32"):
        export_model(checkpoint, tmp_path / "strict", int8=True)
    assert not (tmp_path / "strict" / INT8_FILE).exists()
    assert (tmp_path / "strict" / "model.onnx").is_file()  # the fp32 export stays usable
    export_model(checkpoint, tmp_path / "strict", optimize=False)  # and can be exported again over


def test_an_export_writes_over_an_export_of_its_kind_only(tmp_path):
    """`--out` naming a folder of something else (a static model's, another kind's export) was overwritten
    with no word: refused now; an earlier export of the same kind is written over (a re-export)."""
    reranker = build_checkpoint(tmp_path / "rr", architecture="bert", kind="reranker")
    embedder = build_checkpoint(tmp_path / "enc", architecture="bert", kind="embedder")
    export_model(reranker, tmp_path / "ours-rr", optimize=False)
    export_model(reranker, tmp_path / "ours-rr", optimize=False)
    with pytest.raises(ExportError, match="holds an exported reranker: give a new folder for this embedder"):
        export_model(embedder, tmp_path / "ours-rr", optimize=False)
    static = tmp_path / "our-static"
    static.mkdir()
    (static / "model.safetensors").write_bytes(b"table")
    with pytest.raises(ExportError, match="holds files no export wrote"):
        export_model(embedder, static, optimize=False)
    assert (static / "model.safetensors").read_bytes() == b"table" and len(list(static.iterdir())) == 1
    export_model(embedder, tmp_path / "empty-is-fine", optimize=False)


def test_export_needs_a_checkpoint(tmp_path):
    with pytest.raises(ExportError, match="no config.json"):
        export_model(tmp_path, tmp_path / "out")


def test_shortlist_caps_chunks_per_file():
    ranking = ["a1", "a2", "a3", "b1", "a4", "c1", "b2"]
    assert shortlist(ranking, lambda key: key[0], 4) == ["a1", "a2", "a3", "b1"]
    assert shortlist(ranking, lambda key: key[0], 4, per_file=1) == ["a1", "b1", "c1"]
    assert shortlist(ranking, lambda key: key[0], 4, per_file=2) == ["a1", "a2", "b1", "c1"]


def _settings(cache: Path, per_file: int = 1, **models):
    settings, problems = parse_settings({"cache_dir": str(cache), "models": {"use_gpu": False, **models},
                                         "search": {"rerank_shortlist": 6, "rerank_per_file": per_file}})
    assert not problems
    return settings


def test_find_orders_the_short_list_by_the_cross_encoder(polyglot, tmp_path, exported):
    _, out = exported["bert"]
    workspace = Workspace(polyglot, _settings(tmp_path / "cache", per_file=0, reranker=str(out)))
    try:
        workspace.indexer.update()
        workspace.indexer.embed_pending(workspace.embedder())
        result = workspace.find("retry failed uploads with backoff", mode="chunks", limit=10)
        baseline = workspace.find("retry failed uploads with backoff", mode="chunks", limit=10, rerank=False)
    finally:
        workspace.close()
    diverse = Workspace(polyglot, _settings(tmp_path / "cache", per_file=1, reranker=str(out)))
    try:
        one_per_file = [h for h in diverse.find("retry failed uploads with backoff", mode="chunks", limit=30).hits
                        if h.rerank_score is not None]
    finally:
        diverse.close()
    assert len(one_per_file) == 6 and len({h.path for h in one_per_file}) == 6
    assert result.signals["rerank"].startswith("local:") and result.signals["rerankDevice"] == "cpu"
    assert result.timings["rerank"] > 0
    reranked = [h for h in result.hits if h.rerank_score is not None]
    assert len(reranked) == 6
    assert result.hits[:6] == reranked  # the short list comes first, ordered by the cross-encoder
    logits = [h.rerank_score for h in reranked]
    assert logits == sorted(logits, reverse=True)
    assert {(h.path, h.start_line) for h in reranked} == {(h.path, h.start_line) for h in baseline.hits[:6]}
    assert all(h.rerank_score is None for h in baseline.hits) and "rerank" not in baseline.timings
    # each answer names the pair it was made with, and is calibrated for that pair only
    assert result.pair == pair_name(workspace.model_key, result.signals["rerank"]) and result.here_probability is None
    assert baseline.pair == pair_name(workspace.model_key, "") and baseline.here_probability is not None
    assert result.report()["results"][0]["signals"]["rerankScore"] == pytest.approx(logits[0], abs=1e-5)
    assert result.report()["signals"]["rerank"] == result.signals["rerank"]


def test_a_missing_reranker_is_skipped_and_said(polyglot, tmp_path):
    workspace = Workspace(polyglot, _settings(tmp_path / "cache", reranker="cross-encoder/ms-marco-MiniLM-L-6-v2"))
    try:
        workspace.indexer.update()
        result = workspace.find("retry failed uploads", limit=3)
    finally:
        workspace.close()
    assert result.hits and result.signals["rerank"] == "skipped" and "rerank" not in result.timings
    assert any("rerank skipped" in n and "noul models pull cross-encoder/ms-marco-MiniLM-L-6-v2" in n
               for n in result.notes)


def test_pull_goes_through_the_hub_client_from_a_local_hub_cache(tmp_path, monkeypatch, exported):
    """The real huggingface_hub download path, served offline from a hub cache laid out on disk."""
    import huggingface_hub.constants

    from noul_lsp.models.hub import pull

    _, out = exported["bert"]
    repo = "cross-encoder/ms-marco-MiniLM-L-6-v2"
    hub_cache = tmp_path / "hub"
    revision = "0123456789abcdef0123456789abcdef01234567"
    snapshot = hub_cache / ("models--" + repo.replace("/", "--")) / "snapshots" / revision
    (snapshot / "onnx").mkdir(parents=True)
    shutil.copyfile(out / "model.onnx", snapshot / "onnx" / "model.onnx")
    for name in ("tokenizer.json", "config.json"):
        shutil.copyfile(out / name, snapshot / name)
    (snapshot.parents[1] / "refs").mkdir()
    (snapshot.parents[1] / "refs" / "main").write_text(revision)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(hub_cache))
    monkeypatch.setenv("HF_HUB_CACHE", str(hub_cache))
    cache = tmp_path / "noul"
    with pytest.raises(ModelMissing, match="not downloaded"):
        resolve_reranker("ms-marco-minilm-l-6-v2", cache)
    target = pull("ms-marco-minilm-l-6-v2", cache)
    assert target == local_model_directory(cache, repo)
    spec = resolve_reranker("ms-marco-minilm-l-6-v2", cache)
    assert spec.model_id == repo and spec.onnx_path == target / "onnx" / "model.onnx"


def test_models_use_sets_the_workspace_models_and_never_mixes_vectors(polyglot, tmp_path, exported, capsys):
    _, reranker = exported["bert"]
    cache = tmp_path / "cache"
    embedder = tmp_path / "tiny-embedder"
    export_model(build_checkpoint(tmp_path / "enc", kind="embedder"), embedder)
    common = ["--cache-dir", str(cache)]
    assert cli(["models", "use", str(reranker), "--path", str(polyglot), *common]) == 0
    choice = workspace_choice(polyglot, cache)
    assert choice.reranker == str(reranker) and choice.embedder == ""
    settings = _settings(cache)
    default = Workspace(polyglot, settings)
    try:
        default.indexer.update()
        default.indexer.embed_pending(default.embedder())
        first_key = default.model_key
        assert default.find("retry failed uploads", limit=3).signals["rerankDevice"] == "cpu"
    finally:
        default.close()

    assert cli(["models", "use", str(embedder), "--path", str(polyglot), *common]) == 0
    switched = Workspace(polyglot, settings)
    try:
        assert switched.model_key != first_key and switched.model_key.startswith("local:model.onnx#")
        switched.corpus.sync()
        assert switched.corpus.embedded_chunks == 0  # the first model's vectors are not this model's
        result = switched.find("retry failed uploads", limit=3)
        assert result.index.embedded == 0 and any("lexical only" in n for n in result.notes)
        assert switched.store.missing_vectors(first_key, [r.hash for r in switched.store.chunks()]) == set()
    finally:
        switched.close()

    assert cli(["models", "use", "default", "none", "--path", str(polyglot), *common]) == 0
    reset = Workspace(polyglot, settings)
    try:
        assert reset.model_key == first_key and reset.reranker_name == ""
        assert reset.find("retry failed uploads", limit=3).signals["rerank"] == "off"
    finally:
        reset.close()
    capsys.readouterr()
    assert cli(["models", "use", "BAAI/bge-reranker-base", "--path", str(polyglot), *common]) == 1
    assert "noul models pull BAAI/bge-reranker-base" in capsys.readouterr().err


def test_cli_export_writes_a_report(tmp_path, capsys):
    checkpoint = build_checkpoint(tmp_path / "ckpt", architecture="xlm-roberta", kind="reranker")
    assert cli(["models", "export", str(checkpoint), "--out", str(tmp_path / "out")]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["kind"] == "reranker" and report["architecture"] == "XLMRobertaForSequenceClassification"
    assert (tmp_path / "out" / "model.onnx").is_file() and os.path.getsize(tmp_path / "out" / "model.onnx") > 0


def test_bench_rerank_pipeline_and_short_list_recall(tmp_path, exported):
    from test_bench_e2e import make_repository

    mirrors, first, second = make_repository(tmp_path)
    rows = [{"id": "q1", "source": "swebench-lite", "repo": "acme/tools", "commit": second, "commit_date": "2024-02-01",
             "query": "uploads are not retried and invoices are written wrong", "kind": "answerable", "tags": ["multi"],
             "gold_files": ["tools/retry.py", "tools/export.py"], "gold_lines": {}}]
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    arguments = ["bench", "--labels", str(labels), "--mirrors", str(mirrors), "--work", str(tmp_path / "work"),
                 "--out", str(tmp_path / "out"), "--pipelines", "hybrid,rerank"]
    assert cli(arguments) == 2  # the rerank pipeline without a cross-encoder is a usage error
    assert cli([*arguments, "--reranker", str(exported["bert"][1])]) == 0
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["results"]["rerank"]["latency_ms"]["rerank"]["p50"] > 0
    assert "rerank" not in summary["results"]["hybrid"]["latency_ms"]
    recall = summary["results"]["hybrid"]["shortlist_gold_recall"]["labels"]
    assert recall["multi"]["n"] == 1 and recall["all"]["plain"] == 1.0  # 4 chunks: every file reaches the list
    records = {r["pipeline"]: r for r in map(json.loads, (tmp_path / "out" / "per_query.jsonl").read_text().splitlines())}
    assert set(records["hybrid"]["shortlists"]) == {"plain", "per_file_1", "per_file_2", "per_file_3"}
    assert records["rerank"]["hits"][0]["rerankScore"] is not None and records["hybrid"]["hits"][0]["rerankScore"] is None
    assert not records["rerank"]["pair"].endswith("+none")
    assert records["hybrid"]["pair"].endswith("+none")


def test_a_find_stops_between_rerank_batches(polyglot, tmp_path, exported):
    from noul_lsp.config import with_overrides
    from noul_lsp.retrieval.result import FindCancelled

    settings = with_overrides(_settings(tmp_path / "cache", per_file=0, reranker=str(exported["bert"][1])),
                              search={"rerank_batch": 2})
    workspace = Workspace(polyglot, settings)
    try:
        workspace.indexer.update()
        encoder = workspace.reranker()  # shared in the process: count from here
        before = encoder.pairs_scored
        with pytest.raises(FindCancelled, match="rerank"):
            workspace.find("retry failed uploads with backoff", should_stop=lambda: encoder.pairs_scored > before)
        assert encoder.pairs_scored - before == 2  # one batch of the 6-chunk short list, then stopped
    finally:
        workspace.close()


def test_a_fitted_weight_combines_the_logit_with_the_rankers_probability():
    from noul_lsp.retrieval.rerank import with_reranked

    scored = [(0.6, [(0, 1)]), (0.3, [(0, 2)]), (0.1, [(0, 3)])]  # ranker probabilities, best first
    logits = {(0, 1): -1.0, (0, 2): 1.0}  # the cross-encoder prefers the second file
    alone = with_reranked(scored, logits)
    assert [keys[0] for _, keys in alone] == [(0, 2), (0, 1), (0, 3)]
    kept = with_reranked(scored, logits, weight=0.0)  # weight 0: the ranker's order, reranked still on top
    assert [keys[0] for _, keys in kept] == [(0, 1), (0, 2), (0, 3)]
    # log .6 - 0.2 = -0.71 vs log .3 + 0.2 = -1.00: a small weight keeps the first; a large one flips them
    assert [k[0] for _, k in with_reranked(scored, logits, weight=0.2)][:2] == [(0, 1), (0, 2)]
    assert [k[0] for _, k in with_reranked(scored, logits, weight=1.0)][:2] == [(0, 2), (0, 1)]
    assert all(score > 1 for score, _ in kept[:2]) and kept[2][0] == 0.1


def test_rank_fit_rerank_chooses_the_weight_held_out_and_stores_it(tmp_path):
    import json

    from noul_lsp.bench.rank_fit import fit_rerank_weight

    ranking = tmp_path / "ranking"
    ranking.mkdir()
    (ranking / "e@128.json").write_text(json.dumps({"embedder": "e@128", "features": [], "mean": [], "scale": [],
                                                    "coef": []}))
    records = []
    for repo in ("a/x", "b/y", "c/z"):
        for number in range(4):
            # the ranker puts the gold file second by a little; the cross-encoder is sure it is the one
            hits = [{"path": "wrong.py", "rankScore": 0.5, "rerankScore": -2.0},
                    {"path": "gold.py", "rankScore": 0.4, "rerankScore": 3.0}]
            records.append({"id": f"{repo}-{number}", "pipeline": "rerank", "kind": "answerable", "searched": "own",
                            "signals": {"ranking": "fitted (e@128)"}, "pair": "e@128+ce", "label_file": "l.jsonl",
                            "repo": repo, "gold_files": ["gold.py"], "hits": hits})
    path = tmp_path / "per_query.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    written, metrics = fit_rerank_weight([path], out_dir=ranking)
    assert metrics["ranker"]["all"]["acc@1"] == 0.0 and metrics["held_out"]["all"]["acc@1"] == 1.0
    stored = json.loads(written.read_text())["rerank"]["ce"]
    assert stored["weight"] == 0.05 and stored["queries"] == 12  # the smallest weight that flips them
