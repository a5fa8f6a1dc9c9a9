"""Mining pairs from a repository made at test time, and a few training steps on a tiny model.

Real git, real tree-sitter chunks, real sentence-transformers training (the `train` extra) on a random
two-layer BERT built here; nothing is downloaded.
"""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from noul_lsp.train.mine import MineSettings, MiningRefused, classify_licence, mine, mine_repository
from noul_lsp.train.pairs import read_pairs

MIT = """MIT License

Copyright (c) 2026 Test

Permission is hereby granted, free of charge, to any person obtaining a copy of this software and associated
documentation files (the "Software"), to deal in the Software without restriction.
"""

STORAGE_V1 = '''
def save_upload(path, data):
    """Write an uploaded file to the storage folder atomically."""
    with open(path + ".tmp", "wb") as out:
        out.write(data)
    rename(path + ".tmp", path)


def parse_header(line):
    """Split an HTTP header line into its name and value."""
    name, _, value = line.partition(":")
    return name.strip().lower(), value.strip()


def retry_delays(attempts):
    delays = []
    for attempt in range(attempts):
        delays.append(0.1 * attempt)
    return delays


def write_header(out, name, value):
    out.write(f"{name}: {value}\r\n")


def read_file_in_blocks(path, size=65536):
    with open(path, "rb") as handle:
        while block := handle.read(size):
            yield block


def format_size(count):
    """Human readable size of a byte count, in kilobytes or megabytes."""
    if count < 1024 * 1024:
        return f"{count / 1024:.1f} KB"
    return f"{count / 1024 / 1024:.1f} MB"
'''

STORAGE_V2 = STORAGE_V1.replace("        delays.append(0.1 * attempt)",
                                "        delays.append(min(30.0, 0.1 * 2 ** attempt))  # exponential backoff")


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "Dev", "GIT_AUTHOR_EMAIL": "dev@example.com", "GIT_COMMITTER_NAME": "Dev",
                        "GIT_COMMITTER_EMAIL": "dev@example.com", "HOME": str(root), "PATH": "/usr/bin:/bin"})


def make_repository(root: Path, *, licence: str = MIT) -> Path:
    root.mkdir(parents=True)
    _git(root, "init", "-q", "-b", "main")
    (root / "LICENSE").write_text(licence)
    (root / "storage.py").write_text(STORAGE_V1)
    (root / "tests").mkdir()
    (root / "tests" / "test_storage.py").write_text("def test_save_upload():\n    assert True\n")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", "Initial storage helpers")
    (root / "storage.py").write_text(STORAGE_V2)
    _git(root, "commit", "-q", "-am", "Use exponential backoff between retry attempts (#12)")
    (root / "storage.py").write_text(STORAGE_V2 + "\n# end\n")
    _git(root, "commit", "-q", "-am", "wip")  # one word: no pair
    return root


def test_licences_are_classified_from_their_text():
    assert classify_licence(MIT) == "MIT"
    assert classify_licence("Apache License\n  Version 2.0, January 2004\n") == "Apache-2.0"
    assert classify_licence("All rights reserved.") == "unknown"
    assert classify_licence("Apache License, Version 2.0") == "Apache-2.0"
    assert classify_licence("GNU GENERAL PUBLIC LICENSE Version 3") == "GPL-family"
    assert classify_licence("Redistribution and use in source and binary forms ... Neither the name") == "BSD-3-Clause"


def test_mining_finds_the_docstring_and_commit_pairs_of_a_repository(tmp_path):
    repository = make_repository(tmp_path / "acme")
    pairs, record = mine_repository(repository, settings=MineSettings(hard_negatives=2), name="acme/storage")
    by_source = {}
    for pair in pairs:
        by_source.setdefault(pair.source, []).append(pair)
    docstrings = {p.symbol: p for p in by_source["docstring"]}
    assert set(docstrings) == {"save_upload", "parse_header", "format_size"}  # the three documented definitions
    upload = docstrings["save_upload"]
    assert upload.query == "Write an uploaded file to the storage folder atomically."
    assert "def save_upload" in upload.positive and "atomically" not in upload.positive  # the docstring is removed
    assert "def write_header" in upload.negatives[0]  # shares `write` with the query: the hardest negative
    assert all("def save_upload" not in n for n in upload.negatives)
    assert all(p.path == "storage.py" for p in pairs)  # tests give no positives and no negatives
    (commit,) = by_source["commit"]
    assert commit.query == "Use exponential backoff between retry attempts"
    assert commit.symbol == "retry_delays" and "0.1 * attempt" in commit.positive  # as it was at the parent
    assert record.licence == "MIT" and record.commits_read == 2 and record.commits_kept == 1


