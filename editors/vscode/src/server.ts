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

/** The user's words for the command line a server is started with. */
export function commandLine(command: ServerCommand): string {
  return [command.command, ...command.args].join(" ");
}

/**
 * What a person reads when the server did not start: the command line, why (`detail`: the last line the
 * interpreter printed, or the start error), and which setting to change. Nothing else says it: the client
 * library's own message ("couldn't create connection to server") names neither.
 */
export function startProblem(command: ServerCommand, detail: string): string {
  const setting = command.args.length > 0
    ? "Set noul.pythonPath to a Python that has noul-lsp installed (pip install -e <your noul-lsp checkout>), " +
      "or noul.serverPath to its noul-lsp executable"
    : "Set noul.serverPath to the noul-lsp executable (or leave it empty and set noul.pythonPath)";
  const why = detail.trim() === "" ? "" : `: ${detail.trim()}`;
  return `noul: the server did not start (${commandLine(command)})${why}. ${setting}, then run "Noul: Restart Server".`;
}
