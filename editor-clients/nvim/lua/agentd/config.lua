-- Options of require('agentd').setup{}. Every option is optional.
local M = {}

M.defaults = {
  -- How to start the daemon: `cmd` is the executable (looked up on PATH),
  -- `args` its arguments. `env` adds to (or, with value false, removes from)
  -- the editor's environment.
  cmd = 'agentd',
  args = { 'serve' },
  env = {},
  -- The workspace: a path, or a function returning one. Default: the
  -- current directory when the daemon starts.
  root = nil,
  -- The OpenAI-compatible endpoint: { baseUrl = ..., apiKey = ..., name = ..., toolMode = ... }.
  -- Unset fields come from the daemon's environment (OPENAI_BASE_URL, OPENAI_API_KEY,
  -- AGENTD_MODEL) or ~/.config/agentd/config.json.
  model = nil,
  -- read-only | ask | auto-edit | full-auto (the daemon's default is ask).
  approval_policy = nil,
  -- Restart the daemon when it dies: at most max_retries times in a row,
  -- waiting backoff_ms, then twice as long each time.
  restart = { max_retries = 5, backoff_ms = 500 },
  -- The daemon's stderr goes here (nil: stdpath('cache')/agentd.log, false: nowhere).
  log_file = nil,
  conversation = {
    -- 'right', 'left', 'below', 'above' (a split), or 'tab'.
    position = 'right',
    width = 80,
    height = 15,
    -- Open the conversation when a run starts.
    auto_open = true,
    -- Lines of a tool's output shown under the tool call (0: none); while a
    -- command runs, its last lines (at most 40) stream in instead.
    tool_output_lines = 6,
  },
  -- vim.notify on run state changes and daemon events.
  notify = true,
  keymaps = {
    -- Buffer-local keys in the diff tab of a write confirmation.
    diff = {
      allow_once = 'a',
      allow_session = 's',
      allow_always = 'A',
      reject_with_reason = 'r',
      reject_always = 'R',
      reject = 'q',
    },
    -- Buffer-local keys in the conversation buffer.
    conversation = {
      close = 'q',
      cancel = '<C-c>',
      pending = 'p',
    },
    -- Global normal-mode keys (none by default), e.g. { prompt = '<leader>aa',
    -- cancel = '<leader>ac', pending = '<leader>ap', sessions = '<leader>as',
    -- toggle = '<leader>at' }. The prompt key also works in visual mode.
    global = {},
  },
  -- Input request kinds this editor renders (all by default). A kind left
  -- out is resolved by the daemon's policy (a confirmation is rejected).
  prompt_kinds = { 'question', 'choice', 'confirm_write', 'confirm_command', 'secret' },
}

local function merge(dst, src)
  for k, v in pairs(src) do
    if type(v) == 'table' and type(dst[k]) == 'table' and not (vim.islist or vim.tbl_islist)(v) and next(v) ~= nil then
      merge(dst[k], v)
    else
      dst[k] = v
    end
  end
  return dst
end

M.values = vim.deepcopy(M.defaults)

function M.set(opts)
  M.values = merge(vim.deepcopy(M.defaults), opts or {})
  return M.values
end

return M