def test_the_tests_that_call_a_definition_can_be_its_first_negatives(tmp_path):
    repository = make_repository(tmp_path / "acme")
    (repository / "tests" / "test_sizes.py").write_text(
        "def test_format_size_in_megabytes():\n    assert format_size(3 * 1024 * 1024) == '3.0 MB'\n\n\n"
        "def test_parse_header_lowercases_the_name():\n    assert parse_header('A: b') == ('a', 'b')\n")
    _git(repository, "add", ".")
    _git(repository, "commit", "-q", "-m", "Test the size and header helpers")
    plain, _ = mine_repository(repository, settings=MineSettings(hard_negatives=2), name="acme/storage")
    assert all(p.test_negatives == 0 and not any("def test_" in n for n in p.negatives) for p in plain)

    pairs, _ = mine_repository(repository, settings=MineSettings(hard_negatives=2, test_negatives=1), name="acme/storage")
    size = next(p for p in pairs if p.symbol == "format_size")
    assert size.test_negatives == 1 and "def test_format_size_in_megabytes" in size.negatives[0]
    assert len(size.negatives) == 3 and all("def test_" not in n for n in size.negatives[1:])
    header = next(p for p in pairs if p.symbol == "parse_header")
    assert "def test_parse_header_lowercases_the_name" in header.negatives[0]  # its own test, by name
    assert all(p.path == "storage.py" for p in pairs)  # tests are negatives, never positives


def test_excluded_and_unlicensed_repositories_are_refused(tmp_path):
    repository = make_repository(tmp_path / "requests")
    with pytest.raises(MiningRefused, match="exclusion list"):
        mine_repository(repository, exclusions={"psf/requests"}, name="someone/requests")  # a fork by its name
    private = make_repository(tmp_path / "private", licence="All rights reserved.\n")
    with pytest.raises(MiningRefused, match="not a recognised permissive licence"):
        mine_repository(private, name="me/private")
    pairs, record = mine_repository(private, name="me/private", own_code=True)  # your own code: --own
    assert pairs and record.licence == "unknown"


def test_mine_writes_pairs_and_provenance_through_the_cli(tmp_path, capsys):
    from noul_lsp.cli import main

    repository = make_repository(tmp_path / "acme")
    assert main(["train", "mine", "--repo", str(repository), "--out", str(tmp_path / "data")]) == 0
    sources = json.loads((tmp_path / "data" / "sources.json").read_text())
    (record,) = sources["repositories"].values()
    assert record["licence"] == "MIT" and len(record["commit"]) == 40 and record["pairs_kept"] == 4
    assert len(read_pairs(tmp_path / "data")) == 4
    assert json.loads(capsys.readouterr().out)["pairs"] == 4


def _mined_and_tiny_base(tmp_path: Path) -> tuple[Path, Path]:
    """(mined pairs of the fixture repository, a tiny random base model): what a training test starts from."""
    pytest.importorskip("sentence_transformers")
    from random_checkpoints import build_checkpoint

    data = tmp_path / "data"
    mine([make_repository(tmp_path / "acme")], data)
    return data, build_checkpoint(tmp_path / "base", kind="embedder", shape="tiny")  # two layers


@pytest.mark.slow
@pytest.mark.parametrize(("kind", "head"), [("embedder", "classifier"), ("reranker", "classifier"),
                                            ("reranker", "segment-cosine")])
