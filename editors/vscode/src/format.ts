// Pure formatting of results and settings: no `vscode` import, so it is unit-tested with node:test.
import type { FindHit, RootStatus, SemanticFindResult, ServerStatus } from "./lspExt";

/** Below this P(here) the picker warns that the code is probably not in the workspace. */
export const LOW_HERE = 0.3;

/** P(here) in words; `why` is the server's reason when it gave none (a narrowed search is not measured). */
export function hereText(probability: number | null, why?: string): string {
  if (probability === null || probability === undefined) {
    return why ? `P(here) ${why}` : "P(here) not calibrated";
  }
  const text = `P(here) ${probability.toFixed(2)}`;
  return probability < LOW_HERE ? `${text} — probably not in this workspace` : text;
}

/** An organisation hit's repository and path (its uri is noul-org://REPOSITORY/PATH); null for a file here. */
export function orgLocation(hit: FindHit): { repository: string; path: string } | null {
  const match = /^noul-org:\/\/[^/]*\/(.*)$/.exec(hit.uri);
  if (!hit.repository || !match) {
    return null;
  }
  return { repository: hit.repository, path: decodeURIComponent(match[1]) };
}

/** Where a hit is, as a person reads it: `repository:path` for an organisation hit, else its relative path. */
export function hitPath(hit: FindHit, folders: string[]): string {
  const org = orgLocation(hit);
  return org ? `${org.repository}:${org.path}` : relativePath(hit.uri, folders);
}

/**
 * The path of `uri` relative to the first workspace folder that contains it; in a workspace of several
 * folders it leads with the folder's name (as VS Code's own pickers do), since two folders may hold the
 * same relative path.
 */
export function relativePath(uri: string, folders: string[]): string {
  for (const folder of folders) {
    const prefix = folder.endsWith("/") ? folder : `${folder}/`;
    if (uri.startsWith(prefix)) {
      const relative = decodeURIComponent(uri.slice(prefix.length));
      const name = decodeURIComponent(prefix.slice(0, -1).split("/").pop() ?? "");
      return folders.length > 1 && name !== "" ? `${name}/${relative}` : relative;
    }
  }
  return decodeURIComponent(uri.replace(/^file:\/\//, ""));
}

export interface PickItem {
  label: string;
  description: string;
  detail: string;
  alwaysShow: boolean;
  hit: FindHit;
}

/** Whether `score` is the hit's probability among the candidates (the fitted ranker ran, in file mode). */
export function scoreIsShare(result: SemanticFindResult): boolean {
  return (result.signals?.ranking ?? "").startsWith("fitted") && result.results.every((h) => h.score > 0 && h.score <= 1);
}

function percent(value: number): string {
  return value >= 0.995 ? "100%" : value < 0.01 ? "<1%" : `${Math.round(100 * value)}%`;
}

/**
 * The one number a person reads for a hit: the calibrated chance that it is the answer when there is one,
 * else its share of the candidates' probability (fitted ranker), else its score relative to the top hit.
 */
export function scoreText(hit: FindHit, result: SemanticFindResult): string {
  if (hit.probability !== null && hit.probability !== undefined) {
    return `P(answer) ${hit.probability.toFixed(2)}`;
  }
  if (scoreIsShare(result)) {
    return `${percent(hit.score)} of candidates`;
  }
  const top = Math.max(...result.results.map((h) => h.score));
  return top > 0 ? `${percent(hit.score / top)} of top` : "";
}

/** The role of the hit's file (source, test, docs, ...), when the server says. */
export function roleOf(hit: FindHit): string {
  return hit.signals?.role ?? "";
}

/**
 * QuickPick filters and re-sorts items by the typed text matched against their labels, and there is no API
 * to turn that off (microsoft/vscode#73904): a word joiner between the characters of a label keeps the
 * text (the description of code, not a file name) from ever matching, so the server's order stays.
 */
export function unmatchable(text: string): string {
  return [...text].join("\u2060");
}

/** The preview's signature and first meaningful line, as one line. */
export function previewLine(preview: string): string {
  return preview.split("\n").map((l) => l.trim()).filter((l) => l !== "").slice(0, 2).join("  —  ");
}

export function pickItems(result: SemanticFindResult, folders: string[]): PickItem[] {
  return result.results.map((hit) => {
    const line = hit.range.start.line + 1;
    const parts = [hit.symbol ?? "", roleOf(hit), scoreText(hit, result)].filter((p) => p !== "");
    return {
      label: unmatchable(`${hitPath(hit, folders)}:${line}`),
      description: parts.join(" · "),
      detail: previewLine(hit.preview),
      alwaysShow: true,
      hit,
    };
  });
}

/** Whether a cross-encoder reranked the list, where it ran, or that the configured one was skipped. */
export function rerankText(result: SemanticFindResult): string {
  const rerank = result.signals?.rerank;
  if (!rerank || rerank === "off") {
    return "";
  }
  if (rerank === "skipped") {
    return " · rerank skipped";
  }
  return ` · reranked on ${(result.signals?.rerankDevice ?? "cpu").toUpperCase()}`;
}

export function pickerTitle(result: SemanticFindResult): string {
  const pending = result.index.pending > 0 ? ` · ${result.index.pending} chunks still embedding` : "";
  // while the index is being built a short list may only mean "not indexed yet"; on opening a workspace indexed
  // before, the server only looks for what changed since
  const indexing = !result.index.stale ? "" : result.index.checking ? " · checking for changes since the last session"
    : ` · still indexing (${result.index.files} files so far)`;
  return `${result.results.length} results for “${result.query}” · ${hereText(result.hereProbability, result.signals?.here)}` +
    `${rerankText(result)}${pending}${indexing}`;
}

/** One root in the status bar's tooltip: index, embedder and reranker, and where each runs. */
export function rootTooltip(r: RootStatus): string {
  const embedder = `${r.model} on ${r.device}${r.fallback ? ` (${r.fallback})` : ""}`;
  const reranker = r.rerankerProblem
    ? `; not reranked: ${r.rerankerProblem}`
    : r.reranker ? `; reranker ${r.reranker} on ${r.rerankerDevice ?? "not loaded"}` : "";
  const covered = r.staticModel ? `, ${r.static ?? 0} static (${r.staticModel})` : "";
  const missing = (r.staticProblem ? `; no static leg: ${r.staticProblem}` : "") +
    (r.embedderProblem ? `; no embedder: ${r.embedderProblem}` : "");
  const waiting = r.waitingFor ? `; waiting: ${r.waitingFor}` : "";
  return `${r.root}: ${r.files} files, ${r.chunks} chunks, ${r.embedded} embedded${covered}, ${embedder}${reranker}${missing}${waiting}`;
}

export function statusText(status: ServerStatus | undefined): string {
  if (!status || status.roots.length === 0) {
    return "$(search) noul";
  }
  const chunks = status.roots.reduce((sum, r) => sum + r.chunks, 0);
  const embedded = status.roots.reduce((sum, r) => sum + r.embedded, 0);
  const device = status.roots.find((r) => r.device !== "not loaded")?.device ?? "cpu";
  const share = chunks > 0 ? Math.floor((100 * embedded) / chunks) : 0;
  const busy = status.indexing ? "$(sync~spin) " : "$(search) ";
  if (status.roots.every((r) => r.embedderProblem)) { // no share will ever grow: say what searches instead
    return `${busy}noul · no embedder`;
  }
  return `${busy}noul ${share}% · ${device.toUpperCase()}`;
}
