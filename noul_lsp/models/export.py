"""`noul models export`: a local transformers checkpoint to an ONNX model the engine can run.

Needs the `export` extra (torch, transformers, onnx); nothing else in noul imports torch. What we learnt
on this machine (shared/FACTS.md) and follow here:
  * export with eager attention: with SDPA onnxruntime's optimizer fuses nothing (2x slower at 512 tokens);
  * `torch.onnx.export(..., dynamo=False)` (the dynamo exporter needs packages we do not install);
  * the fused graph is quantised per channel with `DefaultTensorType` set, and an int8 model is only kept
    when its scores agree with fp32 on real code: a plain dynamic quantisation of MiniLM drifted to cosine
    0.79, which would silently lose answers. A drifting int8 model is deleted and the export fails.
The fp32 export is checked against torch on the same inputs before anything is written as done.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from noul_lsp.models.cross_encoder import CrossEncoder, RerankerSpec
from noul_lsp.models.embedder import EmbedderSpec, OnnxEmbedder
from noul_lsp.models.heads import HEAD_KEY, HEADS, SEGMENT_COSINE_SCALE, head_of
from noul_lsp.models.registry import kind_of

FP32_FILE = "model.onnx"
INT8_FILE = "model_int8.onnx"
#: the queries of the agreement check; the documents are chunks of noul's own source code
AGREEMENT_QUERIES = (
    "parse settings from the editor and report problems", "embed texts in batches sorted by length",
    "write chunks and vectors to the database atomically", "split a source file into functions and classes",
    "score documents with bm25", "fuse rankings by reciprocal rank", "watch files for changes",
    "calibrated probability that the answer is in this workspace", "read gitignore patterns",
    "download a model from the hub", "cosine similarity top k", "convert line numbers to utf-16 positions",
)


class ExportError(RuntimeError):
    """The export cannot be done or was refused; the message says why and what to do."""


@dataclass
class Agreement:
    """How far int8 scores are from fp32 scores on the same inputs."""

    #: embedders: lowest cosine between an fp32 and an int8 vector; rerankers: Spearman of the logits
    score_agreement: float
    #: share of queries whose top document is the same under both
    top1_agreement: float
    #: mean overlap of the two top-5 lists
    overlap_at_5: float
    accepted: bool = False


@dataclass
class ExportReport:
    source: str
    out: str
    kind: str
    architecture: str
    fp32_max_abs_diff: float
    optimized: bool
    int8: Agreement | None = None
    files: list[str] = field(default_factory=list)


def _require_export_extra():
    try:
        import torch
        import transformers
    except ImportError as error:
        raise ExportError("export needs the export extra: `pip install 'noul-lsp[export]'` "
                          "(on a machine without a GPU install `torch==2.13.0` first: the CPU build)") from error
    return torch, transformers


def _tokenizer_file(source: Path, out: Path, transformers) -> Path:
    target = out / "tokenizer.json"
    if (source / "tokenizer.json").is_file():
        if source != out:
            shutil.copyfile(source / "tokenizer.json", target)
        return target
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(str(source), use_fast=True)
    except Exception as error:
        raise ExportError(f"{source} has no tokenizer.json and no tokenizer transformers can load ({error})") from error
    if not getattr(tokenizer, "is_fast", False):
        raise ExportError(f"{source}: only a slow tokenizer is available; save a fast one (tokenizer.json)")
    tokenizer.backend_tokenizer.save(str(target))
    return target


def _sample_code(limit: int = 96) -> list[str]:
    """Chunks of noul's own source: real code for the agreement check, on any machine, offline."""
    from noul_lsp.chunking import FileChunker
    from noul_lsp.config import IndexSettings

    chunker = FileChunker(IndexSettings())
    package = Path(__file__).resolve().parents[1]
    texts: list[str] = []
    for path in sorted(package.rglob("*.py")):
        for chunk in chunker.chunk(path.relative_to(package).as_posix(), path.read_text()):
            texts.append(f"{chunk.header}\n{chunk.text}" if chunk.header else chunk.text)
    step = max(1, len(texts) // limit)
    return texts[::step][:limit]


def _torch_inputs(torch, tokenizer_path: Path, pairs_or_texts: list, max_length: int, with_types: bool):
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(tokenizer_path))
    tokenizer.enable_truncation(max_length)
    pad_id = tokenizer.token_to_id("<pad>") or 0
    tokenizer.enable_padding(pad_id=pad_id, pad_token=tokenizer.id_to_token(pad_id) or "[PAD]")
    encodings = tokenizer.encode_batch(pairs_or_texts)
    inputs = {"input_ids": torch.tensor([e.ids for e in encodings], dtype=torch.long),
              "attention_mask": torch.tensor([e.attention_mask for e in encodings], dtype=torch.long)}
    if with_types:
        inputs["token_type_ids"] = torch.tensor([e.type_ids for e in encodings], dtype=torch.long)
    return inputs


