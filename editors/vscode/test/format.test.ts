import { strict as assert } from "node:assert";
import { test } from "node:test";

import { hereText, pickerTitle, pickItems, previewLine, relativePath, rootTooltip, scoreText, statusText, unmatchable } from "../src/format";
import type { SemanticFindResult } from "../src/lspExt";
import { SEMANTIC_FIND_METHOD, semanticFind } from "../src/lspExt";
import { serverCommand, serverSettings, startProblem } from "../src/server";

const result: SemanticFindResult = {
  query: "retry uploads",
  hereProbability: 0.08,
  results: [
    {
      uri: "file:///work/app/src/net/retry.py",
      range: { start: { line: 20, character: 0 }, end: { line: 29, character: 4 } },
      rank: 1,
      score: 0.0327868,
      probability: null,
      preview: "def upload_with_retry(client, blob):\n    policy = policy or RetryPolicy()",
      signals: { bm25Rank: 1, denseRank: 2, role: "source" },
      symbol: "upload_with_retry",
    },
  ],
  index: { files: 12, chunks: 40, pending: 3, stale: false },
  timings: { total: 12.5 },
};

test("P(here) is shown with a plain warning when low", () => {
  assert.equal(hereText(null), "P(here) not calibrated");
  assert.equal(hereText(null, "not measured for a narrowed search"), "P(here) not measured for a narrowed search");
  assert.equal(hereText(0.91), "P(here) 0.91");
  assert.equal(hereText(0.08), "P(here) 0.08 — probably not in this workspace");
});

const bare = (label: string) => label.replace(/\u2060/g, "");

test("pick items show path:line, symbol, role, a labelled score and the preview", () => {
  const [item] = pickItems(result, ["file:///work/app"]);
  assert.equal(bare(item.label), "src/net/retry.py:21");
  assert.equal(item.description, "upload_with_retry · source · 100% of top");
  assert.equal(item.detail, "def upload_with_retry(client, blob):  —  policy = policy or RetryPolicy()");
  assert.equal(item.alwaysShow, true);
  assert.equal(relativePath("file:///elsewhere/a%20b.py", ["file:///work/app"]), "/elsewhere/a b.py");
});

test("an organisation hit is labelled repository:path", () => {
  const org = { ...result, results: [{ ...result.results[0], uri: "noul-org://team%2Falpha/billing/in%20voice.py",
    repository: "team/alpha" }] };
  const [item] = pickItems(org, ["file:///work/app"]);
  assert.equal(bare(item.label), "team/alpha:billing/in voice.py:21");
});

test("labels never match the typed text, so QuickPick keeps the server's order", () => {
  const [item] = pickItems(result, ["file:///work/app"]);
  assert.ok(!item.label.includes("retry"));
  assert.equal(unmatchable("ab"), "a\u2060b");
});

test("the score is the calibrated P, else the share among candidates, else relative to the top", () => {
  const hits = [
    { ...result.results[0], score: 0.62, probability: null },
    { ...result.results[0], rank: 2, score: 0.005, probability: null },
  ];
  const fitted: SemanticFindResult = { ...result, results: hits, signals: { ranking: "fitted (m@128)" } };
  assert.equal(scoreText(hits[0], fitted), "62% of candidates");
  assert.equal(scoreText(hits[1], fitted), "<1% of candidates");
  const fused: SemanticFindResult = { ...result, results: hits, signals: { ranking: "fusion" } };
  assert.equal(scoreText(hits[1], fused), "<1% of top");
  assert.equal(scoreText({ ...hits[0], probability: 0.791 }, fitted), "P(answer) 0.79");
  assert.equal(previewLine("\n  def f(x):\n\n  return x\n"), "def f(x):  —  return x");
});

test("the picker title carries the count, P(here) and pending embeddings", () => {
  assert.equal(pickerTitle(result), "1 results for “retry uploads” · P(here) 0.08 — probably not in this workspace · 3 chunks still embedding");
});

test("the picker title says while the index is still being built", () => {
  const building = { ...result, index: { files: 40, chunks: 120, pending: 0, stale: true } };
  assert.match(pickerTitle(building), / · still indexing \(40 files so far\)$/);
  assert.doesNotMatch(pickerTitle(result), /indexing/);
  // a workspace indexed before, looked over on opening: not "still indexing (2998 files so far)"
  const checking = { ...result, index: { files: 2998, chunks: 8400, pending: 0, stale: true, checking: true } };
  assert.match(pickerTitle(checking), / · checking for changes since the last session$/);
  assert.doesNotMatch(pickerTitle(checking), /indexing/);
});

test("in a workspace of several folders a hit's path leads with its folder's name", () => {
  const folders = ["file:///work/app", "file:///work/my%20lib"];
  assert.equal(relativePath("file:///work/app/src/a.py", folders), "app/src/a.py");
  assert.equal(relativePath("file:///work/my%20lib/src/a.py", folders), "my lib/src/a.py");
  assert.equal(relativePath("file:///work/app/src/a.py", ["file:///work/app"]), "src/a.py");
});