def test_a_few_training_steps_lower_the_loss_and_the_result_exports_and_loads(tmp_path, kind, head):
    data, base = _mined_and_tiny_base(tmp_path)
    from noul_lsp.models.export import export_model
    from noul_lsp.train.fit import TrainSettings, train_embedder, train_reranker

    pairs = read_pairs(data) * 16  # the same few pairs, many times: a tiny model must fit them
    settings = TrainSettings(base=str(base), batch_size=4, max_steps=24, learning_rate=1e-3, warmup_ratio=0.0,
                             log_steps=4, checkpoint_steps=12, bf16=False, head=head)
    train = train_embedder if kind == "embedder" else train_reranker
    run = train(pairs, tmp_path / "run", settings)
    losses = [json.loads(line)["loss"] for line in (tmp_path / "run" / "train.log").read_text().splitlines()
              if "loss" in json.loads(line)]
    assert len(losses) >= 4 and min(losses[-2:]) < losses[0]
    assert run["pairs"] == len(pairs) and (tmp_path / "run" / "checkpoints").is_dir()
    report = export_model(tmp_path / "run" / "model", tmp_path / "onnx", kind=kind)
    assert report.kind == kind
    if kind == "embedder":
        from noul_lsp.models.embedder import OnnxEmbedder
        from noul_lsp.models.registry import spec_from_directory

        vectors = OnnxEmbedder(spec_from_directory(tmp_path / "onnx"), use_gpu=False).embed_documents(["def f(): pass"])
        assert vectors.shape == (1, 32)
    else:
        from noul_lsp.models.cross_encoder import CrossEncoder
        from noul_lsp.models.registry import reranker_from_directory

        scores = CrossEncoder(reranker_from_directory(tmp_path / "onnx"), use_gpu=False).score("retry", ["a", "b"])
        assert scores.shape == (2,)


def test_definitions_changed_together_are_not_each_others_negatives(tmp_path):
    root = make_repository(tmp_path / "acme")
    text = (root / "storage.py").read_text()
    text = text.replace('    name, _, value = line.partition(":")', '    name, _, value = line.partition(": ")')
    text = text.replace('    out.write(f"{name}: {value}\\r\\n")', '    out.write(f"{name}: {value}\\n")')
    (root / "storage.py").write_text(text)
    _git(root, "commit", "-q", "-am", "Separate header name and value by a colon and a space")
    pairs, _record = mine_repository(root, name="acme/storage")
    together = [p for p in pairs if p.query == "Separate header name and value by a colon and a space"]
    assert {p.symbol for p in together} == {"parse_header", "write_header"}
    for pair in together:
        assert not any("def parse_header" in n or "def write_header" in n for n in pair.negatives)


def test_a_definition_the_commit_added_is_not_a_negative_of_what_it_changed(tmp_path):
    # negatives are read at the head, where the function this commit added exists and matches its message best
    root = make_repository(tmp_path / "acme")
    text = (root / "storage.py").read_text().replace("def retry_delays(attempts):", "def retry_delays(attempts, cap=30.0):")
    text += ("\n\ndef retry_upload(path, data, attempts):\n    for delay in retry_delays(attempts):\n"
             "        if save_upload(path, data):\n            return True\n        sleep(delay)\n    return False\n")
    (root / "storage.py").write_text(text)
    _git(root, "commit", "-q", "-am", "Retry failed uploads with capped retry delays")
    pairs, _record = mine_repository(root, name="acme/storage")
    retried = [p for p in pairs if p.query == "Retry failed uploads with capped retry delays"]
    assert "retry_delays" in {p.symbol for p in retried}
    for pair in retried:
        assert pair.negatives and not any("def retry_upload" in n for n in pair.negatives)


def test_a_class_docstring_is_the_class_s_own_not_its_first_method_s():
    from noul_lsp.chunking.chunk import Chunk
    from noul_lsp.train.mine import split_docstring

    cache = Chunk("c.py", 1, 6, 'class Cache:\n    def get(self, key):\n        """Return the cached value."""\n'
                  '        return self.values[key]\n', "Cache", "python", "class")
    assert split_docstring(cache) is None
    documented = Chunk("c.py", 1, 5, 'class Cache:\n    """Keep computed values for a while."""\n\n'
                       '    def get(self, key):\n        return self.values[key]\n', "Cache", "python", "class")
    description, rest = split_docstring(documented)
    assert description == "Keep computed values for a while." and "Keep computed" not in rest and "def get" in rest