# The cross-encoder heads models/heads.py names (and says why): torch, for training and export alone.
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


#: the report an export writes beside its model (and reads again to know a folder is an export of its own)
EXPORT_RECORD = "export.json"


def _check_out_folder(out: Path, source: Path, kind: str) -> None:
    """An export writes over an earlier export of the same kind (a re-export), or into its own checkpoint;
    it overwrote anything else (another kind of model, a static model's folder) with no word."""
    if out == source or not out.is_dir() or not any(out.iterdir()):
        return
    record = out / EXPORT_RECORD
    try:
        earlier = json.loads(record.read_text()).get("kind") if record.is_file() else None
    except (OSError, ValueError, AttributeError):
        earlier = None
    if earlier != kind:
        held = f"an exported {earlier}" if earlier else "files no export wrote"
        raise ExportError(f"--out {out} holds {held}: give a new folder for this {kind} (or empty that one)")


def export_model(source: Path, out: Path, *, kind: str = "auto", int8: bool = False, optimize: bool = True,
                 opset: int = 17, min_score_agreement: float | None = None, min_top1_agreement: float = 0.9,
                 max_length: int = 256) -> ExportReport:
    """Export `source` (a transformers directory) to `out`; see the module docstring."""
    torch, transformers = _require_export_extra()
    source, out = Path(source).expanduser().resolve(), Path(out).expanduser().resolve()
    if not (source / "config.json").is_file():
        raise ExportError(f"{source} is not a transformers checkpoint (no config.json)")
    config = transformers.AutoConfig.from_pretrained(str(source))
    kind = kind_of(getattr(config, "architectures", None) or []) if kind == "auto" else kind
    if kind not in ("embedder", "reranker"):
        raise ExportError(f"kind must be embedder, reranker or auto, not {kind!r}")
    _check_out_folder(out, source, kind)  # before the model loads (seconds)
    loader = transformers.AutoModelForSequenceClassification if kind == "reranker" else transformers.AutoModel
    model = loader.from_pretrained(str(source), attn_implementation="eager").eval()
    if kind == "reranker":
        try:
            apply_head(model, head_of(config))  # a head other than the classifier is arithmetic in the graph
        except ValueError as error:
            raise ExportError(f"{source}: {error}") from error
    out.mkdir(parents=True, exist_ok=True)
    (out / INT8_FILE).unlink(missing_ok=True)  # derived from the previous fp32: never left beside a new one
    tokenizer_path = _tokenizer_file(source, out, transformers)
    for name in ("config.json", "modules.json", "special_tokens_map.json", "tokenizer_config.json"):
        if (source / name).is_file() and source != out:
            shutil.copyfile(source / name, out / name)
    if (source / "1_Pooling").is_dir() and source != out:
        shutil.copytree(source / "1_Pooling", out / "1_Pooling", dirs_exist_ok=True)

    with_types = getattr(config, "type_vocab_size", 1) > 1
    names = ["input_ids", "attention_mask"] + (["token_type_ids"] if with_types else [])
    output = "logits" if kind == "reranker" else "last_hidden_state"
    sample = _sample_code(24)
    probe = [(q, d) for q, d in zip(AGREEMENT_QUERIES * 2, sample, strict=False)] if kind == "reranker" else sample
    inputs = _torch_inputs(torch, tokenizer_path, probe[:4], max_length, with_types)
    fp32_path = out / FP32_FILE

    class Wrapped(torch.nn.Module):  # a plain tensor out, whatever output class the model returns
        def __init__(self, inner):
            super().__init__()
            self.inner = inner

        def forward(self, *tensors):
            result = self.inner(**dict(zip(names, tensors, strict=True)))
            return result.logits if kind == "reranker" else result.last_hidden_state

    wrapped = Wrapped(model).eval()
    axes = {name: {0: "batch", 1: "sequence"} for name in names}
    axes[output] = {0: "batch"} if kind == "reranker" else {0: "batch", 1: "sequence"}
    with torch.no_grad():
        torch.onnx.export(wrapped, tuple(inputs[n] for n in names), str(fp32_path), input_names=names,
                          output_names=[output], dynamic_axes=axes, opset_version=opset, dynamo=False)
    optimized = False
    if optimize:
        optimized = _optimize(fp32_path, config)
    check = _torch_inputs(torch, tokenizer_path, probe, max_length, with_types)
    with torch.no_grad():
        expected = wrapped(*(check[n] for n in names)).numpy()
    got = _run_onnx(fp32_path, {n: check[n].numpy() for n in names})
    difference = float(np.abs(got - expected).max())
    tolerance = 1e-3 if optimized else 1e-4
    if difference > tolerance:
        fp32_path.unlink(missing_ok=True)  # a model that scores differently must not be picked up
        raise ExportError(f"the ONNX export differs from torch by {difference:.2e} (more than {tolerance:g}): "
                          "not written as usable; try --no-optimize or another --opset")
    report = ExportReport(str(source), str(out), kind, (config.architectures or [type(model).__name__])[0], difference,
                          optimized, files=[FP32_FILE])
    if int8:
        # the fp32 model is usable now: recorded before the int8 step, which may refuse (a re-export into
        # this folder then writes over an export, as `_check_out_folder` allows)
        (out / EXPORT_RECORD).write_text(json.dumps(asdict(report), indent=2) + "\n")
        report.int8 = _quantize_checked(out, kind, tokenizer_path, config, max_length=max_length,
                                        min_score_agreement=min_score_agreement, min_top1_agreement=min_top1_agreement)
        report.files.append(INT8_FILE)
    (out / EXPORT_RECORD).write_text(json.dumps(asdict(report), indent=2) + "\n")
    return report


