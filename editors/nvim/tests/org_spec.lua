-- Run by tests/test_team.py in a real headless Neovim against the real server, whose `org` setting adds
-- the shared store's organisation index: NoulFindQf lists an organisation hit, and jumping to it opens the
-- file the server rebuilds from the store (read-only). Reads NOUL_PLUGIN, NOUL_PYTHON, NOUL_TEST_ROOT,
-- NOUL_CACHE, NOUL_STORE, NOUL_TEST_OUT; writes what it saw as JSON.
local spec = dofile(debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "spec.lua")
local env = spec.env

vim.opt.rtp:prepend(env("NOUL_PLUGIN"))
vim.notify = function() end

spec.run({}, function(out)
  local noul = require("noul")
  noul.setup({ cmd = { env("NOUL_PYTHON"), "-m", "noul_lsp" },
    settings = { cacheDir = env("NOUL_CACHE"), org = true, sharedStore = env("NOUL_STORE") } })
  local root = env("NOUL_TEST_ROOT")
  vim.cmd.cd(root)
  vim.cmd.edit(root .. "/notes.py")
  assert(noul.client(), "the client did not start")
  vim.cmd("NoulFindQf render an invoice as a PDF")
  vim.wait(60000, function()
    return #vim.fn.getqflist() > 0
  end, 50)
  out.qf = {}
  local org_index
  for index, item in ipairs(vim.fn.getqflist()) do
    local name = vim.api.nvim_buf_get_name(item.bufnr)
    table.insert(out.qf, name)
    if not org_index and name:find("^noul%-org://") then
      org_index = index
    end
  end
  assert(org_index, "no organisation hit in the quickfix list")
  vim.cmd("cc " .. org_index)
  out.buffer = vim.api.nvim_buf_get_name(0)
  out.lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
  out.modifiable = vim.bo.modifiable
  out.filetype = vim.bo.filetype
  out.cursor = vim.api.nvim_win_get_cursor(0)
end)