def test_the_docs_of_the_other_grammars_are_read_as_descriptions():
    """Elixir documents with `@doc` (kept with its function by the chunker), Haskell with `-- |`, Lua with `---`."""
    from noul_lsp.chunking import FileChunker
    from noul_lsp.config import IndexSettings
    from noul_lsp.train.mine import split_docstring

    fixtures = Path(__file__).parent / "fixtures" / "more_languages"
    found = {}
    for path in ("elixir/decoder.ex", "haskell/Runner.hs", "lua/statusline.lua"):
        for chunk in FileChunker(IndexSettings(chunk_max_chars=400)).chunk(path, (fixtures / path).read_text()):
            split = split_docstring(chunk)
            if split is not None:
                found[chunk.symbol] = split
    assert found["Acme.JSON.Decoder.decode"][0] == "Decodes `text`, returning `{:ok, term}` or `{:error, reason}`."
    assert found["Acme.JSON.Decoder.decode"][1].lstrip().startswith("@spec decode")
    assert found["runSpecs"][0] == "Run every example and count the outcomes."
    assert found["M.render_section"][0] == "Builds the text of one statusline section from its components."


def test_a_pair_is_kept_when_either_ranking_puts_its_code_near_the_top(tmp_path):
    repository = make_repository(tmp_path / "acme")
    strict = MineSettings(hard_negatives=3, consistency_top=1)
    pairs, record = mine_repository(repository, settings=replace(strict, static_model="noul-code-static-v2"),
                                    name="acme/storage")
    lexical_only, lexical_record = mine_repository(repository, settings=strict, name="acme/storage")
    assert all(p.static_rank == -1 for p in lexical_only)
    assert all(p.bm25_rank < 1 for p in lexical_only)
    assert all(p.static_rank >= 0 and (p.bm25_rank < 1 or p.static_rank < 1) for p in pairs)
    # the static ranking can only add pairs: every pair BM25 keeps is kept, and it drops no more
    assert {(p.source, p.symbol) for p in lexical_only} <= {(p.source, p.symbol) for p in pairs}
    assert record.dropped_by_consistency <= lexical_record.dropped_by_consistency


def test_hard_negatives_alternate_between_the_lexical_and_the_static_ranking():
    from noul_lsp.train.mine import Corpus, static_ranker

    texts = ["def save_upload(path, data):\n    write(path, data)", "def write_header(out, name):\n    out.write(name)",
             "def format_size(count):\n    return f'{count} KB'", "def retry_delays(n):\n    return [0.1] * n",
             "def read_blocks(path):\n    yield open(path).read(65536)"]
    keys = [("s.py", t.split("(")[0][4:]) for t in texts]
    static = static_ranker("noul-code-static-v2")
    corpus = Corpus(texts, keys, static=static)
    lexical = Corpus(texts, keys)
    query = "Write an uploaded file to storage"
    rank, static_rank, negatives = corpus.rank_and_negatives(query, texts[0], {keys[0]}, negatives=4)
    lexical_rank, no_rank, lexical_negatives = lexical.rank_and_negatives(query, texts[0], {keys[0]}, negatives=4)
    assert rank == lexical_rank and no_rank == -1 and static_rank >= 0
    assert texts[0] not in negatives and len(negatives) == len(set(negatives)) == 4
    assert negatives[0] == lexical_negatives[0]  # BM25's best first, then the static model's best
    cosines = static.embed_documents(texts) @ static.embed_query(query)
    static_best = texts[max(range(1, 5), key=lambda i: cosines[i])]
    assert static_best in negatives[:2]


