"""Random-weight transformers checkpoints of real architectures, made on this machine.

No model hub is reachable here or in CI, so the export and rerank tests and the rerank latency figures run
on checkpoints built from a transformers config: the same graph as the published model (BERT for
ms-marco-MiniLM, XLM-RoBERTa for bge-reranker), random weights. Timing depends on the shapes, not on the
weights; correctness checks compare ONNX with torch on the same weights. A test helper (also used by
scripts/rerank_latency.py), outside the package: torch and transformers belong to the `export` extra and
no runtime module imports them.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "noul_lsp"
BERT_TOKENIZER = PACKAGE / "models" / "data" / "all-minilm-l6-v2" / "tokenizer.json"


@dataclass(frozen=True)
class Shape:
    layers: int
    hidden: int
    heads: int
    intermediate: int


#: the sizes the rerank latency table reports
SHAPES = {
    "tiny": Shape(2, 32, 2, 64),
    "minilm-l6": Shape(6, 384, 12, 1536),  # cross-encoder/ms-marco-MiniLM-L-6-v2
    "base": Shape(12, 768, 12, 3072),  # bge-reranker-base
    "large": Shape(24, 1024, 16, 4096),  # bge-reranker-v2-m3
}


def _xlmr_tokenizer(target: Path) -> None:
    """A small SentencePiece-style (Unigram) tokenizer with XLM-R's special tokens and pair template,
    trained on noul's own source, so XLM-R checkpoints get a real tokenizer.json offline."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers

    tokenizer = Tokenizer(models.Unigram())
    tokenizer.pre_tokenizer = pre_tokenizers.Metaspace()
    tokenizer.decoder = decoders.Metaspace()
    specials = ["<s>", "<pad>", "</s>", "<unk>"]
    trainer = trainers.UnigramTrainer(vocab_size=600, special_tokens=specials, unk_token="<unk>")
    sources = [str(p) for p in sorted(PACKAGE.rglob("*.py"))]
    tokenizer.train(sources, trainer)
    tokenizer.post_processor = processors.RobertaProcessing(("</s>", 2), ("<s>", 0))
    tokenizer.save(str(target))


def build_checkpoint(target: Path, *, architecture: str = "bert", kind: str = "reranker", shape: str = "tiny",
                     seed: int = 0) -> Path:
    """Write a random-weight checkpoint (config.json, weights, tokenizer.json) to `target`.
    architecture: "bert" or "xlm-roberta"; kind: "reranker" (…ForSequenceClassification, one label) or
    "embedder" (the bare encoder)."""
    import torch
    import transformers

    size = SHAPES[shape]
    torch.manual_seed(seed)
    target.mkdir(parents=True, exist_ok=True)
    common = dict(hidden_size=size.hidden, num_hidden_layers=size.layers, num_attention_heads=size.heads,
                  intermediate_size=size.intermediate, num_labels=1)
    if architecture == "bert":
        config = transformers.BertConfig(vocab_size=30522, max_position_embeddings=512, **common)
        shutil.copyfile(BERT_TOKENIZER, target / "tokenizer.json")
        classes = (transformers.BertForSequenceClassification, transformers.BertModel)
    elif architecture == "xlm-roberta":
        _xlmr_tokenizer(target / "tokenizer.json")
        config = transformers.XLMRobertaConfig(vocab_size=600, max_position_embeddings=514, pad_token_id=1,
                                               bos_token_id=0, eos_token_id=2, type_vocab_size=1, **common)
        classes = (transformers.XLMRobertaForSequenceClassification, transformers.XLMRobertaModel)
    else:
        raise ValueError(f"architecture must be bert or xlm-roberta, not {architecture!r}")
    model = (classes[0] if kind == "reranker" else classes[1])(config).eval()
    model.save_pretrained(str(target))
    return target
