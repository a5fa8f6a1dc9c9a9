"""`noul train static`: distil a static embedding model (model2vec) from a sentence-transformer teacher.

A static model is one vector per token: a text's vector is the mean of its tokens' rows, so embedding is
a tokenizer pass and one sum per chunk (thousands of chunks a second on one core), and a workspace gets a
dense leg over every chunk seconds after it opens while the transformer fills in behind it.

model2vec does the distillation: every vocabulary entry goes through the teacher alone, the outputs are
reduced by PCA and weighted by an estimate of token frequency (SIF), as its paper and code do. Its
vocabulary is the teacher's word pieces plus the words code is written in: the most frequent identifier
words of the mined corpus (`noul train mine`) that the teacher's vocabulary lacks (`kwargs`, `getattr`,
`middleware` would otherwise be averages of their pieces). Needs the `train` extra (model2vec's distill
extra: torch, transformers); the engine reads the result with numpy alone (models/static.py).
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from noul_lsp.models.static import StaticEmbedder, spec_from_static_directory
from noul_lsp.train.fit import TrainingUnavailable

#: a word as the teacher's (BERT) pre-tokenizer sees it: letters and digits between punctuation
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]{2,30}")


@dataclass(frozen=True)
class StaticSettings:
    #: words added to the teacher's vocabulary (the most frequent code words it lacks)
    added_words: int = 20000
    #: a word must occur this often in the mined code to be added
    min_count: int = 5
    #: dimensions kept by PCA (model2vec's default)
    pca_dims: int = 256
    sif_coefficient: float = 1e-4


def code_vocabulary(texts: Iterable[str], known: set[str], settings: StaticSettings) -> list[str]:
    """The most frequent lower-cased words of `texts` that are not already whole tokens of the teacher."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(word.lower() for word in _WORD.findall(text))
    frequent = [(w, n) for w, n in counts.most_common() if n >= settings.min_count and w not in known]
    return [w for w, _ in frequent[: settings.added_words]]


def distil_static(teacher: str, texts: Iterable[str], out: Path, settings: StaticSettings = StaticSettings(),
                  *, provenance: dict | None = None) -> dict:
    """Distil `teacher` (a sentence-transformers directory) into a model2vec model written to `out`
    (model.safetensors, tokenizer.json, config.json, provenance.json); returns the provenance."""
    try:
        from model2vec.distill import distill_from_model
        from transformers import AutoModel, AutoTokenizer
    except ImportError as error:
        raise TrainingUnavailable("distilling a static model needs the train extra: "
                                  "pip install torch==2.13.0 'noul-lsp[train]'") from error
    started = time.perf_counter()
    tokenizer = AutoTokenizer.from_pretrained(teacher)
    model = AutoModel.from_pretrained(teacher)
    vocabulary = code_vocabulary(texts, set(tokenizer.get_vocab()), settings)
    static = distill_from_model(model, tokenizer, vocabulary=vocabulary, device="cpu", pca_dims=settings.pca_dims,
                                sif_coefficient=settings.sif_coefficient, quantize_to="float16")
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    static.save_pretrained(str(out))
    record = {"teacher": str(teacher), "settings": asdict(settings), "added_words": len(vocabulary),
              "vocabulary_size": int(static.embedding.shape[0]), "dims": int(static.embedding.shape[1]),
              "seconds": round(time.perf_counter() - started, 1), **(provenance or {})}
    (out / "provenance.json").write_text(json.dumps(record, indent=2) + "\n")
    return record


@dataclass(frozen=True)
class TuneSettings:
    """Contrastive tuning of a static table on mined pairs (the transformer's loss, on a bag of tokens)."""

    epochs: int = 3
    batch_size: int = 128
    learning_rate: float = 3e-3
    #: mined hard negatives per pair in the loss (every other text of the batch is a negative too)
    hard_negatives: int = 3
    #: the softmax's inverse temperature over cosines (MultipleNegativesRankingLoss's 20)
    scale: float = 20.0
    #: a commit message's body is cut here, as for the transformer
    max_query_chars: int = 300
    #: repositories whose pairs are held out to measure the tuning (never trained on)
    held_out: tuple[str, ...] = ()
    seed: int = 13
    #: with teacher vectors of code texts: the weight of the regression onto them (through a linear head
    #: that is thrown away after training, as model2vec's tokenlearn does), and texts per step
    regression_weight: float = 1.0
    regression_batch: int = 256


def _token_ids(model: StaticEmbedder, texts: list[str]) -> list[list[int]]:
    """Token ids of each text as the model counts them (its limit, no unknown token); a text with none
    gets the padding row, so the bag has something to average."""
    encodings = model.tokenizer.encode_batch_fast(texts, add_special_tokens=False)
    limit = model.spec.max_tokens
    return [[i for i in e.ids[:limit] if i != model.unknown_id] or [0] for e in encodings]


