// The custom request of noul-lsp, typed once. Mirrors noul_lsp/lsp/protocol.py.
import { RequestType } from "vscode-languageserver-protocol";

export interface Position {
  line: number;
  character: number;
}

export interface Range {
  start: Position;
  end: Position;
}

export interface SemanticFindParams {
  query: string;
  limit?: number;
  mode?: "files" | "chunks";
  include?: string[];
  exclude?: string[];
  workDoneToken?: string | number;
}

export interface FindSignals {
  bm25Rank?: number;
  denseRank?: number;
  rerankScore?: number;
  /** What the hit's file is: source, test, docs, example, changelog, config, generated, notebook, other. */
  role?: string;
}

export interface FindHit {
  uri: string;
  range: Range;
  rank: number;
  /** With the fitted ranker (file mode): the hit's probability among the candidates, falling with rank. */
  score: number;
  /** The calibrated probability that this hit is the answer; null when the model pair is not calibrated. */
  probability: number | null;
  preview: string;
  signals: FindSignals;
  symbol?: string | null;
  /** An organisation hit's repository; its uri is then noul-org://REPOSITORY/PATH (no file on this disk). */
  repository?: string | null;
}

export interface FindIndexState {
  files: number;
  chunks: number;
  pending: number;
  stale: boolean;
  embedded?: number;
  device?: string;
  /** With `stale`: the server is looking over an index built before for what changed (on opening), not building it. */
  checking?: boolean;
}

export interface SemanticFindResult {
  query: string;
  hereProbability: number | null;
  results: FindHit[];
  index: FindIndexState;
  timings: Record<string, number>;
  notes?: string[];
  /**
   * How the answer was made: ranking "fitted (<model>)" or "fusion"; rerank is the cross-encoder's id, "off"
   * or "skipped"; rerankDevice "cpu" | "cuda"; here: why no P(here) was given (a narrowed search is not measured).
   */
  signals?: { ranking?: string; rerank?: string; rerankDevice?: string; rerankFallback?: string; here?: string };
}

export interface RootStatus {
  root: string;
  files: number;
  chunks: number;
  embedded: number;
  pending: number;
  model: string | null;
  device: string;
  fallback: string;
  /** why this root searches without its embedder (missing, refused), null when it has one */
  embedderProblem?: string | null;
  index: string;
  /** chunks the static leg covers, its model key (null: none), and why it is missing */
  static?: number;
  staticModel?: string | null;
  staticProblem?: string | null;
  reranker?: string | null;
  rerankerDevice?: string;
  rerankerProblem?: string | null;
  /** another process updating this index (a second editor's server, `noul index`): this one waits for it */
  waitingFor?: string;
}

export interface ServerStatus {
  version: string;
  indexing: boolean;
  roots: RootStatus[];
  /** workspace folders inside another one, served by that one's index */
  nested?: { folder: string; indexedWith: string }[];
  /** workspace folders whose index could not be opened, with why */
  unopened?: { folder: string; problem: string }[];
  /** the team's shared store in use (user@host:port/database, never its password), and whether finds search
   * the organisation index too */
  sharedStore?: string | null;
  org?: boolean;
}

export const SEMANTIC_FIND_METHOD = "workspace/semanticFind";

export const semanticFind = new RequestType<SemanticFindParams, SemanticFindResult, void>(SEMANTIC_FIND_METHOD);
