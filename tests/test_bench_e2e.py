"""A small end-to-end `noul bench` on a git repository the test creates: two commits, a bare mirror,
labels in the shared schema; the index is updated incrementally from the first commit to the second."""

import json
import os
import subprocess
from pathlib import Path

from noul_lsp.bench.ripgrep import ripgrep_available
from noul_lsp.bench.runner import embedding_progress
from noul_lsp.cli import main

GIT_ENV = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t"}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, env=GIT_ENV, check=True, capture_output=True, text=True).stdout.strip()


def make_repository(tmp_path: Path) -> tuple[Path, str, str]:
    work = tmp_path / "src-repo"
    (work / "tools").mkdir(parents=True)
    (work / "tests").mkdir()
    (work / "tools" / "retry.py").write_text(
        "import time\n\n\ndef retry_upload(send, attempts=5):\n    \"\"\"Retry a failed upload with exponential backoff.\"\"\"\n"
        "    for attempt in range(attempts):\n        try:\n            return send()\n        except OSError:\n"
        "            time.sleep(2 ** attempt)\n")
    (work / "tools" / "cookies.py").write_text(
        "class CookieJar:\n    \"\"\"Remembers cookies a server set and sends them back later.\"\"\"\n\n"
        "    def __init__(self):\n        self.cookies = {}\n")
    (work / "tests" / "test_retry.py").write_text("def test_retry_upload():\n    assert True\n")
    git(work, "init", "-q")
    git(work, "add", "-A")
    git(work, "commit", "-qm", "first")
    first = git(work, "rev-parse", "HEAD")
    (work / "tools" / "export.py").write_text(
        "import csv\n\n\ndef write_invoices(rows, handle):\n    \"\"\"Write invoices as CSV rows for spreadsheets.\"\"\"\n"
        "    csv.writer(handle).writerows(rows)\n")
    git(work, "add", "-A")
    git(work, "commit", "-qm", "second")
    second = git(work, "rev-parse", "HEAD")
    mirrors = tmp_path / "mirrors" / "acme+tools"
    mirrors.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", "--bare", str(work), str(mirrors / "repo")], check=True, env=GIT_ENV)
    return tmp_path / "mirrors", first, second


def test_bench_runs_incrementally_and_reports(tmp_path):
    mirrors, first, second = make_repository(tmp_path)
    rows = [
        {"id": "q1", "source": "describe", "repo": "acme/tools", "commit": first, "commit_date": "2024-01-01",
         "query": "retry a failed upload with exponential backoff", "kind": "answerable", "tags": ["names-file"],
         "gold_files": ["tools/retry.py"], "gold_lines": {"tools/retry.py": [[4, 10]]}},
        {"id": "q2", "source": "describe", "repo": "acme/tools", "commit": second, "commit_date": "2024-02-01",
         "query": "write invoices as csv rows for a spreadsheet", "kind": "answerable", "tags": ["gap"],
         "gold_files": ["tools/export.py"], "gold_lines": {"tools/export.py": [[4, 6]]}},
        {"id": "q3", "source": "describe", "repo": "acme/tools", "commit": second, "commit_date": "2024-02-01",
         "query": "render a 3d scene with ray tracing", "kind": "not_here", "tags": [], "gold_files": [],
         "gold_lines": {}},
    ]
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    code = main(["bench", "--labels", str(labels), "--mirrors", str(mirrors), "--work", str(tmp_path / "work"),
                 "--out", str(out), "--pipelines", "bm25,dense,hybrid,ripgrep"])
    assert code == 0
    summary = json.loads((out / "summary.json").read_text())
    pipelines = {"bm25", "dense", "hybrid"} | ({"ripgrep"} if ripgrep_available() else set())
    assert set(summary["results"]) == pipelines
    hybrid = summary["results"]["hybrid"]["quality"]["labels"]["all"]
    assert hybrid["n"] == 2 and hybrid["acc@1"] == 1.0 and hybrid["line_hit@5"] == 1.0
    assert summary["results"]["hybrid"]["not_here"]["not_here"] == 1
    assert summary["results"]["hybrid"]["latency_ms"]["total"]["p50"] > 0
    steps = [json.loads(line) for line in (out / "steps.jsonl").read_text().splitlines()]
    assert [s["commit"] for s in steps] == [first, second]
    assert steps[0]["cold"] and steps[0]["chunks_embedded"] >= 3
    assert steps[1]["chunks_embedded"] == 1  # only the new export.py function; nothing else re-embedded
    records = [json.loads(line) for line in (out / "per_query.jsonl").read_text().splitlines()]
    assert len(records) == 3 * len(pipelines)
    assert "Quality" in (out / "summary.md").read_text()


