-- Run by tests/test_nvim.py in a real headless Neovim against the real server:
--   nvim --headless -u NONE -i NONE -n -l editors/nvim/tests/find_spec.lua
-- Reads NOUL_PLUGIN, NOUL_PYTHON, NOUL_TEST_ROOT, NOUL_CACHE, NOUL_TEST_OUT; writes what it saw as JSON.
local out = { errors = {} }
local spec = dofile(debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "spec.lua")
local env = spec.env

vim.opt.rtp:prepend(env("NOUL_PLUGIN"))
local messages = {}
vim.notify = function(message, level)
  table.insert(messages, message)
end

local ok, problem = pcall(function()
  local noul = require("noul")
  noul.setup({ cmd = { env("NOUL_PYTHON"), "-m", "noul_lsp", "--log-file", env("NOUL_SERVER_LOG") },
    settings = { cacheDir = env("NOUL_CACHE") } })
  local root = env("NOUL_TEST_ROOT")
  vim.cmd.cd(root)
  vim.cmd.edit(root .. "/src/net/retry.py")
  assert(noul.client(), "the client did not start")
  out.status = spec.wait_indexed(noul)
  out.indexed = out.status ~= nil

  vim.cmd("NoulFindQf limit how many API calls a client can make per second")
  vim.wait(30000, function()
    return #vim.fn.getqflist() > 0
  end, 20)
  local qf = vim.fn.getqflist({ title = 1, items = 1 })
  out.qf_title = qf.title
  out.qf = {}
  for _, item in ipairs(qf.items) do
    table.insert(out.qf, { file = vim.api.nvim_buf_get_name(item.bufnr), lnum = item.lnum, text = item.text })
  end

  out.rerank_texts = {
    noul.rerank_text({ rerank = "cross-encoder/ms-marco-MiniLM-L-6-v2", rerankDevice = "cuda" }),
    noul.rerank_text({ rerank = "skipped" }),
    noul.rerank_text({ rerank = "off" }),
    noul.rerank_text(vim.NIL),
  }

  vim.cmd("cclose")
  vim.cmd("enew")
  vim.cmd("1NoulFind shrink a picture to a thumbnail keeping its proportions")
  vim.wait(30000, function()
    return vim.api.nvim_buf_get_name(0):match("Thumbnailer%.java$") ~= nil
  end, 20)
  out.buffer = vim.api.nvim_buf_get_name(0)
  out.cursor = vim.api.nvim_win_get_cursor(0)

  -- hover through the standard LSP request, inside the range the find returned
  local params = vim.lsp.util.make_position_params(0, "utf-16")
  local responses = vim.lsp.buf_request_sync(0, "textDocument/hover", params, 5000) or {}
  for _, response in pairs(responses) do
    if response.result and response.result.contents then
      out.hover = response.result.contents.value
    end
  end

  -- search as you type: three words typed one after the other, faster than the debounce
  vim.cmd("enew")
  local live = noul.live(0, { limit = 5 })
  local answers = {}
  local function on_result(result, query)
    table.insert(answers, { query = query, count = #result.results, first = noul.items(result)[1] })
  end
  for _, text in ipairs({ "token", "token bucket", "token bucket refill" }) do
    live.search(text, on_result)
    vim.wait(80)
  end
  vim.wait(30000, function()
    return #answers > 0
  end, 20)
  vim.wait(500)
  -- and with pauses longer than the debounce: the request in flight is cancelled by the next word
  for _, text in ipairs({ "least recently", "least recently used cache" }) do
    live.search(text, on_result)
    vim.wait(210)
  end
  vim.wait(30000, function()  -- until the last text is answered ("least recently" may be answered first
    return #answers > 1 and answers[#answers].query == "least recently used cache"  -- on a loaded machine)
  end, 20)
  live.stop()
  out.live = answers

  -- no Telescope here: :NoulFind asks with vim.ui.input and lists with vim.ui.select
  vim.ui.input = function(_, on_confirm)
    on_confirm("retry failed uploads")
  end
  vim.ui.select = function(items, select_opts, on_choice)
    out.select_prompt = select_opts.prompt
    out.select_items = vim.tbl_map(select_opts.format_item, items)
    on_choice(items[1])
  end
  vim.cmd("NoulFind")
  vim.wait(30000, function()
    return vim.api.nvim_buf_get_name(0):match("retry%.py$") ~= nil
  end, 20)
  out.select_buffer = vim.api.nvim_buf_get_name(0)
  out.select_cursor = vim.api.nvim_win_get_cursor(0)
  local select_hover = vim.lsp.buf_request_sync(0, "textDocument/hover", vim.lsp.util.make_position_params(0, "utf-16"), 5000) or {}
  for _, response in pairs(select_hover) do
    if response.result and response.result.contents then
      out.select_hover = response.result.contents.value
    end
  end

  -- what a person meets beside the main flow
  local saved = noul.config.settings
  noul.config.settings = {}
  out.empty_settings_json = vim.json.encode({ noul = noul.settings_section() })
  noul.config.settings = saved
  local module_hit = { uri = vim.uri_from_fname(root .. "/src/net/retry.py"), preview = "import time",
    range = { start = { line = 0, character = 0 }, ["end"] = { line = 2, character = 0 } },
    score = 0.4, probability = 0.03, signals = { role = "source" } }
  out.module_hit_text = noul.items({ results = { module_hit } })[1].text
  out.option_problems = noul.option_problems({ cmd = "noul-lsp", picker = "bogus", colour = 1, limit = 3 })
  out.stale_summary = noul.summary({ hereProbability = 0.5, index = { files = 3, pending = 0, stale = true } })
  out.checking_summary = noul.summary({ hereProbability = 0.5,
    index = { files = 2998, pending = 0, stale = true, checking = true } })
  local uri_buffer = vim.api.nvim_create_buf(true, false)
  vim.api.nvim_buf_set_name(uri_buffer, "fugitive://" .. root .. "/.git//0/src/net/retry.py")
  out.uri_buffer_root = noul.root(uri_buffer)
  out.root = noul.root(vim.api.nvim_get_current_buf())
  local status = noul.status(2000)
  out.status_text = status and noul.status_text(status) or ""
  out.nested_status_text = noul.status_text({ roots = {}, nested = { { folder = "/w/app/pkg", indexedWith = "/w/app" } } })
  out.team_status_text = noul.status_text({ roots = { { root = "/w/app", files = 1, chunks = 2, embedded = 2,
    model = "m", device = "cpu", waitingFor = "pid 7" } }, sharedStore = "bob@db:5432/noul", org = true,
    unopened = { { folder = "/w/ro", problem = "read-only" } } })

  -- setup() reports a wrong option and leaves the caller's table as it was (a plugin manager may reuse it)
  local given = { picker = "bogus", debounce_ms = 150 }
  noul.setup(given)
  out.given_after_setup = { picker = given.picker, debounce_ms = given.debounce_ms, used = noul.config.picker,
    debounce_used = noul.config.debounce_ms }

  vim.cmd("checkhealth noul")
  out.health = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
end)
if not ok then
  table.insert(out.errors, tostring(problem))
end
out.messages = messages
vim.fn.writefile({ vim.json.encode(out) }, env("NOUL_TEST_OUT"))
for _, client in ipairs(vim.lsp.get_clients()) do
  client:stop()
end
vim.wait(3000, function()
  return #vim.lsp.get_clients() == 0
end, 50)
