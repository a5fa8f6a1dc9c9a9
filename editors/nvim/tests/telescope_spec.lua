-- Run by tests/test_nvim.py when $NOUL_TELESCOPE_RTP names telescope.nvim and plenary.nvim checkouts
-- (colon-separated; telescope.nvim does not install offline, so CI skips it):
--   nvim --headless -u NONE -i NONE -n -l editors/nvim/tests/telescope_spec.lua
-- Reads NOUL_PLUGIN, NOUL_PYTHON, NOUL_TEST_ROOT, NOUL_CACHE, NOUL_TEST_OUT, NOUL_TELESCOPE_RTP.
local spec = dofile(debug.getinfo(1, "S").source:sub(2):match("(.*/)") .. "spec.lua")
local env = spec.env

for _, path in ipairs(vim.split(env("NOUL_TELESCOPE_RTP"), ":", { trimempty = true })) do
  vim.opt.rtp:prepend(path)
end
vim.opt.rtp:prepend(env("NOUL_PLUGIN"))
vim.notify = function() end

local function displays(picker)
  local shown = {}
  for entry in picker.manager:iter() do
    table.insert(shown, entry.display)
  end
  return shown
end

spec.run({}, function(out)
  local noul = require("noul")
  noul.setup({ cmd = { env("NOUL_PYTHON"), "-m", "noul_lsp" }, settings = { cacheDir = env("NOUL_CACHE") } })
  local root = env("NOUL_TEST_ROOT")
  vim.cmd.cd(root)
  vim.cmd.edit(root .. "/src/net/retry.py")
  assert(noul.client(), "the client did not start")
  out.indexed = spec.wait_indexed(noul) ~= nil
  local action_state = require("telescope.actions.state")

  -- :NoulFind with no query: the live picker; the prompt is the description
  vim.cmd("NoulFind")
  vim.wait(5000, function() return vim.bo.filetype == "TelescopePrompt" end, 20)
  out.live_filetype = vim.bo.filetype
  local prompt = vim.api.nvim_get_current_buf()
  local picker = action_state.get_current_picker(prompt)
  local function title()  -- plenary's border keeps the title it was last given in one of two places
    local border = picker.results_border
    return border.title or (border._border_win_options or {}).title
  end
  local function answered(count)
    return vim.wait(30000, function()
      local shown = title()
      return picker.manager and picker.manager:num_results() >= count and shown ~= nil and shown ~= "results"
    end, 50)
  end
  picker:set_prompt("token bucket refill")
  answered(1)
  out.first = displays(picker)
  out.first_title = title()
  picker:set_prompt("least recently used cache")
  vim.wait(30000, function()
    local shown = displays(picker)
    return shown[1] and shown[1]:find("lru.cpp", 1, true) ~= nil
  end, 50)
  out.second = displays(picker)
  require("telescope.actions").select_default(prompt)
  vim.wait(5000, function() return vim.bo.filetype ~= "TelescopePrompt" end, 20)
  out.buffer = vim.api.nvim_buf_get_name(0)
  out.cursor = vim.api.nvim_win_get_cursor(0)

  -- :NoulFind QUERY with several results: Telescope lists them, P(here) in the title
  vim.cmd("NoulFind shrink a picture to a thumbnail keeping its proportions")
  vim.wait(30000, function() return vim.bo.filetype == "TelescopePrompt" end, 20)
  local listed = action_state.get_current_picker(vim.api.nvim_get_current_buf())
  vim.wait(5000, function() return listed.manager and listed.manager:num_results() > 0 end, 20)
  out.listed = displays(listed)
  out.listed_title = listed.prompt_title
end)