def test_a_killed_run_resumes_and_a_query_whose_gold_file_the_mirror_lacks_is_skipped(tmp_path):
    mirrors, first, second = make_repository(tmp_path)
    rows = [
        {"id": "q1", "source": "describe", "repo": "acme/tools", "commit": first, "commit_date": "2024-01-01",
         "query": "retry a failed upload with exponential backoff", "kind": "answerable", "tags": [],
         "gold_files": ["tools/retry.py"], "gold_lines": {}},
        {"id": "q2", "source": "describe", "repo": "acme/tools", "commit": second, "commit_date": "2024-02-01",
         "query": "write invoices as csv rows for a spreadsheet", "kind": "answerable", "tags": [],
         "gold_files": ["tools/export.py"], "gold_lines": {}},
    ]
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out, work = tmp_path / "out", tmp_path / "work"
    args = ["bench", "--labels", str(labels), "--mirrors", str(mirrors), "--work", str(work), "--out", str(out),
            "--pipelines", "bm25"]
    assert main(args) == 0
    records = (out / "per_query.jsonl").read_text().splitlines()
    assert len(records) == 2
    # a run killed after its first answer, mid-way through writing the second line
    (out / "per_query.jsonl").write_text(records[0] + "\n" + records[1][:40])
    assert main([*args, "--resume"]) == 0
    resumed = [json.loads(line) for line in (out / "per_query.jsonl").read_text().splitlines()]
    assert [r["id"] for r in resumed] == ["q1", "q2"]
    assert resumed[0] == json.loads(records[0])  # kept, not asked again

    # a partial mirror that lacks the gold file's blob at the second commit: that query is skipped, the rest answered
    blob = git(mirrors / "acme+tools" / "repo", "rev-parse", f"{second}:tools/export.py")
    (mirrors / "acme+tools" / "repo" / "objects" / blob[:2] / blob[2:]).unlink()
    assert main([*args, "--out", str(tmp_path / "out2")]) == 0
    summary = json.loads((tmp_path / "out2" / "summary.json").read_text())
    assert [s["id"] for s in summary["skipped"]] == ["q2"] and second in summary["skipped"][0]["commit"]
    kept = [json.loads(line) for line in (tmp_path / "out2" / "per_query.jsonl").read_text().splitlines()]
    assert [r["id"] for r in kept] == ["q1"]


def test_commit_labels_and_issues_get_cross_repo_negatives_and_descriptions_do_not(tmp_path):
    mirrors, first, second = make_repository(tmp_path)
    subprocess.run(["git", "clone", "-q", "--bare", str(mirrors / "acme+tools" / "repo"),
                    str(mirrors / "acme+other" / "repo")], check=True, env=GIT_ENV)
    common = {"commit_date": "2024-02-01", "kind": "answerable", "tags": [], "gold_lines": {}}
    rows = [
        {**common, "id": "c1", "source": "commit", "repo": "acme/tools", "commit": first,
         "query": "Write invoices as CSV rows", "gold_files": ["tools/export.py"]},
        {**common, "id": "d1", "source": "describe", "repo": "acme/tools", "commit": second,
         "query": "remember cookies a server set", "gold_files": ["tools/cookies.py"]},
        {**common, "id": "s1", "source": "swebench-lite", "repo": "acme/other", "commit": second,
         "query": "retry_upload sleeps too long between attempts", "gold_files": ["tools/retry.py"]},
    ]
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "out"
    assert main(["bench", "--labels", str(labels), "--mirrors", str(mirrors), "--work", str(tmp_path / "work"),
                 "--out", str(out), "--pipelines", "bm25", "--cross-repo-negatives"]) == 0
    records = [json.loads(line) for line in (out / "per_query.jsonl").read_text().splitlines()]
    negatives = {(r["id"], r["searched_repo"]) for r in records if r["searched"] == "cross-repo"}
    assert negatives == {("c1@acme/other", "acme/other"), ("s1@acme/tools", "acme/tools")}
    assert all(r["kind"] == "not_here" and not r["gold_files"] for r in records if r["searched"] == "cross-repo")


def test_a_commit_tree_is_written_whole_without_export_ignore_and_past_a_missing_blob(tmp_path):
    """`git archive` would leave out `export-ignore` paths (PHP packages mark their adapters so) and stop
    at a blob the mirror lacks; the bench's trees have every file the commit has, minus what is missing."""
    from noul_lsp.bench.trees import write_tree

    work = tmp_path / "php-package"
    (work / "src" / "Ftp").mkdir(parents=True)
    (work / ".gitattributes").write_text("/src/Ftp export-ignore\n")
    (work / "src" / "Ftp" / "FtpAdapter.php").write_text("<?php\nclass FtpAdapter {}\n")
    (work / "src" / "Filesystem.php").write_text("<?php\nclass Filesystem {}\n")
    (work / "bin").mkdir()
    (work / "bin" / "tool").write_text("#!/bin/sh\necho tool\n")
    (work / "bin" / "tool").chmod(0o755)
    os.symlink("Filesystem.php", work / "src" / "Alias.php")
    (work / "huge.json").write_text("[" + "1," * 1000 + "1]\n")
    git(work, "init", "-q")
    git(work, "add", "-A")
    git(work, "commit", "-qm", "package")
    commit = git(work, "rev-parse", "HEAD")
    out = tmp_path / "tree"
    assert write_tree(work / ".git", commit, out) == []
    assert (out / "src" / "Ftp" / "FtpAdapter.php").read_text() == "<?php\nclass FtpAdapter {}\n"
    assert os.readlink(out / "src" / "Alias.php") == "Filesystem.php"
    assert os.access(out / "bin" / "tool", os.X_OK)
    committed = int(git(work, "log", "-1", "--format=%ct"))
    assert int((out / "src" / "Filesystem.php").stat().st_mtime) == committed

    blob = git(work, "rev-parse", "HEAD:huge.json")  # a mirror keeps no blob over its size limit
    (work / ".git" / "objects" / blob[:2] / blob[2:]).unlink()
    assert write_tree(work / ".git", commit, out) == ["huge.json"]
    assert not (out / "huge.json").exists() and (out / "src" / "Ftp" / "FtpAdapter.php").is_file()


def test_a_long_embedding_says_how_far_it_is():
    """A cold bench of a large repository embedded for ten minutes without a line."""
    lines: list[str] = []
    seconds = iter([0.0, 30.0, 61.0, 90.0, 125.0, 200.0])
    report = embedding_progress("saleor/saleor", lines.append, every=60.0, clock=lambda: next(seconds))
    for done in (100, 200, 300, 400, 500):  # at 30 s, 61 s, 90 s, 125 s and the last batch at 200 s
        report(done, 500)
    assert lines == ["saleor/saleor: 200/500 chunks embedded (61 s)", "saleor/saleor: 400/500 chunks embedded (125 s)"]