def test_negatives_are_definitions_as_every_positive_is():
    """An import block that matches the query best is a competitor (it counts in the positive's rank) but
    no negative: with such chunks among the negatives a cross-encoder learnt what a definition looks like
    instead of what the query asks."""
    from noul_lsp.train.mine import Corpus

    texts = ["import upload\nfrom storage import upload, write", "def save_upload(path, data):\n    write(path, data)",
             "def write_header(out, name):\n    out.write(name)", "def upload_parts(parts):\n    return parts"]
    keys = [("s.py", ""), ("s.py", "save_upload"), ("s.py", "write_header"), ("s.py", "upload_parts")]
    everything = Corpus(texts, keys)
    definitions = Corpus(texts, keys, definitions=[False, True, True, True])
    query = "write an upload to storage"
    rank, _, negatives = everything.rank_and_negatives(query, texts[1], {keys[1]}, negatives=2)
    same_rank, _, definition_negatives = definitions.rank_and_negatives(query, texts[1], {keys[1]}, negatives=2)
    assert texts[0] in negatives and same_rank == rank >= 1
    assert texts[0] not in definition_negatives and set(definition_negatives) == {texts[2], texts[3]}


def test_the_docstring_share_sets_the_mix_of_sampled_pairs():
    from noul_lsp.train.fit import TrainSettings, _sample
    from noul_lsp.train.pairs import Pair

    def pair(source: str, index: int) -> Pair:
        return Pair(f"{source} {index}", f"code {index}", ["other"], source, "a/b", "x.py", f"f{index}", "python",
                    "c0", 0)

    pairs = [pair("docstring", i) for i in range(30)] + [pair("commit", i) for i in range(70)]
    mixed = _sample(pairs, TrainSettings(max_pairs=40, docstring_share=0.75))
    assert len(mixed) == 40 and sum(p.source == "docstring" for p in mixed) == 30
    assert sum(p.source == "docstring" for p in _sample(pairs, TrainSettings(max_pairs=20, docstring_share=0.5))) == 10
    assert len(_sample(pairs, TrainSettings())) == 100  # as mined: every pair


def test_a_reranker_cut_to_its_first_layers_trains_saves_and_exports_smaller(tmp_path):
    data, base = _mined_and_tiny_base(tmp_path)  # a base of two layers
    from noul_lsp.models.cross_encoder import CrossEncoder
    from noul_lsp.models.export import export_model
    from noul_lsp.models.registry import reranker_from_directory
    from noul_lsp.train.fit import TrainSettings, train_reranker

    settings = TrainSettings(base=str(base), batch_size=4, max_steps=4, learning_rate=1e-3, warmup_ratio=0.0,
                             log_steps=2, checkpoint_steps=4, layers=1)
    train_reranker(read_pairs(data) * 4, tmp_path / "run", settings)
    saved = json.loads((tmp_path / "run" / "model" / "config.json").read_text())
    assert saved["num_hidden_layers"] == 1
    export_model(tmp_path / "run" / "model", tmp_path / "onnx", kind="reranker")
    scores = CrossEncoder(reranker_from_directory(tmp_path / "onnx"), use_gpu=False).score("retry", ["a", "b"])
    assert scores.shape == (2,)


def test_a_segment_cosine_reranker_trains_and_its_export_scores_the_cosine_of_the_two_segments(tmp_path):
    """The head is arithmetic, not weights: after training and export, the engine's logit for a pair must be
    20 × the cosine of the mean query tokens and the mean code tokens of the saved encoder's joint pass."""
    data, base = _mined_and_tiny_base(tmp_path)
    import torch
    import transformers
    from tokenizers import Tokenizer

    from noul_lsp.cli import main
    from noul_lsp.models.cross_encoder import CrossEncoder
    from noul_lsp.models.export import export_model
    from noul_lsp.models.registry import reranker_from_directory

    assert main(["train", "reranker", "--data", str(data), "--out", str(tmp_path / "run"), "--base", str(base),
                 "--batch-size", "4", "--max-steps", "3", "--learning-rate", "1e-3", "--head", "segment-cosine"]) == 0
    model_dir = tmp_path / "run" / "model"
    assert json.loads((model_dir / "config.json").read_text())["noul_head"] == "segment-cosine"
    export_model(model_dir, tmp_path / "onnx", kind="reranker")
    query, codes = "retry the upload", ["def upload(data):\n    return send(data)", "class Header:\n    name = ''"]
    engine = CrossEncoder(reranker_from_directory(tmp_path / "onnx"), use_gpu=False).score(query, codes)

    encoder = transformers.AutoModel.from_pretrained(str(model_dir)).eval()
    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    expected = []
    for code in codes:
        encoding = tokenizer.encode(query, code)
        types = torch.tensor([encoding.type_ids])
        with torch.no_grad():
            hidden = encoder(input_ids=torch.tensor([encoding.ids]), token_type_ids=types,
                             attention_mask=torch.ones_like(types)).last_hidden_state[0]
        query_mean, code_mean = hidden[types[0] == 0].mean(0), hidden[types[0] == 1].mean(0)
        expected.append(20 * float(torch.nn.functional.cosine_similarity(query_mean, code_mean, dim=0)))
    assert np.allclose(engine, expected, atol=1e-3)
    assert len(set(np.round(engine, 4))) == 2  # a real score per pair, not a constant


