-- The plugin's state, one table shared by its modules. Everything the
-- plugin knows lives here; the modules hold no state of their own beyond
-- their windows and buffers.
local runs = require('agentd.runs')
local requests = require('agentd.requests')

---@class agentd.Connection
---@field rpc agentd.Endpoint   the JSON-RPC endpoint on the child's pipes
---@field pid integer
---@field exited boolean|nil     set once the process is gone
---@field close_stdin fun(self: agentd.Connection)
---@field kill fun(self: agentd.Connection, signal?: string)

---@alias agentd.Status 'stopped'|'starting'|'ready'|'restarting'|'failed'

---@class agentd.IndexProgress
---@field title string|nil
---@field message string|nil
---@field percentage number|nil

---@class agentd.Settings         a session's settings (agent/configure); nil: the daemon's default
---@field model string|nil
---@field reasoningEffort string|nil
---@field approvalPolicy string|nil

---@class agentd.SessionInfo      what the plugin knows of a session
---@field id string
---@field title string|nil        the daemon's title (its first prompt), or our first prompt
---@field settings agentd.Settings|nil the values in effect, as the daemon last said
---@field run_count integer|nil
---@field state string|nil        its latest run's state, as the daemon last said
---@field loading string|nil      what of its conversation is still being fetched (agent/history)
---@field context table|nil       how full its context window is ({used, window, compactAt, messages, compacted?})
---@field compactions table[]|nil  the compactions asked from here ({after_run, dropped, before, after})

---@class agentd.Checkpoints    a session's checkpoints (agent/checkpoints)
---@field list table[]            oldest first: {id, runId, tool, title, time, files, undoes, undoneBy, notes}
---@field by_id table<string, table>

---@class agentd.State
---@field configured boolean       setup() ran
---@field conn agentd.Connection|nil the live daemon
---@field ready boolean            initialize answered on conn
---@field waiting {fn: fun(rpc: agentd.Endpoint), fail: fun(why: string)|nil}[] calls waiting for ready
---@field stopping boolean         stop() asked: no restart
---@field restarts integer         restarts in a row
---@field restart_timer userdata|nil
---@field started_at integer       uv.now() when the daemon was started
---@field status agentd.Status
---@field start_error string|nil   why the daemon last failed to start, for people
---@field server table|nil         the initialize result
---@field root string|nil          the workspace (absolute, no trailing /)
---@field runs agentd.RunStore     runs built from notifications
---@field requests agentd.RequestSet the open input requests
---@field session string|nil       the chat's session (nil: the next send starts one)
---@field new_chat boolean         the user asked for a new conversation: the chat follows no other run
---@field sessions table<string, agentd.SessionInfo>
---@field draft agentd.Settings    what a new conversation starts with (:AgentdModel, :AgentdMode, :AgentdEffort without a session)
---@field models table|nil         the last agent/models answer
---@field draft_context table|nil  the selection given with :'<,'>Agentd, for the prompt written in the chat
---@field draft_images table[]|nil images pasted (:AgentdPaste) for the next prompt: {mimeType, data, name}
---@field run string|nil           the latest run started from this editor
---@field starting integer         agent/run requests of this editor not answered yet
---@field inline table<string, agentd.InlineEdit> runId -> the inline edit it makes (agentd.inline)
---@field opened table<integer, string> bufnr -> uri announced with didOpen
---@field last_file_buf integer|nil the last buffer of a workspace file the user was in
---@field checkpoints table<string, agentd.Checkpoints> session -> its checkpoints, as agent/checkpoints last said
---@field commands table|nil       the last agent/commands answer ({commands, directories})
---@field index agentd.IndexProgress|nil while indexing
---@field stderr string[]          the daemon's last stderr lines
---@field log file*|nil            where the daemon's stderr goes
local S = {}

--- Puts the state back to "nothing known" (the daemon must be stopped).
function S.reset()
  S.configured = false
  S.conn = nil
  S.ready = false
  S.waiting = {}
  S.stopping = false
  S.restarts = 0
  S.restart_timer = nil
  S.started_at = 0
  S.status = 'stopped'
  S.start_error = nil
  S.server = nil
  S.root = nil
  S.runs = runs.new()
  S.requests = requests.new()
  S.session = nil
  S.new_chat = false
  S.sessions = {}
  S.draft = {}
  S.models = nil
  S.draft_context = nil
  S.draft_images = nil
  S.checkpoints = {}
  S.commands = nil
  S.run = nil
  S.starting = 0
  S.inline = {}
  S.opened = {}
  S.last_file_buf = nil
  S.index = nil
  S.stderr = {}
  -- the log file handle survives: the same file is appended to
end

S.reset()

--- The session record (created on first use).
---@param id string
---@return agentd.SessionInfo
function S.session_info(id)
  local s = S.sessions[id]
  if not s then
    s = { id = id }
    S.sessions[id] = s
  end
  return s
end

return S
