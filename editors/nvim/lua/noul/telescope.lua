-- A Telescope picker for noul results (used when picker = "telescope" and telescope.nvim is installed).
local M = {}

function M.pick(query, items, here)
  local pickers = require("telescope.pickers")
  local finders = require("telescope.finders")
  local conf = require("telescope.config").values
  pickers.new({}, {
    prompt_title = string.format("noul: %s (%s)", query, here),
    finder = finders.new_table({
      results = items,
      entry_maker = function(item)
        return {
          value = item,
          display = string.format("%s:%d  %s", vim.fn.fnamemodify(item.filename, ":."), item.lnum, item.text),
          ordinal = item.filename .. " " .. item.text,
          filename = item.filename,
          lnum = item.lnum,
        }
      end,
    }),
    previewer = conf.grep_previewer({}),
    sorter = conf.generic_sorter({}),
  }):find()
end

return M