def test_the_segment_cosine_head_is_refused_for_a_model_without_token_types(tmp_path, capsys):
    """XLM-R has one token type: query and code cannot be told apart, so the head is refused in one line
    before any training, and an export of a checkpoint that names it anyway is refused too."""
    data, _ = _mined_and_tiny_base(tmp_path)
    from random_checkpoints import build_checkpoint

    from noul_lsp.cli import main
    from noul_lsp.models.export import ExportError, export_model

    xlmr = build_checkpoint(tmp_path / "xlmr", architecture="xlm-roberta", kind="reranker")
    assert main(["train", "reranker", "--data", str(data), "--out", str(tmp_path / "run"), "--base", str(xlmr),
                 "--max-steps", "1", "--head", "segment-cosine"]) != 0
    error = capsys.readouterr().err
    assert "token types" in error and "Traceback" not in error
    config = json.loads((xlmr / "config.json").read_text())
    (xlmr / "config.json").write_text(json.dumps({**config, "noul_head": "segment-cosine"}))
    with pytest.raises(ExportError, match="token types"):
        export_model(xlmr, tmp_path / "onnx", kind="reranker")


def test_the_reranker_command_takes_the_count_of_in_batch_negatives(tmp_path):
    data, base = _mined_and_tiny_base(tmp_path)
    from noul_lsp.cli import main

    assert main(["train", "reranker", "--data", str(data), "--out", str(tmp_path / "run"), "--base", str(base),
                 "--batch-size", "4", "--max-steps", "2", "--in-batch-negatives", "3"]) == 0
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["settings"]["in_batch_negatives"] == 3 and run["kind"] == "reranker"
    # the loss cannot draw 0 of them (torch refuses to sample none): refused before any work
    assert main(["train", "reranker", "--data", str(data), "--out", str(tmp_path / "run0"), "--base", str(base),
                 "--in-batch-negatives", "0"]) == 2
    assert not (tmp_path / "run0").exists()


def test_frozen_token_embeddings_stay_the_base_s_and_a_deadline_stops_the_run_after_a_step(tmp_path):
    data, base = _mined_and_tiny_base(tmp_path)
    from safetensors.numpy import load_file

    from noul_lsp.cli import main
    from noul_lsp.train.fit import TrainSettings, train_embedder

    assert main(["train", "embedder", "--data", str(data), "--out", str(tmp_path / "run"), "--base", str(base),
                 "--batch-size", "2", "--max-steps", "4", "--learning-rate", "1e-2", "--freeze-token-embeddings",
                 "--loader-workers", "1"]) == 0  # batches tokenized in a worker process, as on a lease
    run = json.loads((tmp_path / "run" / "run.json").read_text())
    assert run["settings"]["freeze_token_embeddings"] and run["settings"]["device"] == "cpu"
    assert run["settings"]["loader_workers"] == 1
    trained = load_file(str(next((tmp_path / "run" / "model").rglob("model.safetensors"))))
    original = load_file(str(base / "model.safetensors"))

    def weight(weights: dict, suffix: str) -> np.ndarray:
        return next(v for k, v in weights.items() if k.endswith(suffix))

    assert np.array_equal(weight(trained, "word_embeddings.weight"), weight(original, "word_embeddings.weight"))
    query = "encoder.layer.0.attention.self.query.weight"
    assert not np.array_equal(weight(trained, query), weight(original, query))

    settings = TrainSettings(base=str(base), batch_size=2, max_steps=20, warmup_ratio=0.0, log_steps=1,
                             max_seconds=0.001)
    stopped = train_embedder(read_pairs(data) * 8, tmp_path / "late", settings)
    assert len(stopped["first_losses"]) == 1  # one step logged, then the deadline


