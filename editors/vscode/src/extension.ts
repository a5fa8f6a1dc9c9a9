// VS Code client of noul-lsp: starts the server, offers "Noul: Find by Description", shows indexing.
import { execFile } from "node:child_process";

import * as vscode from "vscode";
import { LanguageClient, LanguageClientOptions, ServerOptions, TransportKind } from "vscode-languageclient/node";

import { orgLocation, PickItem, pickItems, pickerTitle, rootTooltip, statusText } from "./format";
import { LiveSearch } from "./liveSearch";
import { SemanticFindResult, semanticFind, ServerStatus } from "./lspExt";
import { RESTART_SETTINGS, ServerCommand, serverCommand, serverSettings, startProblem } from "./server";

let client: LanguageClient | undefined;
/** Why the server is not running, when its last start failed (what every command then says). */
let notStarted: string | undefined;
let statusItem: vscode.StatusBarItem;
let statusTimer: NodeJS.Timeout | undefined;

function settings() {
  const config = vscode.workspace.getConfiguration("noul");
  return {
    serverPath: config.get<string>("serverPath", ""),
    pythonPath: config.get<string>("pythonPath", "python3"),
    limit: config.get<number>("limit", 10),
    model: config.get<string>("model", ""),
    reranker: config.get<string>("reranker", ""),
    staticModel: config.get<string>("staticModel", ""),
    sharedStore: config.get<string>("sharedStore", ""),
    org: config.get<boolean>("org", false),
    excludes: config.get<string[]>("excludes", []),
    useGpu: config.get<boolean>("useGpu", true),
  };
}

function createClient(command: ServerCommand): LanguageClient {
  const serverOptions: ServerOptions = { command: command.command, args: command.args, transport: TransportKind.stdio };
  const clientOptions: LanguageClientOptions = {
    documentSelector: [{ scheme: "file" }],
    initializationOptions: serverSettings(settings()),
    synchronize: { configurationSection: "noul" },
    middleware: {
      workspace: {
        // The server reads one "noul" section; send it in the shape it expects.
        configuration: async () => [serverSettings(settings()).noul],
      },
    },
  };
  return new LanguageClient("noul", "noul", serverOptions, clientOptions);
}

/**
 * Why `command` cannot serve: the interpreter's last line when it cannot import noul_lsp (a Python without
 * noul-lsp), the spawn error when the program is not there. Asked only after a start failed, without
 * blocking the extension host (Python's first import on a cold disk takes seconds).
 */
function diagnose(command: ServerCommand, error: unknown): Promise<string> {
  const args = command.args[0] === "-m" ? ["-c", "import noul_lsp"] : ["--version"];
  return new Promise((resolve) => {
    execFile(command.command, args, { encoding: "utf8", timeout: 20000 }, (failure, _stdout, stderr) => {
      const said = `${stderr ?? ""}`.trim().split("\n").pop() ?? "";
      if (failure && said !== "") {
        resolve(said);
      } else if (failure) {
        resolve(failure.message);
      } else {
        resolve(error instanceof Error ? error.message : String(error));
      }
    });
  });
}

/** Starts are queued: a folder added, a setting changed or Restart run while one is under way waits for it
 * (two at once left a second server running that nothing stopped). */
let starting: Promise<void> = Promise.resolve();
/** Whether a start is under way (a command meanwhile says so, not that the server is down). */
let launching = false;

function startServer(): Promise<void> {
  starting = starting.then(restart, restart);
  return starting;
}

/**
 * (Re)starts the server. A start that fails leaves no client, says why and how to mend it once, and every
 * command repeats it; "Noul: Restart Server" (or changing noul.pythonPath / noul.serverPath) tries again.
 */
async function restart(): Promise<void> {
  launching = true;
  try {
    await launch();
  } finally {
    launching = false;
  }
  await refreshStatus();
}

