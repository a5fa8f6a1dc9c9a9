"""Cross-encoder heads other than transformers' one-logit classifier (torch; training and export only).

`segment-cosine`: the relevance logit is the cosine between the mean of the query segment's output
tokens and the mean of the code segment's (token type 0 and 1 of the joint input), times a fixed scale.

Why: a fresh one-logit head on all-MiniLM-L6-v2 starts at chance. That model was trained with mean
pooling, so its [CLS] output carries nothing a new linear layer can use, and on 2 cores the head needs
more steps than a run gets before the loss leaves chance (docs/benchmarks.md, four runs). What such a
head learns first is a query-independent prior: its logits correlated at 0.78-0.87 with its scores for
content-free queries. A cosine between the two segments starts where the bi-encoder is. It has no term
that depends on the code alone, and it has no new weights: every step goes into the joint attention.

The head is named in the checkpoint's config.json (`noul_head`). `noul models export` reads that name and
puts the same arithmetic into the ONNX graph, which keeps the usual inputs and one logit per pair.
The engine's CrossEncoder therefore runs it unchanged.
"""

from __future__ import annotations

#: the config.json key naming the head; absent means transformers' own classifier
HEAD_KEY = "noul_head"
SEGMENT_COSINE = "segment-cosine"
HEADS = ("classifier", SEGMENT_COSINE)
#: cosine times this is the logit; the same temperature as sentence-transformers' in-batch loss (20)
SEGMENT_COSINE_SCALE = 20.0


def segment_cosine_logits(hidden, attention_mask, token_type_ids):
    """(batch, 1) logits from (batch, tokens, width) outputs: cosine of the two segments' mean tokens."""
    import torch

    mask = attention_mask.to(hidden.dtype)
    code = mask * token_type_ids.to(hidden.dtype)
    query = mask - code

    def mean(weights):
        summed = (hidden * weights.unsqueeze(-1)).sum(dim=1)
        return summed / weights.sum(dim=1, keepdim=True).clamp(min=1.0)

    cosine = torch.nn.functional.cosine_similarity(mean(query), mean(code), dim=-1, eps=1e-6)
    return (cosine * SEGMENT_COSINE_SCALE).unsqueeze(-1)


def apply_head(model, head: str) -> None:
    """Give a transformers sequence-classification model the named head, in place, and record it in
    its config so that the saved checkpoint and its export keep it."""
    if head not in HEADS:
        raise ValueError(f"unknown cross-encoder head {head!r}: {', '.join(HEADS)}")
    if head == "classifier":
        return
    from transformers.modeling_outputs import SequenceClassifierOutput

    encoder = model.base_model
    if getattr(model.config, "type_vocab_size", 1) < 2:
        raise ValueError("the segment-cosine head needs a model with token types (query 0, code 1), as BERT has")

    def forward(input_ids=None, attention_mask=None, token_type_ids=None, **_ignored):
        if token_type_ids is None or attention_mask is None:
            raise ValueError("the segment-cosine head needs attention_mask and token_type_ids")
        hidden = encoder(input_ids=input_ids, attention_mask=attention_mask,
                         token_type_ids=token_type_ids).last_hidden_state
        return SequenceClassifierOutput(logits=segment_cosine_logits(hidden, attention_mask, token_type_ids))

    model.forward = forward
    setattr(model.config, HEAD_KEY, head)


def head_of(config) -> str:
    """The head a checkpoint's config names (transformers' classifier when it names none)."""
    return getattr(config, HEAD_KEY, None) or "classifier"
