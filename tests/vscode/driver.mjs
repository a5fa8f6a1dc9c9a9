// Drives a real VS Code (code-server in headless Chromium) as a person would: the palette, "Noul: Find
// by Description", a description typed word by word into the live picker, Enter on the top item, a hover
// over the opened range. Started by tests/test_vscode.py; every input comes from the environment:
//   PW_CORE   playwright-core's index.mjs       CHROMIUM  the chromium binary
//   URL       code-server's URL with ?folder=   OUTDIR    where the PNGs and result.json go
//   WORDS     JSON array of the words to type   LOGS_DIR  VS Code's logs (the "noul" output channel)
//   INDEX_TIMEOUT_S, FIND_TIMEOUT_S
// Writes result.json (what it saw, stage by stage) and exits 0 when the flow ran to the end; the test
// asserts on the contents.
import fs from "node:fs";
import path from "node:path";

const env = process.env;
const { chromium } = await import(env.PW_CORE);
const outdir = env.OUTDIR;
const words = JSON.parse(env.WORDS);
const query = words.join(" ");
const indexTimeout = Number(env.INDEX_TIMEOUT_S || 300) * 1000;
const findTimeout = Number(env.FIND_TIMEOUT_S || 120) * 1000;
const t0 = Date.now();
const log = (msg) => process.stderr.write(`[driver ${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}\n`);
const result = { ok: false, stage: "launch", query, items: [], title: "", opened: null, hover: null, screenshots: {}, timings: {} };

function finish(code) {
  fs.writeFileSync(path.join(outdir, "result.json"), JSON.stringify(result, null, 2));
  process.exit(code);
}

const browser = await chromium.launch({ executablePath: env.CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
const page = await browser.newPage({ viewport: { width: 1280, height: 760 } });

async function shot(name, clip) {
  const file = path.join(outdir, name);
  await page.screenshot({ path: file, clip });
  result.screenshots[name.replace(/\.png$/, "")] = file;
  return file;
}

async function fail(reason) {
  result.reason = reason;
  log(`FAIL at ${result.stage}: ${reason}`);
  try { await shot(`fail-${result.stage}.png`); } catch { /* the page may be gone */ }
  await browser.close().catch(() => {});
  finish(1);
}

/** The element's box grown by `margin`, kept inside the viewport (a screenshot clip). */
async function clipOf(selectors, margin = 12) {
  const boxes = [];
  for (const s of selectors) {
    const b = await page.locator(s).first().boundingBox().catch(() => null);
    if (b) boxes.push(b);
  }
  if (boxes.length === 0) return undefined;
  const vp = page.viewportSize();
  const x = Math.max(0, Math.min(...boxes.map((b) => b.x)) - margin);
  const y = Math.max(0, Math.min(...boxes.map((b) => b.y)) - margin);
  const right = Math.min(vp.width, Math.max(...boxes.map((b) => b.x + b.width)) + margin);
  const bottom = Math.min(vp.height, Math.max(...boxes.map((b) => b.y + b.height)) + margin);
  return { x, y, width: right - x, height: bottom - y };
}

// A server that does not start shows up as a toast or in the "noul" output channel's log file.
const SERVER_DOWN = /noul server crashed|Server initialization failed|couldn't create connection to server|Couldn't start client noul|Pending response rejected since connection got disposed/i;
function noulLog() {
  const found = [];
  const walk = (dir) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/-noul\.log$/.test(e.name)) found.push(p);
    }
  };
  try { walk(env.LOGS_DIR); } catch { return ""; }
  return found.map((f) => fs.readFileSync(f, "utf8")).join("\n");
}
const toasts = () => page.$$eval(".notifications-toasts .notification-toast, .notifications-center .notification-list-item",
  (els) => els.map((e) => e.innerText.replace(/\s+/g, " ").trim()).filter(Boolean));
const statusItems = () => page.$$eval(".statusbar-item", (els) => els.map((e) => e.textContent.trim()).filter(Boolean));

async function serverDown() {
  const toast = (await toasts()).find((t) => SERVER_DOWN.test(t));
  const line = noulLog().split("\n").find((l) => SERVER_DOWN.test(l));
  return toast || line ? `the noul server is down: ${(line || toast).trim()}` : "";
}

/** Polls `probe` until it returns something truthy; fails on timeout or (unless told not to) as soon as the
 * server is down. */
async function until(ms, what, probe, pollMs = 250, failIfDown = true) {
  const end = Date.now() + ms;
  for (;;) {
    const got = await probe();
    if (got) return got;
    const down = failIfDown ? await serverDown() : "";
    if (down) await fail(down);
    if (Date.now() > end) await fail(`timed out after ${ms / 1000}s waiting for ${what}; status bar: ${JSON.stringify(await statusItems())}`);
    await page.waitForTimeout(pollMs);
  }
}

