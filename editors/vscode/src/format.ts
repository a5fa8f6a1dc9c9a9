// Pure formatting of results and settings: no `vscode` import, so it is unit-tested with node:test.
import type { FindHit, RootStatus, SemanticFindResult, ServerStatus } from "./lspExt";

/** Below this P(here) the picker warns that the code is probably not in the workspace. */
export const LOW_HERE = 0.3;

export function hereText(probability: number | null): string {
  if (probability === null || probability === undefined) {
    return "P(here) not calibrated";
  }
  const text = `P(here) ${probability.toFixed(2)}`;
  return probability < LOW_HERE ? `${text} — probably not in this workspace` : text;
}

/** The path of `uri` relative to the first workspace folder that contains it. */
export function relativePath(uri: string, folders: string[]): string {
  for (const folder of folders) {
    const prefix = folder.endsWith("/") ? folder : `${folder}/`;
    if (uri.startsWith(prefix)) {
      return decodeURIComponent(uri.slice(prefix.length));
    }
  }
  return decodeURIComponent(uri.replace(/^file:\/\//, ""));
}

export interface PickItem {
  label: string;
  description: string;
  detail: string;
  hit: FindHit;
}

export function pickItems(result: SemanticFindResult, folders: string[]): PickItem[] {
  return result.results.map((hit) => {
    const line = hit.range.start.line + 1;
    const symbol = hit.symbol ? `  ${hit.symbol}` : "";
    const firstLine = (hit.preview.split("\n")[0] ?? "").trim();
    return {
      label: `${relativePath(hit.uri, folders)}:${line}`,
      description: `${symbol.trim()}  score ${hit.score.toFixed(4)}`.trim(),
      detail: firstLine,
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
  return `${result.results.length} results for “${result.query}” · ${hereText(result.hereProbability)}` +
    `${rerankText(result)}${pending}`;
}

/** One root in the status bar's tooltip: index, embedder and reranker, and where each runs. */
export function rootTooltip(r: RootStatus): string {
  const embedder = `${r.model} on ${r.device}${r.fallback ? ` (${r.fallback})` : ""}`;
  const reranker = r.rerankerProblem
    ? `; not reranked: ${r.rerankerProblem}`
    : r.reranker ? `; reranker ${r.reranker} on ${r.rerankerDevice ?? "not loaded"}` : "";
  return `${r.root}: ${r.files} files, ${r.chunks} chunks, ${r.embedded} embedded, ${embedder}${reranker}`;
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
  return `${busy}noul ${share}% · ${device.toUpperCase()}`;
}