def _optimize(path: Path, config) -> bool:
    """Fuse attention/LayerNorm/GELU with onnxruntime's transformer optimizer (BERT and XLM-R alike);
    keeps the plain graph when fusion is not possible for this architecture."""
    try:
        from onnxruntime.transformers.optimizer import optimize_model
    except ImportError:
        return False
    temporary = path.with_name(path.name + ".fused")
    # protobuf files stop at 2 GB: larger models (bge-reranker-v2-m3) keep their weights in one data file
    big = sum(f.stat().st_size for f in path.parent.iterdir() if f.is_file()) > 1.9 * 2**30
    try:
        fused = optimize_model(str(path), model_type="bert", num_heads=int(config.num_attention_heads),
                               hidden_size=int(config.hidden_size))
        fused.save_model_to_file(str(temporary), use_external_data_format=big, all_tensors_to_one_file=True)
    except Exception:  # this architecture does not fuse: the plain graph stays, and the report says so
        temporary.unlink(missing_ok=True)
        return False
    os.replace(temporary, path)
    return True


def _run_onnx(path: Path, feeds: dict) -> np.ndarray:
    import onnxruntime as ort

    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    wanted = {i.name for i in session.get_inputs()}
    return np.asarray(session.run(None, {k: v for k, v in feeds.items() if k in wanted})[0], dtype=np.float32)


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    ranks_a, ranks_b = np.argsort(np.argsort(a)), np.argsort(np.argsort(b))
    if ranks_a.std() == 0 or ranks_b.std() == 0:
        return 1.0 if np.array_equal(ranks_a, ranks_b) else 0.0
    return float(np.corrcoef(ranks_a, ranks_b)[0, 1])


