-- :checkhealth noul
local M = {}

function M.check()
  local noul = require("noul")
  vim.health.start("noul")
  local cmd = noul.config.cmd
  local advice = { "install noul-lsp from its checkout: pip install -e /path/to/noul-lsp",
    "then set cmd in require('noul').setup{}, e.g. { '/path/to/noul-lsp/.venv/bin/python', '-m', 'noul_lsp' }" }
  if vim.fn.has("nvim-0.11") == 0 then
    vim.health.error("Neovim 0.11 or newer is needed (the vim.lsp client's methods)")
  end
  if type(cmd) ~= "table" or vim.fn.executable(cmd[1]) == 0 then
    vim.health.error("server command not found: " .. vim.inspect(cmd), advice)
    return
  end
  -- the command must run, not only exist: `python -m a_typo` exists and fails
  local version = vim.fn.system(vim.list_extend(vim.deepcopy(cmd), { "--version" }))
  if vim.v.shell_error ~= 0 then
    vim.health.error("`" .. table.concat(cmd, " ") .. " --version` failed: " .. vim.trim(version), advice)
    return
  end
  vim.health.ok("server command: " .. table.concat(cmd, " "))
  vim.health.ok("version: " .. vim.trim(version))
  local status, problem = noul.status(5000)
  if not status then
    vim.health.warn("no answer from the server yet: " .. tostring(problem))
    return
  end
  for _, root in ipairs(status.roots or {}) do
    local share = root.chunks > 0 and root.embedded / root.chunks or 0
    vim.health.ok(string.format("%s: %d files, %d chunks, %.0f%% embedded, model %s on %s",
      root.root, root.files, root.chunks, 100 * share, tostring(root.model), root.device))
    if root.fallback and root.fallback ~= "" then
      vim.health.info("CPU, not GPU: " .. root.fallback)
    end
    local problem_text = root.rerankerProblem
    if problem_text ~= nil and problem_text ~= vim.NIL then
      vim.health.warn("results are not reranked: " .. problem_text)
    elseif root.reranker ~= nil and root.reranker ~= vim.NIL then
      vim.health.ok(string.format("reranker %s on %s", root.reranker, root.rerankerDevice or "not loaded"))
    else
      vim.health.info("reranker: none (`noul models use NAME` or settings.models.reranker)")
    end
  end
  if status.indexing then
    vim.health.info("indexing is still running")
  end
end

return M
