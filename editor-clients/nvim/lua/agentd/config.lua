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
  -- The OpenAI-compatible endpoint: { baseUrl = ..., apiKey = ..., name = ..., toolMode = ...,
  -- reasoningEffort = ... }. Unset fields come from the daemon's environment (OPENAI_BASE_URL,
  -- OPENAI_API_KEY, AGENTD_MODEL) or ~/.config/agentd/config.json. `name` and `reasoningEffort`
  -- are the defaults; :AgentdModel and :AgentdEffort choose per conversation.
  model = nil,
  -- read-only | plan | ask | auto-edit | full-auto (the daemon's default is ask).
  approval_policy = nil,
  -- Restart the daemon when it dies: at most max_retries times in a row,
  -- waiting backoff_ms, then twice as long each time.
  restart = { max_retries = 5, backoff_ms = 500 },
  -- The daemon's stderr goes here (nil: stdpath('cache')/agentd.log, false: nowhere).
  log_file = nil,
  -- The chat: the conversation (transcript) with a compose window below it.
  conversation = {
    -- 'right', 'left', 'below', 'above' (a split), or 'tab'.
    position = 'right',
    width = 80,
    height = 15,
    -- Height of the compose window under the transcript.
    compose_height = 5,
    -- Open the chat when a run starts.
    auto_open = true,
    -- Lines of a tool's output shown under the tool call (0: none); while a
    -- command runs, its last lines (at most 40) stream in instead.
    tool_output_lines = 6,
    -- A / at the start of a prompt lists the custom commands (agent/commands)
    -- to complete; <C-x><C-o> completes them anywhere in the first word.
    complete_commands = true,
  },
  requests = {
    -- Show a request in a float (without moving the cursor) when it arrives.
    float = true,
    -- Open a write's diff tab by itself when it arrives (one at a time: the
    -- next opens when that one is answered), instead of on <CR>.
    auto_diff = false,
    -- Width of the request float (at most the editor's width - 4).
    width = 72,
  },
  -- vim.notify on run state changes and daemon events.
  notify = true,
  -- Images with a prompt: @shot.png in it, or :AgentdPaste. paste: the
  -- command that prints the clipboard's PNG (default: wl-paste or xclip).
  images = { paste = nil },
  -- Answer the daemon's questions to the editor's language servers
  -- (diagnostics after the agent's edits, definitions, references, hover,
  -- symbols) and give it the buffers' unsaved text (agentd.language).
  -- false: agentd uses its own language servers only.
  language = true,
  keymaps = {
    -- Keys that answer an input request: in the request float, on the
    -- request in the chat, and in the diff tab of a write.
    request = {
      open = '<CR>', -- answer a question, review a write's diff, pick the option under the cursor
      allow_once = 'ga',
      allow_session = 'gs',
      allow_always = 'gA',
      reject = 'gx',
      reject_with_reason = 'gR', -- not gr: Neovim 0.11 maps grn, gra, grr… globally
      reject_always = 'gX',
      allow_full = 'gF', -- run a command once without the sandbox (only where the request offers it)
      other = 'go', -- a choice's free-text answer
      send = '<C-s>', -- send a multiple choice, or the text typed in the answer field
      close = 'q', -- close the float or the diff tab; the request stays open
      pick = 'gp', -- pick another open request
      -- In the diff tab of a one-file write: take the current text back for
      -- the change (hunk) under the cursor, or keep the proposed one; both go
      -- on to the next. ga then writes what is left.
      reject_hunk = 'gh',
      keep_hunk = 'gy',
    },
    -- Buffer-local keys in the chat's transcript.
    chat = {
      close = 'q',
      cancel = '<C-c>',
      pending = 'p',
      compose = 'i',
      next_request = ']r',
      prev_request = '[r',
      resume = 'R', -- resume the conversation's paused run
      undo_change = 'gu', -- on a change (a write, an edit, a command that changed files): restore the files to before it
      review_change = 'gd', -- on a change: review it in a diff, hunk by hunk (gh takes one back in the file)
      undo_turn = 'gU', -- on a run: undo what it changed
      rewind = 'gW', -- on a run: rewind the conversation (and the files) to before it
      drop_queued = 'dd', -- stop what is on the line: a queued run (before it starts), a subagent at work, a background process
    },
    -- Keys of the restore preview (the tab an undo or a rewind shows first).
    restore = {
      apply = 'ga', -- restore (nothing conflicts)
      skip = 'gs', -- leave the files changed since alone, restore the rest
      overwrite = 'gO', -- restore the files changed since too
      conversation = 'gC', -- a rewind: cut the conversation only, keep the files
      close = 'q', -- cancel: nothing is written
    },
    -- Buffer-local keys in the compose window (send also works in Insert mode).
    compose = {
      -- while the conversation's run works: its steer (the model reads it at
      -- its next step); else a new run
      send = '<C-s>',
      send_normal = '<CR>',
      queue = '<C-q>', -- a follow-up run that starts when the current one ends
      close = 'q',
      cancel = '<C-c>',
    },
    -- Global normal-mode keys (none by default), e.g. { chat = '<leader>aa',
    -- prompt = '<leader>ap', pending = '<leader>ar', cancel = '<leader>ac',
    -- sessions = '<leader>as', toggle = '<leader>at', edit = '<leader>ae' }.
    -- The prompt key also works in Visual mode (the selection goes along);
    -- edit is Visual mode only (:AgentdEdit on the selection).
    global = {},
  },
  -- Input request kinds this editor renders: nil for every kind, those a
  -- newer daemon adds included (shown from their generic form); a list
  -- keeps to those kinds, and a kind left out is resolved by the daemon's
  -- policy (a confirmation is rejected, a plan is given as the answer).
  prompt_kinds = nil,
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