def test_commits_become_ranking_labels_asked_at_their_parent(tmp_path):
    from noul_lsp.bench.labels import load_labels
    from noul_lsp.train.labels import commit_labels, write_commit_labels

    repository = make_repository(tmp_path / "acme")
    (repository / "tests" / "test_storage.py").write_text("def test_save_upload():\n    assert 1\n")
    _git(repository, "commit", "-q", "-am", "Check the upload test more strictly")  # tests only: no label
    rows, record = commit_labels(repository, name="acme/storage")
    (label,) = rows  # the backoff commit; "wip" says nothing and the test-only commit has no source file
    assert label["query"] == "Use exponential backoff between retry attempts"
    assert label["gold_files"] == ["storage.py"] and label["kind"] == "answerable"
    parent = subprocess.run(["git", "-C", str(repository), "rev-parse", "HEAD~3"], capture_output=True,
                            text=True).stdout.strip()
    assert label["commit"] == parent  # asked of the code before the change, as SWE-bench asks an issue
    assert record["licence"] == "MIT" and record["labels"] == 1

    out = tmp_path / "labels" / "commit-labels.jsonl"
    refused = make_repository(tmp_path / "requests")
    sources = write_commit_labels([repository, refused], out, exclusions={"acme/requests"})
    assert [q.query for q in load_labels([out])] == [label["query"]]  # the bench reads the file as it is
    assert sources["labels"] == 1 and list(sources["refused"]) == [str(refused)]
    assert json.loads((tmp_path / "labels" / "commit-labels.jsonl.sources.json").read_text())["labels"] == 1


@pytest.mark.slow
def test_a_gpu_lease_round_trip_sends_back_the_trained_layers_and_restores_the_token_embeddings(tmp_path):
    """scripts/train_gpu.py, run here on the CPU: pack the pairs and base, train with the token embeddings
    frozen (the lease sends back only the rest, as float16 parts), unpack: the checkpoint has the base's own
    float32 token embeddings, the trained layers, and exports."""
    import importlib.util

    from safetensors.numpy import load_file

    from noul_lsp.models.export import export_model

    data, base = _mined_and_tiny_base(tmp_path)
    spec = importlib.util.spec_from_file_location("train_gpu", Path(__file__).parents[1] / "scripts" / "train_gpu.py")
    train_gpu = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(train_gpu)

    summary = train_gpu.pack(data, base, tmp_path / "pack", negatives=7)
    assert summary["pairs"] == len(read_pairs(data)) and summary["texts"] > summary["pairs"]
    plan = [{"name": "reranker", "kind": "reranker",
             "settings": {"batch_size": 4, "max_steps": 3, "learning_rate": 1e-3, "warmup_ratio": 0.0, "log_steps": 1}}]
    sent = tmp_path / "sent"
    sent.mkdir()
    manifest = train_gpu.train(tmp_path / "pack", tmp_path / "work", sent, plan, deadline=600, device="cpu")
    assert not manifest["errors"] and manifest["denoise"]["pairs_after"] <= manifest["denoise"]["pairs_before"]
    assert manifest["runs"]["reranker"]["settings"]["freeze_token_embeddings"]

    train_gpu.unpack(sent, base, tmp_path / "back")
    trained = load_file(str(tmp_path / "work" / "reranker" / "model" / "model.safetensors"))
    restored = load_file(str(tmp_path / "back" / "reranker" / "model" / "model.safetensors"))
    original = load_file(str(base / "model.safetensors"))
    tokens = next(k for k in restored if k.endswith("word_embeddings.weight"))
    assert np.array_equal(restored[tokens], next(v for k, v in original.items() if k.endswith("word_embeddings.weight")))
    layer = next(k for k in trained if "encoder.layer.0" in k and k.endswith("query.weight"))
    assert np.allclose(restored[layer], trained[layer], atol=1e-2) and set(restored) == set(trained)
    assert export_model(tmp_path / "back" / "reranker" / "model", tmp_path / "onnx", kind="reranker").kind == "reranker"