def _bag(ids: list[list[int]]):
    import torch

    flat = torch.tensor([i for row in ids for i in row], dtype=torch.long)
    offsets = torch.tensor([0, *np.cumsum([len(r) for r in ids])[:-1].tolist()], dtype=torch.long)
    return flat, offsets


def held_out_mrr(model: StaticEmbedder, pairs: list, *, max_query_chars: int) -> float:
    """Mean reciprocal rank of each pair's positive among every positive and negative of its repository
    (the texts a search of that repository would weigh), embedded by `model` as the engine embeds."""
    if not pairs:
        return float("nan")
    reciprocal: list[float] = []
    by_repository: dict[str, list] = {}
    for pair in pairs:
        by_repository.setdefault(pair.repository, []).append(pair)
    for members in by_repository.values():
        texts = list(dict.fromkeys(t for p in members for t in (p.positive, *p.negatives)))
        position = {t: i for i, t in enumerate(texts)}
        documents = model.embed_documents(texts)
        queries = model.embed_documents([p.query[:max_query_chars] for p in members])
        scores = queries @ documents.T
        gold = np.array([position[p.positive] for p in members])
        gold_scores = scores[np.arange(len(members)), gold]
        reciprocal.extend((1.0 / (1 + (scores > gold_scores[:, None]).sum(axis=1))).tolist())
    return float(np.mean(reciprocal))


def teacher_texts(pairs: list, count: int, *, held_out: tuple[str, ...] = (), max_query_chars: int = 300,
                  seed: int = 13) -> list[str]:
    """Up to `count` distinct texts of the mined pairs outside the held-out repositories, in a seeded
    random order: code (positives and hard negatives) and the developers' sentences (queries) alike, so
    that the regression onto the teacher teaches the table both sides of a search."""
    texts = list(dict.fromkeys(t for p in pairs if p.repository not in held_out
                               for t in (p.query[:max_query_chars], p.positive, *p.negatives)))
    order = np.random.default_rng(seed).permutation(len(texts))
    return [texts[i] for i in order[:count]]


def teacher_vectors(teacher: str, texts: list[str], cache: Path, *, max_tokens: int = 128, batch: int = 256,
                    log=print) -> np.ndarray:
    """The teacher's (sentence-transformers) normalised vectors of `texts`, at the length the engine runs
    the transformer at. Tens of thousands of texts take minutes on two cores, so the vectors are saved to
    `cache` every `batch` texts with a hash of each text; a later run of the same teacher reuses the
    longest prefix of its texts found there (a stopped run resumes, and a smaller or larger
    `--teacher-texts`, being a prefix of the same seeded order, keeps what was computed)."""
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError as error:
        raise TrainingUnavailable("teacher vectors need the train extra: "
                                  "pip install torch==2.13.0 'noul-lsp[train]'") from error
    hashes = np.array([hashlib.sha1(t.encode()).hexdigest()[:16] for t in texts])
    source = np.array(f"{Path(teacher).resolve()} at {max_tokens} tokens")  # another teacher's vectors never serve
    done = np.zeros((0, 0), dtype=np.float32)
    if cache.exists():
        with np.load(cache) as stored:
            if "hashes" in stored and "teacher" in stored and stored["teacher"] == source:
                known = stored["hashes"][: len(texts)]
                agree = known == hashes[: len(known)]
                done = stored["vectors"][: len(agree) if agree.all() else int(np.argmin(agree))]
    if len(done) == len(texts):
        return done
    model = SentenceTransformer(str(teacher), device="cpu")
    model.max_seq_length = max_tokens
    # sentence-transformers 6 renamed the method; the old name warns
    dimension = getattr(model, "get_embedding_dimension", None) or model.get_sentence_embedding_dimension
    vectors = np.zeros((len(texts), dimension()), dtype=np.float32)
    if len(done):
        vectors[: len(done)] = done
    started, resumed = time.perf_counter(), len(done)
    for start in range(len(done), len(texts), batch):
        end = min(start + batch, len(texts))
        vectors[start:end] = model.encode(texts[start:end], batch_size=32, normalize_embeddings=True,
                                          convert_to_numpy=True)
        np.savez(cache, teacher=source, hashes=hashes[:end], vectors=vectors[:end])
        rate = (end - resumed) / (time.perf_counter() - started)
        log(json.dumps({"teacher_vectors": end, "of": len(texts), "texts_per_s": round(rate, 1)}))
    return vectors