const bare = (s) => s.replace(/\u2060/g, "");

/** Runs a command from the palette (F1), as a person does: its title typed, its row focused, Enter. */
async function runCommand(title) {
  await page.keyboard.press("F1");
  await page.waitForSelector(".quick-input-widget .quick-input-box input", { state: "visible", timeout: 20000 });
  await page.keyboard.type(title);
  await until(20000, `“${title}” in the palette`, () => page.$$eval(".quick-input-widget .monaco-list-row.focused",
    (els, t) => els.some((e) => (e.getAttribute("aria-label") || "").startsWith(t)), title), 250, env.EXPECT !== "no-server");
  await page.keyboard.press("Enter");
}

try {
  result.stage = "workbench";
  await page.goto(env.URL, { timeout: 90000 });
  await page.waitForSelector(".monaco-workbench", { timeout: 90000 });
  log("workbench loaded");

  if (env.EXPECT === "no-server") {
    // noul.pythonPath names no interpreter: the start's message says so, and a command repeats it
    result.stage = "start message";
    result.startMessage = await until(60000, "the message that the server did not start",
      async () => (await toasts()).find((t) => /did not start/.test(t)), 500, false);
    await runCommand("Notifications: Clear All Notifications");
    await runCommand("Noul: Find by Description");
    result.stage = "find message";
    result.findMessage = await until(20000, "the message of a command without a server",
      async () => (await toasts()).find((t) => /did not start|not found/.test(t)), 500, false);
    result.toasts = await toasts();
    result.statusBar = await statusItems();
    result.ok = true;
    result.stage = "done";
    await browser.close();
    finish(0);
  }

  result.stage = "index";
  const tIndex = Date.now();
  result.statusBar = await until(indexTimeout, "the index (status bar 'noul 100%')",
    async () => (await statusItems()).find((s) => /noul 100%/.test(s)), 1000);
  result.timings.index = (Date.now() - tIndex) / 1000;
  log(`index ready: ${result.statusBar}`);

  // Every command of the extension is there: "Show Index Status" answers with the index in a message (a
  // command the extension failed to register answers "command 'noul.showStatus' not found").
  result.stage = "status";
  await runCommand("Noul: Show Index Status");
  result.statusMessage = await until(20000, "the index status message", async () =>
    (await toasts()).find((t) => /\d+ files, \d+ chunks|not found|did not start/.test(t)));
  result.toasts = await toasts();
  log(`status: ${result.statusMessage}`);
  await runCommand("Notifications: Clear All Notifications");

  result.stage = "palette";
  await runCommand("Noul: Find by Description");

  result.stage = "picker";
  await until(20000, "the live picker", () => page.$eval(".quick-input-widget .quick-input-box input",
    (e) => /Describe the code/.test(e.getAttribute("placeholder") || e.getAttribute("aria-label") || "")).catch(() => false));
  // Word by word, as a person types: faster than the debounce within and between words.
  for (const [i, word] of words.entries()) {
    await page.keyboard.type((i > 0 ? " " : "") + word, { delay: 35 });
    await page.waitForTimeout(90);
  }
  const tFind = Date.now();

  result.stage = "results";
  result.title = await until(findTimeout, `results for “${query}”`, () => page.$eval(".quick-input-widget .quick-input-title",
    (e, q) => (e.textContent.includes(`results for “${q}”`) ? e.textContent.trim() : ""), query).catch(() => ""));
  result.timings.find = (Date.now() - tFind) / 1000;
  await page.waitForTimeout(1200); // the top item's preview opens behind the picker
  // The list is virtual: take the screenshot first, then scroll with the wheel to read every row.
  const picked = await clipOf([".quick-input-widget"]);
  const readRows = () => page.$$eval(".quick-input-widget .quick-input-list .monaco-list-row", (els) => els.map((e) => ({
    index: Number(e.dataset.index),
    setsize: Number(e.getAttribute("aria-setsize")),
    label: e.querySelector(".quick-input-list-row .label-name")?.textContent.trim() ?? "",
    description: e.querySelector(".quick-input-list-row .label-description")?.textContent.trim() ?? "",
    detail: e.querySelector(".quick-input-list-label-meta .label-name")?.textContent.trim() ?? "",
  })));
  await shot("quickpick.png", picked);
  const rows = new Map();
  const list = await page.$eval(".quick-input-widget .quick-input-list", (e) => {
    const r = e.getBoundingClientRect();
    return { x: r.x + r.width / 2, y: r.y + Math.min(r.height / 2, 100) };
  });
  for (let i = 0; i < 20; i++) {
    const seenRows = await readRows();
    for (const r of seenRows) rows.set(r.index, { ...r, label: bare(r.label) });
    if (seenRows.length === 0 || rows.size >= seenRows[0].setsize) break;
    await page.mouse.move(list.x, list.y);
    await page.mouse.wheel(0, 250);
    await page.waitForTimeout(300);
  }
  await page.mouse.wheel(0, -5000);
  await page.waitForTimeout(300);
  result.items = [...rows.values()].sort((a, b) => a.index - b.index);
  if (result.items.length === 0) await fail(`the picker has no items (title: ${result.title})`);
  log(`${result.items.length} items, top ${result.items[0].label}; ${result.title}`);

  result.stage = "open";
  await page.keyboard.press("Enter");
  await until(10000, "the picker to close",
    () => page.$eval(".quick-input-widget", (e) => getComputedStyle(e).display === "none").catch(() => true));
  const top = result.items[0].label;
  const base = path.basename(top.replace(/:\d+$/, ""));
  await until(20000, `an editor on ${base}`, () => page.$eval(".tabs-container .tab.active",
    (e, b) => (e.getAttribute("aria-label") || "").split(",")[0].trim() === b, base).catch(() => false));
  // The status bar says where the cursor is and how much is selected once the selection is applied.
  const cursor = await until(10000, "the selection", async () =>
    (await statusItems()).find((t) => /^Ln \d+, Col \d+ \(\d+ selected\)/.test(t)));
  result.opened = await page.evaluate(() => {
    const tab = document.querySelector(".tabs-container .tab.active");
    const crumbs = [...document.querySelectorAll(".editor-group-container.active .breadcrumbs-control .monaco-breadcrumb-item")]
      .map((e) => e.textContent.trim());
    return { tab: (tab?.getAttribute("aria-label") || "").split(",")[0].trim(), preview: !!tab?.classList.contains("italic"), crumbs };
  });
  const [, ln, col, selected] = cursor.match(/^Ln (\d+), Col (\d+) \((\d+) selected\)/).map(Number);
  Object.assign(result.opened, { cursor, line: ln, column: col, selected });
  log(`opened ${result.opened.crumbs.join("/")} (${cursor})`);

  result.stage = "hover";
  const startLine = Number(top.match(/:(\d+)$/)[1]);
  const hoverText = () => page.$$eval(".monaco-hover", (els) => els.filter((e) => e.offsetParent !== null)
    .map((e) => e.innerText).find((t) => /noul/.test(t)) || "");
  for (const line of [startLine, ln]) {
    const at = await page.evaluate((wanted) => {
      const group = document.querySelector(".editor-group-container.active");
      const num = [...group.querySelectorAll(".margin-view-overlays .line-numbers")].find((e) => e.textContent.trim() === String(wanted));
      if (!num) return null;
      const y = num.getBoundingClientRect().top;
      const row = [...group.querySelectorAll(".view-lines .view-line")].find((l) => Math.abs(l.getBoundingClientRect().top - y) < 2);
      const text = row && [...row.querySelectorAll("span span")].find((s) => s.textContent.trim() !== "");
      if (!text) return null;
      const r = text.getBoundingClientRect();
      return { x: r.left + Math.min(r.width / 2, 20), y: r.top + r.height / 2 };
    }, line);
    if (!at) continue;
    await page.mouse.move(at.x - 40, at.y + 30);
    await page.mouse.move(at.x, at.y, { steps: 4 });
    const end = Date.now() + 8000;
    while (Date.now() < end && !(await hoverText())) await page.waitForTimeout(250);
    if (await hoverText()) {
      result.hover = { line, at, text: await hoverText() };
      break;
    }
  }
  if (!result.hover) await fail("no noul hover over the opened range");
  const box = await clipOf([".monaco-hover:visible"], 0);
  if (box) {
    const { at } = result.hover;
    const x = Math.max(0, Math.min(box.x, at.x - 120) - 16);
    const y = Math.max(0, Math.min(box.y, at.y - 24) - 16);
    const right = Math.min(page.viewportSize().width, Math.max(box.x + box.width, at.x + 200) + 16);
    const bottom = Math.min(page.viewportSize().height, Math.max(box.y + box.height, at.y + 24) + 16);
    await shot("hover.png", { x, y, width: right - x, height: bottom - y });
  }
  log(`hover on line ${result.hover.line}: ${result.hover.text.split("\n")[0]}`);

  result.ok = true;
  result.stage = "done";
  await browser.close();
  finish(0);
} catch (err) {
  await fail(String(err && err.stack ? err.stack.split("\n").slice(0, 3).join(" | ") : err));
}
