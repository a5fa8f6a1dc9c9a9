// How the server process is started from the user's settings (pure, unit-tested).

export interface ServerSettings {
  serverPath: string;
  pythonPath: string;
}

export interface ServerCommand {
  command: string;
  args: string[];
}

export function serverCommand(settings: ServerSettings): ServerCommand {
  if (settings.serverPath.trim() !== "") {
    return { command: settings.serverPath.trim(), args: [] };
  }
  return { command: settings.pythonPath.trim() || "python3", args: ["-m", "noul_lsp"] };
}

export interface EngineSettings {
  limit: number;
  model: string;
  reranker: string;
  /** the static model of the instant dense leg ("" = the server's default, "none" = off) */
  staticModel?: string;
  /** a team's PostgreSQL + pgvector store ("" = the server's $NOUL_SHARED_STORE, else none) */
  sharedStore?: string;
  /** also search the shared store's organisation index */
  org?: boolean;
  excludes: string[];
  useGpu: boolean;
}

/** What the server gets as initializationOptions / didChangeConfiguration (its "noul" section). */
export function serverSettings(settings: EngineSettings): Record<string, unknown> {
  const section: Record<string, unknown> = { limit: settings.limit, excludes: settings.excludes, useGpu: settings.useGpu };
  if (settings.model.trim() !== "") {
    section.model = settings.model.trim();
  }
  if (settings.reranker.trim() !== "") {
    section.reranker = settings.reranker.trim();
  }
  if ((settings.staticModel ?? "").trim() !== "") {
    section.staticModel = settings.staticModel!.trim();
  }
  if ((settings.sharedStore ?? "").trim() !== "") {
    section.sharedStore = settings.sharedStore!.trim();
  }
  if (settings.org) {
    section.org = true;
  }
  return { noul: section };
}

/** Settings whose change needs a new server process. */
export const RESTART_SETTINGS = ["noul.serverPath", "noul.pythonPath"];
