"""Cross-encoder heads other than transformers' one-logit classifier: their names (torch-free).

`segment-cosine`: the relevance logit is the cosine between the mean of the query segment's output
tokens and the mean of the code segment's (token type 0 and 1 of the joint input), times a fixed scale.

Why: a fresh one-logit head on all-MiniLM-L6-v2 starts at chance. That model was trained with mean
pooling, so its [CLS] output carries nothing a new linear layer can use, and on 2 cores the head needs
more steps than a run gets before the loss leaves chance (docs/benchmarks.md, four runs). What such a
head learns first is a query-independent prior: its logits correlated at 0.78-0.87 with its scores for
content-free queries. A cosine between the two segments starts where the bi-encoder is. It has no term
that depends on the code alone, and it has no new weights: every step goes into the joint attention.

The head is named in the checkpoint's config.json (`noul_head`). The arithmetic is torch and lives with
the export extra (`models/export.py`: `apply_head`), which training uses too. `noul models export` reads
the name and puts the same arithmetic into the ONNX graph, which keeps the usual inputs and one logit per
pair. The engine's CrossEncoder therefore runs it unchanged.
"""

from __future__ import annotations

#: the config.json key naming the head; absent means transformers' own classifier
HEAD_KEY = "noul_head"
SEGMENT_COSINE = "segment-cosine"
HEADS = ("classifier", SEGMENT_COSINE)
#: cosine times this is the logit; the same temperature as sentence-transformers' in-batch loss (20)
SEGMENT_COSINE_SCALE = 20.0


def head_of(config) -> str:
    """The head a checkpoint's config names (transformers' classifier when it names none)."""
    return getattr(config, HEAD_KEY, None) or "classifier"
