-- noul: find code by describing it. A thin client of the noul-lsp language server.
local M = {}

M.config = {
  -- How to start the server; e.g. { "python3", "-m", "noul_lsp" } for a virtual environment's python.
  cmd = { "noul-lsp" },
  -- Sent as initializationOptions and workspace/didChangeConfiguration (see the server's README).
  settings = {},
  -- Results per find; nil: the server's `limit` setting (default 10). A count before the command
  -- overrides both: `:3NoulFind ...`.
  limit = nil,
  -- What marks a workspace root; the current directory when none is found.
  root_markers = { ".git", "pyproject.toml", "package.json", "Cargo.toml", "go.mod", ".noulignore" },
  -- "auto": a live Telescope picker when telescope.nvim is installed, else vim.ui.input + vim.ui.select;
  -- or "telescope" / "select".
  picker = "auto",
  -- Milliseconds the live picker waits after the last key before it searches.
  debounce_ms = 200,
  -- Below this P(here) the results come with a warning that the code is probably not here.
  low_here = 0.3,
}

local FIND = "workspace/semanticFind"

local function notify(message, level)
  vim.notify("noul: " .. message, level or vim.log.levels.INFO)
end

--- Whether a buffer is a file on disk: not a terminal, a help page or a `scheme://` buffer (fugitive, oil,
--- health), whose names are no paths to look for a root from.
local function is_file_buffer(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr)
  return name ~= "" and vim.bo[bufnr].buftype == "" and not name:match("^%a[%w+.-]*://")
end

--- The workspace root for a buffer: its file's, else the current directory's (a buffer that is no file).
function M.root(bufnr)
  bufnr = bufnr or 0
  local from = is_file_buffer(bufnr) and vim.api.nvim_buf_get_name(bufnr) or vim.fn.getcwd()
  return vim.fs.root(from, M.config.root_markers) or vim.fn.getcwd()
end

--- The settings section: an empty table is sent as an object ({}), not as a list ([]), which the server
--- would refuse with a warning on every start.
function M.settings_section()
  return next(M.config.settings) == nil and vim.empty_dict() or M.config.settings
end

--- The noul client already running for `root` (or any noul client); never starts or attaches one.
function M.running_client(root)
  local clients = vim.tbl_filter(function(c)
    return not c:is_stopped()
  end, vim.lsp.get_clients({ name = "noul" }))
  for _, client in ipairs(clients) do
    if client.config.root_dir == root then
      return client
    end
  end
  return clients[1]
end

--- The running noul client for the buffer's root, started (or reused) with vim.lsp.start.
function M.client(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local root = M.root(bufnr)
  for _, client in ipairs(vim.lsp.get_clients({ name = "noul" })) do
    if client.config.root_dir == root and not client:is_stopped() then
      if not vim.lsp.buf_is_attached(bufnr, client.id) then
        vim.lsp.buf_attach_client(bufnr, client.id)
      end
      return client
    end
  end
  local id = vim.lsp.start({
    name = "noul",
    cmd = M.config.cmd,
    root_dir = root,
    init_options = { noul = M.settings_section() },
    settings = { noul = M.settings_section() },
  }, { bufnr = bufnr })
  return id and vim.lsp.get_client_by_id(id) or nil
end

--- Human words for P(here); `why` is the server's reason when it gave none (a narrowed search is not measured).
function M.here_text(here, why)
  if here == nil or here == vim.NIL then
    if type(why) == "string" and why ~= "" then
      return "P(here) " .. why
    end
    return "P(here) not calibrated"
  end
  local text = string.format("P(here) %.2f", here)
  if here < M.config.low_here then
    text = text .. " — probably not in this workspace"
  end
  return text
end

--- Whether a cross-encoder reranked the list and where, or that the configured one was skipped.
function M.rerank_text(signals)
  local rerank = type(signals) == "table" and signals.rerank or nil
  if rerank == nil or rerank == vim.NIL or rerank == "off" then
    return ""
  end
  if rerank == "skipped" then
    return "; rerank skipped"
  end
  return "; reranked on " .. string.upper(signals.rerankDevice or "cpu")
end

--- Whether each hit's score is its probability among the candidates (the fitted ranker ran).
local function score_is_share(result)
  local ranking = type(result.signals) == "table" and result.signals.ranking or nil
  if type(ranking) ~= "string" or ranking:sub(1, 6) ~= "fitted" then
    return false
  end
  for _, hit in ipairs(result.results or {}) do
    if hit.score <= 0 or hit.score > 1 then
      return false
    end
  end
  return true
end

local function percent(value)
  if value >= 0.995 then
    return "100%"
  elseif value < 0.01 then
    return "<1%"
  end
  return string.format("%d%%", math.floor(100 * value + 0.5))
end

--- The one number a person reads for a hit (as the CLI and VS Code): the calibrated P(answer), else its
--- share of the candidates' probability, else its score relative to the top hit.
function M.score_text(hit, result)
  if hit.probability ~= nil and hit.probability ~= vim.NIL then
    return string.format("P(answer) %.2f", hit.probability)
  end
  if score_is_share(result) then
    return percent(hit.score) .. " of candidates"
  end
  local top = 0
  for _, h in ipairs(result.results or {}) do
    top = math.max(top, h.score)
  end
  return top > 0 and (percent(hit.score / top) .. " of top") or ""
end

local function present(value)
  return value ~= nil and value ~= vim.NIL and value ~= ""
end

--- Quickfix-style items from a semanticFind result; text: symbol · role · score, then the preview on one line.
function M.items(result)
  local items = {}
  for _, hit in ipairs(result.results or {}) do
    local preview = {}
    for line in (hit.preview or ""):gmatch("[^\n]+") do
      if vim.trim(line) ~= "" and #preview < 2 then
        table.insert(preview, vim.trim(line))
      end
    end
    local role = type(hit.signals) == "table" and hit.signals.role or nil
    local parts = {}
    local candidates = { hit.symbol, role, M.score_text(hit, result) }
    for i = 1, 3 do -- not ipairs: a hit without a symbol (module-level code) would end the list at once
      if present(candidates[i]) then
        table.insert(parts, candidates[i])
      end
    end
    table.insert(items, {
      filename = vim.uri_to_fname(hit.uri),
      lnum = hit.range.start.line + 1,
      end_lnum = hit.range["end"].line + 1,
      col = 1,
      text = table.concat(parts, " · ") .. "  " .. table.concat(preview, " — "),
      user_data = hit,
    })
  end
  return items
end

--- Search as you type: `search(text, on_result)` waits `debounce_ms` after the last call, cancels the request
--- in flight ($/cancelRequest) when the text changes, and calls on_result(result, query) only for the last
--- text. `stop()` cancels everything. Used by the Telescope picker; tested headless.
function M.live(bufnr, opts)
  opts = opts or {}
  local client = M.client(bufnr)
  local timer = assert(vim.uv.new_timer())
  local state = { text = "", request_id = nil }
  local live = {}
  local function cancel()
    if state.request_id and client then
      client:cancel_request(state.request_id)
    end
    state.request_id = nil
  end
  function live.search(text, on_result)
    text = vim.trim(text or "")
    if text == state.text then
      return
    end
    state.text = text
    timer:stop()
    cancel()
    if text == "" or not client then
      return
    end
    timer:start(opts.debounce_ms or M.config.debounce_ms, 0, vim.schedule_wrap(function()
      if state.text ~= text then
        return
      end
      local ok, id = client:request(FIND, { query = text, limit = opts.limit or M.config.limit }, function(err, result)
        if state.text ~= text then
          return
        end
        state.request_id = nil
        if err then
          notify(err.message or vim.inspect(err), vim.log.levels.ERROR)
        else
          on_result(result, text)
        end
      end, bufnr)
      state.request_id = ok and id or nil
    end))
  end
  function live.stop()
    state.text = ""
    timer:stop()
    if not timer:is_closing() then
      timer:close()
    end
    cancel()
  end
  return live
end

local function telescope_available()
  return M.config.picker ~= "select" and pcall(require, "telescope")
end

function M.jump(item)
  vim.cmd.edit(vim.fn.fnameescape(item.filename))
  vim.api.nvim_win_set_cursor(0, { item.lnum, 0 })
  vim.cmd("normal! zz")
  M.client(vim.api.nvim_get_current_buf()) -- attach, so vim.lsp.buf.hover shows the result's scores
end

--- Attach a buffer to the running noul client of its root, if there is one (never starts a server).
local function attach_if_running(bufnr)
  if vim.bo[bufnr].buftype ~= "" or vim.api.nvim_buf_get_name(bufnr) == "" then
    return
  end
  local root = M.root(bufnr)
  for _, client in ipairs(vim.lsp.get_clients({ name = "noul" })) do
    if client.config.root_dir == root and not vim.lsp.buf_is_attached(bufnr, client.id) then
      vim.lsp.buf_attach_client(bufnr, client.id)
    end
  end
end

--- P(here), the reranker, and what is still being embedded or indexed: the title of a result list (while
--- the first index is built, few results may only mean "not indexed yet").
function M.summary(result)
  local signals = type(result.signals) == "table" and result.signals or {}
  local here = M.here_text(result.hereProbability, signals.here) .. M.rerank_text(result.signals)
  local index = type(result.index) == "table" and result.index or {}
  if (index.pending or 0) > 0 then
    here = here .. string.format(" (%d chunks still being embedded)", index.pending)
  end
  if index.stale == true and index.checking == true then
    -- a workspace indexed before, looked over on opening for what changed since: not being built
    here = here .. " (checking for changes since the last session)"
  elseif index.stale == true then
    here = here .. string.format(" (still indexing: %d files so far)", index.files or 0)
  end
  return here
end

local function show(query, result, opts)
  local items = M.items(result)
  local here = M.summary(result)
  if opts.quickfix then
    vim.fn.setqflist({}, " ", { title = string.format("noul: %s — %s", query, here), items = items })
    if not opts.silent then
      vim.cmd("copen")
    end
    notify(string.format("%d results; %s", #items, here))
    return
  end
  if #items == 0 then
    notify("no results; " .. here, vim.log.levels.WARN)
  elseif #items == 1 then
    M.jump(items[1])
    notify(here)
  elseif telescope_available() then
    require("noul.telescope").pick(query, items, here)
  else
    vim.ui.select(items, {
      prompt = string.format("noul (%s)", here),
      format_item = function(item)
        return string.format("%s:%d  %s", vim.fn.fnamemodify(item.filename, ":."), item.lnum, item.text)
      end,
    }, function(choice)
      if choice then
        M.jump(choice)
      end
    end)
  end
end

--- Run a find. opts: limit, quickfix (fill the quickfix list), on_done(result) for callers and tests.
function M.find(query, opts)
  opts = opts or {}
  if (query == nil or vim.trim(query) == "") and not opts.quickfix and telescope_available() then
    require("noul.telescope").live(vim.api.nvim_get_current_buf(), opts)
    return
  end
  if query == nil or vim.trim(query) == "" then
    vim.ui.input({ prompt = "Find by description: " }, function(input)
      if input and vim.trim(input) ~= "" then
        M.find(input, opts)
      end
    end)
    return
  end
  local bufnr = vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  if not client then
    notify("could not start the server (" .. table.concat(M.config.cmd, " ") .. "): set `cmd` in "
      .. "require('noul').setup{}, e.g. { '/path/to/noul-lsp/.venv/bin/python', '-m', 'noul_lsp' }; "
      .. ":checkhealth noul says more", vim.log.levels.ERROR)
    return
  end
  local params = { query = query, limit = opts.limit or M.config.limit }
  client:request(FIND, params, function(err, result)
    if err then
      notify(err.message or vim.inspect(err), vim.log.levels.ERROR)
      return
    end
    show(query, result, opts)
    if opts.on_done then
      opts.on_done(result)
    end
  end, bufnr)
end

--- The server's `noul.status`, synchronously (for :checkhealth and :NoulStatus).
function M.status(timeout_ms)
  local client = M.running_client(M.root(0))
  if not client then
    return nil, "no noul server is running for " .. M.root(0) .. " (run :NoulFind once)"
  end
  local response = client:request_sync("workspace/executeCommand", { command = "noul.status", arguments = {} },
    timeout_ms or 2000, 0)
  if not response then
    return nil, "no answer"
  end
  if response.err then
    return nil, response.err.message
  end
  return response.result
end

--- The server's status as a person reads it: one line per root (files, chunks, embedded share, model and
--- device), and whether indexing is still running.
function M.status_text(status)
  local lines = {}
  for _, root in ipairs(status.roots or {}) do
    local share = root.chunks > 0 and root.embedded / root.chunks or 0
    table.insert(lines, string.format("%s: %d files, %d chunks, %.0f%% embedded, %s on %s%s", root.root, root.files,
      root.chunks, 100 * share, tostring(root.model), tostring(root.device),
      root.waitingFor and ("; waiting: " .. root.waitingFor) or ""))
  end
  for _, nested in ipairs(status.nested or {}) do
    table.insert(lines, string.format("%s: served by the index of %s", nested.folder, nested.indexedWith))
  end
  for _, unopened in ipairs(status.unopened or {}) do
    table.insert(lines, string.format("%s: not indexed (%s)", unopened.folder, unopened.problem))
  end
  if type(status.sharedStore) == "string" then
    table.insert(lines, "shared store " .. status.sharedStore .. (status.org and ", organisation searched" or ""))
  end
  if status.indexing then
    table.insert(lines, "indexing is still running")
  end
  return #lines > 0 and table.concat(lines, "\n") or "no workspace folder"
end

--- An organisation hit (the server's `org` setting) has no file here: its buffer is the file as the server
--- rebuilds it from the shared store's chunks, for the database role it connects as; read-only.
function M.read_org_document(bufnr, uri)
  local client
  for _, candidate in ipairs(vim.lsp.get_clients({ name = "noul" })) do
    if not candidate:is_stopped() then
      client = candidate
      break
    end
  end
  local lines = { "noul: no noul server is running to read " .. uri .. " (run :NoulFind once)" }
  if client then
    local response = client:request_sync("workspace/executeCommand",
      { command = "noul.orgDocument", arguments = { uri } }, 10000, bufnr)
    if response and response.result then
      lines = vim.split(response.result.text, "\n", { plain = true })
    else
      lines = { "noul: " .. ((response and response.err and response.err.message) or "no answer") }
    end
  end
  vim.bo[bufnr].buftype = "nofile"
  vim.bo[bufnr].swapfile = false
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, lines)
  vim.bo[bufnr].modifiable = false
  vim.bo[bufnr].readonly = true
  local filetype = vim.filetype.match({ filename = uri:gsub("^noul%-org://[^/]*/", "") })
  if filetype then
    vim.bo[bufnr].filetype = filetype
  end
end

--- The options setup() knows, and what each must be (vim.validate's type names, or a list of choices).
local OPTION_TYPES = {
  cmd = "table", settings = "table", limit = "number", root_markers = "table", debounce_ms = "number",
  low_here = "number", picker = { "auto", "telescope", "select" },
}

--- What is wrong with one option given to setup(), or nil.
local function option_problem(key, value)
  local wanted = OPTION_TYPES[key]
  if wanted == nil then
    local known = vim.tbl_keys(OPTION_TYPES)
    table.sort(known)
    return string.format("unknown option %q (known: %s)", key, table.concat(known, ", "))
  elseif type(wanted) == "table" and not vim.tbl_contains(wanted, value) then
    return string.format("%s must be one of %s, not %s", key, table.concat(wanted, ", "), vim.inspect(value))
  elseif type(wanted) == "string" and type(value) ~= wanted then
    return string.format("%s must be a %s, not %s%s", key, wanted, vim.inspect(value),
      key == "cmd" and " (a list: { 'noul-lsp' } or { python, '-m', 'noul_lsp' })" or "")
  end
end

--- Problems with the options given to setup(), one line each, sorted (an empty list when there is none).
function M.option_problems(opts)
  local problems = {}
  for key, value in pairs(opts) do
    local problem = option_problem(key, value)
    if problem then
      table.insert(problems, problem)
    end
  end
  table.sort(problems)
  return problems
end

function M.setup(opts)
  if vim.fn.has("nvim-0.11") == 0 then
    notify("Neovim 0.11 or newer is needed", vim.log.levels.ERROR)
    return
  end
  local problems = M.option_problems(opts or {})
  local valid = {} -- the caller's table is left as it was (a plugin manager may give it again)
  for key, value in pairs(opts or {}) do
    if option_problem(key, value) == nil then
      valid[key] = value
    end
  end
  if #problems > 0 then -- keep the defaults of what is wrong, and say so once
    notify("setup: " .. table.concat(problems, "; "), vim.log.levels.WARN)
  end
  M.config = vim.tbl_deep_extend("force", M.config, valid)
  local function count(args)
    return args.count > 0 and args.count or nil
  end
  vim.api.nvim_create_user_command("NoulFind", function(args)
    M.find(args.args, { limit = count(args) })
  end, { nargs = "*", count = true, desc = "Find code by describing it" })
  vim.api.nvim_create_user_command("NoulFindQf", function(args)
    M.find(args.args, { limit = count(args), quickfix = true })
  end, { nargs = "*", count = true, desc = "Find code by describing it, into the quickfix list" })
  local group = vim.api.nvim_create_augroup("noul", { clear = true })
  vim.api.nvim_create_autocmd("BufEnter", {
    group = group,
    callback = function(event)
      attach_if_running(event.buf)
    end,
  })
  vim.api.nvim_create_autocmd("BufReadCmd", {
    group = group,
    pattern = "noul-org://*",
    callback = function(event)
      M.read_org_document(event.buf, event.match)
    end,
  })
  vim.api.nvim_create_user_command("NoulStatus", function()
    local status, problem = M.status()
    notify(status and M.status_text(status) or problem)
  end, { desc = "Show the noul index state" })
end

return M
