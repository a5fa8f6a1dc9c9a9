-- Loaded by Neovim for the plugin; the commands appear on require("noul").setup{}.
if vim.g.loaded_noul then
  return
end
vim.g.loaded_noul = true