def quantize_int8(fp32_path: Path, int8_path: Path) -> None:
    """Dynamic int8, per channel (per tensor drifted to cosine 0.79 on MiniLM); `DefaultTensorType` lets it
    quantise a fused graph. Unchecked: `export_model` checks agreement before keeping the result."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    quantize_dynamic(str(fp32_path), str(int8_path), weight_type=QuantType.QInt8, per_channel=True,
                     extra_options={"DefaultTensorType": onnx.TensorProto.FLOAT})


def _quantize_checked(out: Path, kind: str, tokenizer_path: Path, config, *, max_length: int,
                      min_score_agreement: float | None, min_top1_agreement: float) -> Agreement:
    int8_path = out / INT8_FILE
    quantize_int8(out / FP32_FILE, int8_path)
    documents = _sample_code()
    if kind == "reranker":
        agreement = _reranker_agreement(out, tokenizer_path, config, documents, max_length)
        floor = 0.95 if min_score_agreement is None else min_score_agreement
    else:
        agreement = _embedder_agreement(out, tokenizer_path, config, documents, max_length)
        floor = 0.95 if min_score_agreement is None else min_score_agreement
    agreement.accepted = agreement.score_agreement >= floor and agreement.top1_agreement >= min_top1_agreement
    if not agreement.accepted:
        int8_path.unlink(missing_ok=True)
        measure = "lowest cosine" if kind == "embedder" else "Spearman of scores"
        raise ExportError(f"int8 refused: it drifts from fp32 ({measure} {agreement.score_agreement:.3f}, needed "
                          f"{floor}; top-1 agreement {agreement.top1_agreement:.2f}, needed {min_top1_agreement}); "
                          f"the fp32 model in {out} is usable as it is")
    return agreement


def _embedder_agreement(out: Path, tokenizer_path: Path, config, documents: list[str], max_length: int) -> Agreement:
    def embedder(file: str) -> OnnxEmbedder:
        spec = EmbedderSpec("agreement", out / file, tokenizer_path, dims=int(config.hidden_size))
        return OnnxEmbedder(spec, token_budget=max_length, use_gpu=False)

    full, quantized = embedder(FP32_FILE), embedder(INT8_FILE)
    doc_full, doc_int8 = full.embed_documents(documents), quantized.embed_documents(documents)
    cosine = float(np.min(np.sum(doc_full * doc_int8, axis=1)))
    top1, overlap = [], []
    for query in AGREEMENT_QUERIES:
        a = doc_full @ full.embed_query(query)
        b = doc_int8 @ quantized.embed_query(query)
        top1.append(int(np.argmax(a)) == int(np.argmax(b)))
        overlap.append(len(set(np.argsort(-a)[:5]) & set(np.argsort(-b)[:5])) / 5)
    return Agreement(cosine, float(np.mean(top1)), float(np.mean(overlap)))


def _reranker_agreement(out: Path, tokenizer_path: Path, config, documents: list[str], max_length: int) -> Agreement:
    def reranker(file: str) -> CrossEncoder:
        return CrossEncoder(RerankerSpec("agreement", out / file, tokenizer_path), max_length=max_length, use_gpu=False)

    full, quantized = reranker(FP32_FILE), reranker(INT8_FILE)
    candidates = documents[:20]  # a short list, as the rerank stage sees
    spearman, top1, overlap = [], [], []
    for query in AGREEMENT_QUERIES:
        a, b = full.score(query, candidates), quantized.score(query, candidates)
        spearman.append(_spearman(a, b))
        top1.append(int(np.argmax(a)) == int(np.argmax(b)))
        overlap.append(len(set(np.argsort(-a)[:5]) & set(np.argsort(-b)[:5])) / 5)
    return Agreement(float(np.mean(spearman)), float(np.mean(top1)), float(np.mean(overlap)))