def test_a_run_folder_resumes_only_the_run_started_in_it_and_a_wrong_base_is_one_line(tmp_path, capsys):
    """Run again with other settings (or as the other kind of model), a run folder resumed the old run and
    recorded the new settings over it, or failed with a traceback on the other kind's optimizer state; a
    --base that is a run folder (not its model) ended in a transformers traceback."""
    data, base = _mined_and_tiny_base(tmp_path)
    from noul_lsp.cli import main

    run = tmp_path / "run"
    common = ["--data", str(data), "--out", str(run), "--base", str(base), "--batch-size", "4", "--max-steps", "2"]
    assert main(["train", "embedder", *common]) == 0
    capsys.readouterr()
    assert main(["train", "embedder", *common[:-2], "--max-steps", "3", "--max-pairs", "5"]) == 1
    error = capsys.readouterr().err
    assert "holds a run (embedder) started with other settings (max_pairs 0 -> 5)" in error
    assert "another --out" in error and "Traceback" not in error
    assert main(["train", "reranker", *common]) == 1
    error = capsys.readouterr().err
    assert "holds a run (embedder)" in error and "kind 'embedder' -> 'reranker'" in error
    assert main(["train", "embedder", *common[:-2], "--max-steps", "3"]) == 0  # a longer cap resumes it
    finished = json.loads((run / "run.json").read_text())
    capsys.readouterr()
    assert main(["train", "embedder", *common[:-2], "--max-steps", "3"]) == 0  # finished: nothing trained
    again = json.loads(capsys.readouterr().out)
    assert again["note"].startswith("this run had finished") and json.loads((run / "run.json").read_text()) == finished
    other = ["--data", str(data), "--out", str(tmp_path / "run2"), "--max-steps", "1"]
    assert main(["train", "embedder", *other, "--base", str(run)]) == 1
    error = capsys.readouterr().err
    assert f"not a model folder (no config.json); a training run's model is in {run.resolve() / 'model'}" in error
    assert main(["train", "embedder", *other, "--base", str(tmp_path / "nope")]) == 1
    assert "(no such folder)" in capsys.readouterr().err


def test_a_short_run_still_writes_checkpoints_along_the_way():
    """The README's reranker run (3,000 pairs, batch 32: 94 steps) saved only at its end, under the 100
    steps between checkpoints: a Ctrl-C lost all of it. A run writes at least four now."""
    from noul_lsp.train.fit import TrainSettings, _checkpoint_steps

    assert _checkpoint_steps(TrainSettings(batch_size=32), 3000) == 24
    assert _checkpoint_steps(TrainSettings(batch_size=32), 200_000) == 100  # a long run: every 100, as before
    assert _checkpoint_steps(TrainSettings(max_steps=2), 3000) == 1
    assert _checkpoint_steps(TrainSettings(batch_size=32, epochs=0.5), 3000) == 12


def test_static_takes_max_pairs_and_mine_refuses_a_file_for_its_folder(tmp_path, capsys):
    """`train static --max-pairs` was accepted and not used; `train mine --out FILE` ended in "[Errno 20]"."""
    pytest.importorskip("model2vec")
    data, base = _mined_and_tiny_base(tmp_path)
    from noul_lsp.cli import main

    out = tmp_path / "static"
    assert main(["train", "static", "--data", str(data), "--base", str(base), "--out", str(out),
                 "--max-pairs", "3"]) == 0
    summary = json.loads(capsys.readouterr().out)  # stdout is the summary alone
    assert summary["tuned"]["pairs"] == 3 and json.loads((out / "tuning.json").read_text())["pairs"] == 3
    (tmp_path / "a-file").write_text("")
    assert main(["train", "mine", "--repo", str(tmp_path / "acme"), "--out", str(tmp_path / "a-file")]) == 2
    error = capsys.readouterr().err
    assert f"--out {tmp_path / 'a-file'}: not a folder" in error and "Errno" not in error
