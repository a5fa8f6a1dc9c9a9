"""Downloading a model from the Hugging Face hub: runs only when the user asks (`noul models pull`)."""

from __future__ import annotations

from pathlib import Path

from noul_lsp.models.registry import ModelMissing, card_for, local_model_directory

#: What a sentence-transformers repository needs for ONNX inference; weights for torch are skipped.
ALLOW_PATTERNS = ["onnx/model.onnx", "tokenizer.json", "config.json", "modules.json", "1_Pooling/config.json",
                  "sentence_bert_config.json", "special_tokens_map.json", "tokenizer_config.json"]


def pull(name: str, cache: Path, *, revision: str | None = None) -> Path:
    """Fetch `name` (a registered name or hub id) into the cache and return its directory."""
    card = card_for(name)
    hub_repo = card.hub_repo if card else name
    try:
        from huggingface_hub import snapshot_download
        from huggingface_hub.errors import HfHubHTTPError, LocalEntryNotFoundError
    except ImportError as error:
        raise ModelMissing("downloading models needs huggingface_hub: `pip install 'noul-lsp[hub]'`") from error
    target = local_model_directory(cache, hub_repo)
    try:
        snapshot_download(repo_id=hub_repo, revision=revision, local_dir=str(target), allow_patterns=ALLOW_PATTERNS)
    except (LocalEntryNotFoundError, HfHubHTTPError, OSError) as error:
        raise ModelMissing(f"could not download {hub_repo} from the hub ({type(error).__name__}: {error}); "
                           "check the network, or copy a local model directory and pass its path") from error
    return target