async function launch(): Promise<void> {
  const previous = client;
  client = undefined;
  if (previous) {
    await previous.stop().catch(() => undefined);
  }
  const command = serverCommand(settings());
  const next = createClient(command);
  try {
    await next.start();
    client = next;
    notStarted = undefined;
  } catch (error) {
    await next.stop().catch(() => undefined);
    notStarted = startProblem(command, await diagnose(command, error));
    void vscode.window.showErrorMessage(notStarted, "Open Settings").then((choice) => {
      if (choice) {
        void vscode.commands.executeCommand("workbench.action.openSettings", "noul.pythonPath");
      }
    });
  }
}

/** The server is running; otherwise say why not (starting, or the failed start's reason) and return false. */
function running(): boolean {
  if (client?.isRunning()) {
    return true;
  }
  if (launching) {
    void vscode.window.showInformationMessage("noul: the server is starting; try again in a moment.");
  } else {
    void vscode.window.showErrorMessage(notStarted ?? "noul: the server is not running; run \"Noul: Restart Server\".");
  }
  return false;
}

async function refreshStatus(): Promise<void> {
  if (!client || !client.isRunning()) {
    statusItem.text = "$(search) noul (stopped)";
    statusItem.tooltip = notStarted;
    return;
  }
  try {
    const status = (await client.sendRequest("workspace/executeCommand", { command: "noul.status", arguments: [] })) as ServerStatus;
    statusItem.text = statusText(status);
    statusItem.tooltip = [
      ...status.roots.map(rootTooltip),
      ...(status.nested ?? []).map((n) => `${n.folder}: served by the index of ${n.indexedWith}`),
      ...(status.unopened ?? []).map((u) => `${u.folder}: not indexed (${u.problem})`),
      ...(status.sharedStore ? [`shared store ${status.sharedStore}${status.org ? ", organisation searched" : ""}`] : []),
    ].join("\n");
  } catch {
    statusItem.text = "$(search) noul";
  }
}

/**
 * "Noul: Find by Description": a QuickPick whose items follow the text (debounced; the request in flight is
 * cancelled with $/cancelRequest when the text changes). Moving through the items previews each range;
 * Enter opens the active item, or searches the text now when no item is shown for it yet.
 */
