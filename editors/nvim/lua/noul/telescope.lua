-- Telescope pickers for noul (used when telescope.nvim is installed and picker is not "select").
local M = {}

local function entry_maker(item)
  local display = string.format("%s:%d  %s", vim.fn.fnamemodify(item.filename, ":."), item.lnum, item.text)
  return { value = item, display = display, ordinal = display, filename = item.filename, lnum = item.lnum }
end

--- The results of one find, filtered by Telescope as usual.
function M.pick(query, items, here)
  local pickers = require("telescope.pickers")
  local finders = require("telescope.finders")
  local conf = require("telescope.config").values
  pickers.new({}, {
    prompt_title = string.format("noul: %s (%s)", query, here),
    finder = finders.new_table({ results = items, entry_maker = entry_maker }),
    previewer = conf.grep_previewer({}),
    sorter = conf.generic_sorter({}),
  }):find()
end

--- Search as you type: the prompt is the description; each change is debounced and the request in flight
--- cancelled (noul.live), the items keep the server's order (highlighter_only sorts nothing), the results
--- title shows P(here). Enter jumps to the range, and hover there shows its scores.
function M.live(bufnr, opts)
  local noul = require("noul")
  local pickers = require("telescope.pickers")
  local sorters = require("telescope.sorters")
  local actions = require("telescope.actions")
  local action_state = require("telescope.actions.state")
  local conf = require("telescope.config").values
  local live = noul.live(bufnr, opts)
  local picker
  -- A Telescope finder is a callable: it is given each prompt, and results as they come.
  local finder = setmetatable({ close = function() end }, {
    __call = function(_, prompt, process_result, process_complete)
      if vim.trim(prompt or "") == "" then
        -- nothing asked: forget the last text (typed again, it is searched again) and its P(here)
        live.search("", function() end)
        if picker and picker.results_border then
          picker.results_border:change_title("results")
        end
        process_complete()
        return
      end
      live.search(prompt, function(result)
        if picker and picker.results_border then
          picker.results_border:change_title(noul.summary(result))
        end
        for _, item in ipairs(noul.items(result)) do
          if process_result(entry_maker(item)) then
            return
          end
        end
        process_complete()
      end)
    end,
  })
  picker = pickers.new({}, {
    prompt_title = "noul: describe the code",
    results_title = "results",
    finder = finder,
    sorter = sorters.highlighter_only({}),
    previewer = conf.grep_previewer({}),
    attach_mappings = function(prompt_bufnr)
      actions.select_default:replace(function()
        local entry = action_state.get_selected_entry()
        actions.close(prompt_bufnr)
        live.stop()
        if entry then
          noul.jump(entry.value)
        end
      end)
      actions.close:enhance({ post = function() live.stop() end })
      return true
    end,
  })
  picker:find()
end

return M
