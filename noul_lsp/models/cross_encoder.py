"""Cross-encoder relevance scores with ONNX Runtime and a `tokenizers` tokenizer (no torch).

A cross-encoder reads the query and one chunk together and returns one logit: far better at telling a
near miss from the answer than cosine between two separate vectors, and far slower, so it only sees a short
list (retrieval/rerank.py picks it). Pairs are batched in order of token length, so padding stays small;
scores come back in input order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from noul_lsp.models.runtime import SessionModel, length_batches, open_session, padded_batch, shared_model


class ScoringStopped(Exception):
    """`should_stop` said yes between two batches."""


@dataclass(frozen=True)
class RerankerSpec:
    """Everything needed to run a cross-encoder that is on disk."""

    model_id: str
    onnx_path: Path
    tokenizer_path: Path
    #: the model's own position limit; the configured max length is clipped to it
    max_tokens: int = 512


class CrossEncoder(SessionModel):
    def __init__(self, spec: RerankerSpec, *, max_length: int = 256, batch_size: int = 16, use_gpu: bool = True) -> None:
        from tokenizers import Tokenizer

        self.spec = spec
        self.max_length = max(8, min(max_length, spec.max_tokens))
        self.batch_size = max(1, batch_size)
        self.tokenizer = Tokenizer.from_file(str(spec.tokenizer_path))
        self.tokenizer.no_padding()
        # longest_first: an issue-length query shares the budget with the code instead of failing
        self.tokenizer.enable_truncation(self.max_length, strategy="longest_first")
        self._session = open_session(spec.onnx_path, use_gpu=use_gpu)
        #: number of pairs scored so far
        self.pairs_scored = 0

    def _forward(self, encodings: list) -> np.ndarray:
        # XLM-RoBERTa pads with <pad> (1), and its position ids depend on it; BERT pads with 0
        input_ids, attention = padded_batch([e.ids for e in encodings], self.tokenizer.token_to_id("<pad>") or 0)
        feeds = {"input_ids": input_ids, "attention_mask": attention}
        if "token_type_ids" in self._session.input_names:
            feeds["token_type_ids"] = padded_batch([e.type_ids for e in encodings])[0]
        logits = np.asarray(self._session.run(feeds)[0], dtype=np.float32)
        self.pairs_scored += len(encodings)
        return relevance_logit(logits)

    def score(self, query: str, documents: list[str], *,
              should_stop: Callable[[], bool] = lambda: False) -> np.ndarray:
        """One relevance logit per document (higher is more relevant), in input order. `should_stop` is
        asked between batches (a large model on a CPU takes seconds: a newer keystroke must not wait);
        raises ScoringStopped when it says yes."""
        if not documents:
            return np.zeros(0, dtype=np.float32)
        encodings = self.tokenizer.encode_batch([(query, document) for document in documents])
        scores = np.zeros(len(documents), dtype=np.float32)
        for number, part in enumerate(length_batches([len(e.ids) for e in encodings], self.batch_size)):
            if number and should_stop():
                raise ScoringStopped
            scores[part] = self._forward([encodings[i] for i in part])
        return scores


def relevance_logit(logits: np.ndarray) -> np.ndarray:
    """The relevance logit of each row: the single output of a one-label head (ms-marco, bge-reranker), or
    positive minus negative for a two-label head."""
    if logits.ndim == 1:
        return logits
    if logits.shape[1] == 1:
        return logits[:, 0]
    if logits.shape[1] == 2:
        return logits[:, 1] - logits[:, 0]
    raise ValueError(f"a cross-encoder must output 1 or 2 logits per pair, this one outputs {logits.shape[1]}")


def shared_cross_encoder(spec: RerankerSpec, *, max_length: int, batch_size: int, use_gpu: bool) -> CrossEncoder:
    """The process's one cross-encoder for this model and these settings (see `shared_model`)."""
    return shared_model(("cross-encoder", spec, max_length, batch_size, use_gpu),
                        lambda: CrossEncoder(spec, max_length=max_length, batch_size=batch_size, use_gpu=use_gpu))