function findByDescription(): void {
  if (!running()) {
    return;
  }
  // where the person was: Escape returns there from the previews (as VS Code's own pickers do)
  const origin = vscode.window.activeTextEditor;
  let previewed = false;
  let accepted = false;
  const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.toString());
  const picker = vscode.window.createQuickPick<PickItem>();
  picker.title = "Noul: Find by Description";
  picker.placeholder = "Describe the code you are looking for, e.g. where do we retry failed uploads with backoff";
  picker.matchOnDescription = false;
  picker.matchOnDetail = false;
  const live = new LiveSearch<SemanticFindResult>({
    delayMs: vscode.workspace.getConfiguration("noul").get<number>("searchDelay", 200),
    start: (query) => {
      const source = new vscode.CancellationTokenSource();
      const answer = client!.sendRequest(semanticFind, { query, limit: settings().limit }, source.token);
      answer.then(() => source.dispose(), () => source.dispose());
      return { answer, cancel: () => source.cancel() };
    },
    onResult: (_query, result) => {
      picker.title = pickerTitle(result);
      picker.items = pickItems(result, folders);
    },
    onError: (query, error) => {
      picker.title = `noul: “${query}” failed: ${error instanceof Error ? error.message : String(error)}`;
      picker.items = [];
    },
    onBusy: (busy) => {
      picker.busy = busy;
    },
  });
  const reveal = async (item: PickItem, preview: boolean) => {
    const range = client!.protocol2CodeConverter.asRange(item.hit.range);
    // an organisation hit: its repository travels in the query (a uri's authority is case-folded)
    const org = orgLocation(item.hit);
    const uri = org
      ? vscode.Uri.from({ scheme: "noul-org", path: `/${org.path}`, query: `repository=${encodeURIComponent(org.repository)}` })
      : vscode.Uri.parse(item.hit.uri);
    const document = await vscode.workspace.openTextDocument(uri);
    await vscode.window.showTextDocument(document, { selection: range, preview, preserveFocus: preview });
  };
  picker.onDidChangeValue((value) => {
    if (value.trim() === "") { // nothing asked: no answer to an older text stays on screen
      picker.items = [];
      picker.title = "Noul: Find by Description";
    }
    live.update(value);
  });
  picker.onDidChangeActive((items) => {
    if (items[0] && live.current) {
      previewed = true;
      void reveal(items[0], true);
    }
  });
  picker.onDidAccept(() => {
    const chosen = picker.activeItems[0];
    if (!chosen || !live.current) {
      live.flush(picker.value); // no item for this text yet: search it now, as Enter did before
      return;
    }
    accepted = true;
    picker.hide();
    void reveal(chosen, false);
  });
  picker.onDidHide(() => {
    live.dispose();
    picker.dispose();
    if (!accepted && previewed && origin) {
      void vscode.window.showTextDocument(origin.document, { viewColumn: origin.viewColumn, selection: origin.selection });
    }
  });
  picker.show();
}

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  statusItem = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 10);
  statusItem.command = "noul.showStatus";
  statusItem.text = "$(search) noul";
  statusItem.show();
  context.subscriptions.push(statusItem);

  // An organisation hit (noul.org) has no file here: the server rebuilds it from the shared store's chunks,
  // as the configured database role may see it, and VS Code shows it read-only.
  const orgDocuments: vscode.TextDocumentContentProvider = {
    provideTextDocumentContent: async (uri) => {
      const repository = new URLSearchParams(uri.query).get("repository") ?? "";
      const answer = await client?.sendRequest<{ text: string }>("workspace/executeCommand",
        { command: "noul.orgDocument", arguments: [repository, uri.path.replace(/^\//, "")] });
      return answer?.text ?? "";
    },
  };
  // Registered before the server starts, so that a server that cannot start still has commands that say
  // why. The ids differ from the server's own commands (noul.reindex, noul.status, noul.orgDocument), which
  // the language client registers itself while the server runs: a second registration of one throws.
  context.subscriptions.push(
    vscode.workspace.registerTextDocumentContentProvider("noul-org", orgDocuments),
    vscode.commands.registerCommand("noul.findByDescription", findByDescription),
    vscode.commands.registerCommand("noul.reindexWorkspace", async () => {
      if (running()) {
        await client!.sendRequest("workspace/executeCommand", { command: "noul.reindex", arguments: [] });
        void vscode.window.showInformationMessage("noul: re-indexing the workspace");
      }
    }),
    vscode.commands.registerCommand("noul.showStatus", async () => {
      await refreshStatus();
      if (running()) {
        void vscode.window.showInformationMessage(String(statusItem.tooltip ?? statusItem.text));
      }
    }),
    vscode.commands.registerCommand("noul.restartServer", startServer),
    vscode.workspace.onDidChangeConfiguration(async (event) => {
      if (RESTART_SETTINGS.some((name) => event.affectsConfiguration(name))) {
        await startServer();
      }
    }),
  );
  statusTimer = setInterval(() => void refreshStatus(), 3000);
  // A window with no folder has nothing to index: the server (a Python process) starts with the first folder.
  let started = false;
  context.subscriptions.push(vscode.workspace.onDidChangeWorkspaceFolders(async () => {
    if (!started && hasFolder()) {
      started = true;
      await startServer();
    }
  }));
  if (hasFolder()) {
    started = true;
    await startServer();
  } else {
    notStarted = "noul: open a folder to search it";
    await refreshStatus();
  }
}

function hasFolder(): boolean {
  return (vscode.workspace.workspaceFolders ?? []).length > 0;
}

export async function deactivate(): Promise<void> {
  if (statusTimer) {
    clearInterval(statusTimer);
  }
  await client?.stop();
}