def tune_static(directory: Path, pairs: list, out: Path, settings: TuneSettings = TuneSettings(),
                log=print, teacher: tuple[list[str], np.ndarray] | None = None) -> dict:
    """Tune the token table of the static model in `directory` on mined (query, positive, hard negatives)
    pairs with an in-batch softmax loss, and write the tuned model to `out`. With `teacher` (texts and the
    transformer's vectors of them), each step also pulls the static vectors of a batch of those texts
    towards the teacher's, so the table learns what the transformer knows of code beyond the pairs. The
    held-out repositories' MRR is measured before and after; returns the figures."""
    try:
        import torch
        from safetensors.numpy import save_file
    except ImportError as error:
        raise TrainingUnavailable("tuning a static model needs the train extra: "
                                  "pip install torch==2.13.0 'noul-lsp[train]'") from error

    started = time.perf_counter()
    base = StaticEmbedder(spec_from_static_directory(Path(directory)))
    held = [p for p in pairs if p.repository in settings.held_out]
    train = [p for p in pairs if p.repository not in settings.held_out]

    def measure(table: np.ndarray) -> float:
        return held_out_mrr(base.with_table(table), held, max_query_chars=settings.max_query_chars)

    before = measure(base.matrix)
    if held:  # (no --held-out: no figure, where a NaN made the JSON invalid)
        log(json.dumps({"held_out_mrr": before, "step": 0}))
    torch.manual_seed(settings.seed)
    rng = np.random.default_rng(settings.seed)
    query_ids = _token_ids(base, [p.query[: settings.max_query_chars] for p in train])
    positive_ids = _token_ids(base, [p.positive for p in train])
    negative_ids = [_token_ids(base, list(p.negatives[: settings.hard_negatives])) for p in train]
    bag = torch.nn.EmbeddingBag.from_pretrained(torch.from_numpy(base.matrix.copy()), freeze=False, mode="mean")
    parameters = list(bag.parameters())
    if teacher is not None:
        held_texts = {t for p in held for t in (p.positive, *p.negatives, p.query[: settings.max_query_chars])}
        keep = [i for i, text in enumerate(teacher[0]) if text not in held_texts]
        teacher_ids = _token_ids(base, [teacher[0][i] for i in keep])
        teacher_vectors = torch.nn.functional.normalize(torch.from_numpy(np.asarray(teacher[1][keep], np.float32)), dim=1)
        head = torch.nn.Linear(base.spec.dims, teacher_vectors.shape[1], bias=False)
        parameters += list(head.parameters())
    optimiser = torch.optim.Adam(parameters, lr=settings.learning_rate)
    step = 0
    for epoch in range(settings.epochs):
        order = rng.permutation(len(train))
        for start in range(0, len(order) - settings.batch_size + 1, settings.batch_size):
            batch = order[start : start + settings.batch_size]
            queries = torch.nn.functional.normalize(bag(*_bag([query_ids[i] for i in batch])), dim=1)
            documents_ids = [positive_ids[i] for i in batch] + [n for i in batch for n in negative_ids[i]]
            documents = torch.nn.functional.normalize(bag(*_bag(documents_ids)), dim=1)
            logits = settings.scale * queries @ documents.T
            loss = torch.nn.functional.cross_entropy(logits, torch.arange(len(batch)))
            if teacher is not None:
                picked = rng.integers(0, len(teacher_ids), settings.regression_batch)
                predicted = head(bag(*_bag([teacher_ids[i] for i in picked])))
                target = teacher_vectors[torch.from_numpy(picked)]
                cosine = torch.nn.functional.cosine_similarity(predicted, target, dim=1)
                loss = loss + settings.regression_weight * (1.0 - cosine).mean()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            step += 1
            if step % 20 == 0:
                log(json.dumps({"epoch": epoch, "step": step, "loss": round(float(loss.detach()), 4)}))
        log(json.dumps({"epoch": epoch + 1, **({"held_out_mrr": measure(bag.weight.detach().numpy())} if held else {})}))
    tuned = bag.weight.detach().numpy().astype(np.float16)  # as shipped
    after = measure(tuned)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    save_file({"embeddings": tuned}, str(out / "model.safetensors"))
    for name in ("tokenizer.json", "config.json"):
        (out / name).write_bytes((Path(directory) / name).read_bytes())
    record = {"tuned_from": str(directory), "settings": asdict(settings), "pairs": len(train),
              "teacher_texts": len(teacher_ids) if teacher is not None else 0,
              "held_out_pairs": len(held), "held_out_mrr_before": round(before, 4) if held else None,
              "held_out_mrr_after": round(after, 4) if held else None,
              "steps": step, "seconds": round(time.perf_counter() - started, 1)}
    (out / "tuning.json").write_text(json.dumps(record, indent=2) + "\n")
    return record

