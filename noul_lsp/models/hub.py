"""Downloading a model from the Hugging Face hub: runs only when the user asks (`noul models pull`)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from noul_lsp.models.registry import ModelMissing, card_for, local_model_directory

#: What a sentence-transformers or cross-encoder repository needs for ONNX inference.
ALLOW_PATTERNS = ["onnx/model.onnx", "tokenizer.json", "config.json", "modules.json", "1_Pooling/config.json",
                  "sentence_bert_config.json", "special_tokens_map.json", "tokenizer_config.json"]
#: With `--weights`: the torch checkpoint too, for `noul models export` (repositories without an ONNX file).
WEIGHT_PATTERNS = ["model.safetensors", "*.safetensors.index.json", "model-*.safetensors", "vocab.txt",
                   "sentencepiece.bpe.model"]


def pull(name: str, cache: Path, *, revision: str | None = None, weights: bool = False) -> Path:
    """Fetch `name` (a registered name or hub id) into the hub's own cache, then lay its files out in
    noul's model folder (hard links where the file system allows: no second copy of the weights). Honours
    the hub's settings (HF_ENDPOINT, HF_HUB_CACHE, HF_HUB_OFFLINE: offline, a model another tool already
    downloaded is taken from the hub cache)."""
    card = card_for(name)
    if card is None and name.count("/") != 1:  # neither registered nor a hub id (owner/name): no request made
        raise ModelMissing(f"unknown model {name!r}: give a registered name (`noul models list`) or a hub id "
                           "such as BAAI/bge-small-en-v1.5")
    if card is not None and card.bundled:
        raise ModelMissing(f"{card.id} ships with noul-lsp (models/bundled/{card.bundled}): there is nothing to download")
    hub_repo = card.hub_repo if card else name
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError
    except ImportError as error:
        raise ModelMissing("downloading models needs huggingface_hub: `pip install 'noul-lsp[hub]'`") from error
    target = local_model_directory(cache, hub_repo)
    try:
        snapshot = snapshot_download(repo_id=hub_repo, revision=revision,
                                     allow_patterns=ALLOW_PATTERNS + (WEIGHT_PATTERNS if weights else []))
        _link_tree(Path(snapshot), target)
    except (LocalEntryNotFoundError, HfHubHTTPError, OSError) as error:
        raise ModelMissing(f"could not download {hub_repo} from the hub ({type(error).__name__}: {error}); "
                           "check the network, or copy a local model directory and pass its path") from error
    has_onnx = (target / "onnx" / "model.onnx").is_file() or (target / "model.onnx").is_file()
    if not has_onnx and not weights:
        raise ModelMissing(f"{hub_repo} has no ONNX export on the hub: run `noul models pull {hub_repo} --weights`, "
                           f"then `noul models export {target} --out {target}`")
    return target


def _link_tree(snapshot: Path, target: Path) -> None:
    """Mirror a hub snapshot (symlinks into its blob store) as plain files in `target`."""

    def link_or_copy(source: str, destination: str) -> None:
        real = os.path.realpath(source)
        try:
            os.link(real, destination)
        except OSError:  # another file system, or no hard links
            shutil.copyfile(real, destination)

    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(snapshot, target, copy_function=link_or_copy)
