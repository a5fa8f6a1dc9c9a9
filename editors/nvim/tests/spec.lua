-- What the headless specs share (loaded with dofile: the tests folder is no Lua module path).
local M = {}

--- An environment variable the test must set.
function M.env(name)
  local value = os.getenv(name)
  assert(value and value ~= "", name .. " is not set")
  return value
end

--- Wait until the server reports every root indexed and embedded; the last status, or nil on timeout.
function M.wait_indexed(noul, timeout_ms)
  local seen
  local done = vim.wait(timeout_ms or 180000, function()
    local status = noul.status(2000)
    if not status or status.indexing then
      return false
    end
    for _, r in ipairs(status.roots) do
      if r.chunks == 0 or r.pending > 0 then
        return false
      end
    end
    seen = status
    return true
  end, 300)
  return done and seen or nil
end

--- Run `body(out)`, record its error if any, write `out` as JSON to $NOUL_TEST_OUT and quit.
function M.run(out, body)
  out.errors = out.errors or {}
  local ok, problem = pcall(body, out)
  if not ok then
    table.insert(out.errors, tostring(problem))
  end
  local file = assert(io.open(M.env("NOUL_TEST_OUT"), "w"))
  file:write(vim.json.encode(out))
  file:close()
  vim.cmd("qa!")
end

return M
