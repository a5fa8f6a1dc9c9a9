-- noul: find code by describing it. A thin client of the noul-lsp language server.
local M = {}

M.config = {
  -- How to start the server; e.g. { "python3", "-m", "noul_lsp" } for a virtual environment's python.
  cmd = { "noul-lsp" },
  -- Sent as initializationOptions and workspace/didChangeConfiguration (see the server's README).
  settings = {},
  -- Results per find (a count before the command overrides it: `:3NoulFind ...`).
  limit = 10,
  -- What marks a workspace root; the current directory when none is found.
  root_markers = { ".git", "pyproject.toml", "package.json", "Cargo.toml", "go.mod", ".noulignore" },
  -- "select" (vim.ui.select) or "telescope" when telescope.nvim is installed.
  picker = "select",
  -- Below this P(here) the results come with a warning that the code is probably not here.
  low_here = 0.3,
}

local FIND = "workspace/semanticFind"

local function notify(message, level)
  vim.notify("noul: " .. message, level or vim.log.levels.INFO)
end

--- The workspace root for a buffer.
function M.root(bufnr)
  local name = vim.api.nvim_buf_get_name(bufnr or 0)
  local found = name ~= "" and vim.fs.root(name, M.config.root_markers) or nil
  return found or vim.fn.getcwd()
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
    init_options = { noul = M.config.settings },
    settings = { noul = M.config.settings },
  }, { bufnr = bufnr })
  return id and vim.lsp.get_client_by_id(id) or nil
end

--- Human words for P(here).
function M.here_text(here)
  if here == nil or here == vim.NIL then
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

--- Quickfix-style items from a semanticFind result.
function M.items(result)
  local items = {}
  for _, hit in ipairs(result.results or {}) do
    local preview = (hit.preview or ""):match("[^\n]*") or ""
    local symbol = (hit.symbol ~= nil and hit.symbol ~= vim.NIL) and hit.symbol or ""
    table.insert(items, {
      filename = vim.uri_to_fname(hit.uri),
      lnum = hit.range.start.line + 1,
      end_lnum = hit.range["end"].line + 1,
      col = 1,
      text = string.format("%s  %.4f  %s", symbol, hit.score, preview),
      user_data = hit,
    })
  end
  return items
end

local function jump(item)
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

local function show(query, result, opts)
  local items = M.items(result)
  local here = M.here_text(result.hereProbability) .. M.rerank_text(result.signals)
  local pending = result.index and result.index.pending or 0
  if pending and pending > 0 then
    here = here .. string.format(" (%d chunks still being embedded)", pending)
  end
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
    jump(items[1])
    notify(here)
  elseif M.config.picker == "telescope" and pcall(require, "telescope") then
    require("noul.telescope").pick(query, items, here)
  else
    vim.ui.select(items, {
      prompt = string.format("noul (%s)", here),
      format_item = function(item)
        return string.format("%s:%d  %s", vim.fn.fnamemodify(item.filename, ":."), item.lnum, item.text)
      end,
    }, function(choice)
      if choice then
        jump(choice)
      end
    end)
  end
end

--- Run a find. opts: limit, quickfix (fill the quickfix list), on_done(result) for callers and tests.
function M.find(query, opts)
  opts = opts or {}
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
    notify("could not start the server (" .. table.concat(M.config.cmd, " ") .. ")", vim.log.levels.ERROR)
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

function M.setup(opts)
  M.config = vim.tbl_deep_extend("force", M.config, opts or {})
  local function count(args)
    return args.count > 0 and args.count or nil
  end
  vim.api.nvim_create_user_command("NoulFind", function(args)
    M.find(args.args, { limit = count(args) })
  end, { nargs = "*", count = true, desc = "Find code by describing it" })
  vim.api.nvim_create_user_command("NoulFindQf", function(args)
    M.find(args.args, { limit = count(args), quickfix = true })
  end, { nargs = "*", count = true, desc = "Find code by describing it, into the quickfix list" })
  vim.api.nvim_create_autocmd("BufEnter", {
    group = vim.api.nvim_create_augroup("noul", { clear = true }),
    callback = function(event)
      attach_if_running(event.buf)
    end,
  })
  vim.api.nvim_create_user_command("NoulStatus", function()
    local status, problem = M.status()
    notify(status and vim.inspect(status) or problem)
  end, { desc = "Show the noul index state" })
end

return M