test("a server that did not start is explained with its command line, the reason and the setting to change", () => {
  const python = startProblem({ command: "python3", args: ["-m", "noul_lsp"] }, "ModuleNotFoundError: No module named 'noul_lsp'\n");
  assert.equal(python, "noul: the server did not start (python3 -m noul_lsp): ModuleNotFoundError: No module named 'noul_lsp'. " +
    "Set noul.pythonPath to a Python that has noul-lsp installed (pip install -e <your noul-lsp checkout>), " +
    "or noul.serverPath to its noul-lsp executable, then run \"Noul: Restart Server\".");
  assert.match(startProblem({ command: "/opt/noul-lsp", args: [] }, "spawnSync /opt/noul-lsp ENOENT"),
    /^noul: the server did not start \(\/opt\/noul-lsp\): spawnSync \/opt\/noul-lsp ENOENT\. Set noul.serverPath/);
});

test("the picker title says where the reranker ran, or that it was skipped", () => {
  const reranked = { ...result, signals: { rerank: "cross-encoder/ms-marco-MiniLM-L-6-v2", rerankDevice: "cuda" } };
  assert.match(pickerTitle(reranked), / · reranked on CUDA · 3 chunks still embedding$/);
  assert.match(pickerTitle({ ...result, signals: { rerank: "skipped" } }), / · rerank skipped · /);
  assert.doesNotMatch(pickerTitle({ ...result, signals: { rerank: "off" } }), /rerank/);
});

test("the status bar shows the embedded share and the device", () => {
  assert.equal(statusText(undefined), "$(search) noul");
  const status = { version: "0.1.0", indexing: true, roots: [
    { root: "/a", files: 1, chunks: 200, embedded: 50, pending: 150, model: "m", device: "cpu", fallback: "", index: "/i" }] };
  assert.equal(statusText(status), "$(sync~spin) noul 25% · CPU");
  const lexical = { ...status, indexing: false, roots: [{ ...status.roots[0], embedderProblem: "unknown embedder 'x'" }] };
  assert.equal(statusText(lexical), "$(search) noul · no embedder");
  assert.match(rootTooltip(lexical.roots[0]), /; no embedder: unknown embedder 'x'$/);
});

test("the server starts from serverPath, else from the python interpreter", () => {
  assert.deepEqual(serverCommand({ serverPath: "", pythonPath: "/venv/bin/python" }), { command: "/venv/bin/python", args: ["-m", "noul_lsp"] });
  assert.deepEqual(serverCommand({ serverPath: " /usr/bin/noul-lsp ", pythonPath: "python3" }), { command: "/usr/bin/noul-lsp", args: [] });
  assert.deepEqual(serverSettings({ limit: 5, model: "", reranker: "", excludes: ["vendor/"], useGpu: false }),
    { noul: { limit: 5, excludes: ["vendor/"], useGpu: false } });
  assert.deepEqual(serverSettings({ limit: 5, model: "", reranker: " ms-marco-minilm-l-6-v2 ", excludes: [], useGpu: true }),
    { noul: { limit: 5, reranker: "ms-marco-minilm-l-6-v2", excludes: [], useGpu: true } });
  assert.deepEqual(serverSettings({ limit: 5, model: "", reranker: "", staticModel: "none", excludes: [], useGpu: true }),
    { noul: { limit: 5, excludes: [], useGpu: true, staticModel: "none" } });
});

test("the custom request is typed once with the server's method name", () => {
  assert.equal(SEMANTIC_FIND_METHOD, "workspace/semanticFind");
  assert.equal(semanticFind.method, "workspace/semanticFind");
});

test("the tooltip names each root's models and where they run", () => {
  const root = { root: "/a", files: 3, chunks: 9, embedded: 9, pending: 0, model: "m@256", device: "cpu", fallback: "no CUDA", index: "/i" };
  assert.equal(rootTooltip(root), "/a: 3 files, 9 chunks, 9 embedded, m@256 on cpu (no CUDA)");
  assert.equal(rootTooltip({ ...root, reranker: "ms-marco-minilm-l-6-v2", rerankerDevice: "cuda" }),
    "/a: 3 files, 9 chunks, 9 embedded, m@256 on cpu (no CUDA); reranker ms-marco-minilm-l-6-v2 on cuda");
  assert.match(rootTooltip({ ...root, reranker: "x", rerankerProblem: "not downloaded" }), /; not reranked: not downloaded$/);
  assert.match(rootTooltip({ ...root, waitingFor: "the index at /i is being updated by pid 7; wait for it to finish" }),
    /; waiting: the index at \/i is being updated by pid 7; wait for it to finish$/);
  assert.equal(rootTooltip({ ...root, static: 9, staticModel: "s@512" }),
    "/a: 3 files, 9 chunks, 9 embedded, 9 static (s@512), m@256 on cpu (no CUDA)");
  assert.match(rootTooltip({ ...root, staticProblem: "missing" }), /; no static leg: missing$/);
});
