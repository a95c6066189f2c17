-- agentd: the commands exist from startup; require('agentd').setup{} is
-- optional (the defaults apply on first use).
if vim.g.loaded_agentd then
  return
end
vim.g.loaded_agentd = true

if vim.fn.has('nvim-0.7') ~= 1 then
  vim.api.nvim_echo({ { 'agentd needs Neovim 0.7 or newer', 'ErrorMsg' } }, true, {})
  return
end

local cmd = vim.api.nvim_create_user_command

cmd('Agentd', function(o)
  require('agentd').run({
    prompt = o.args,
    new_session = o.bang,
    range = o.range,
    line1 = o.line1,
    line2 = o.line2,
  })
end, {
  nargs = '*',
  range = true,
  bang = true,
  desc = 'agentd: run a prompt (! = new session; a range sends the selection; no prompt opens the chat)',
})

cmd('AgentdEdit', function(o)
  require('agentd').edit({ line1 = o.line1, line2 = o.line2, instruction = o.args })
end, {
  nargs = '*',
  range = true,
  desc = 'agentd: change the selected lines; the change shows in the buffer, hunk by hunk (gy keep, gh reject, ga write)',
})

cmd('AgentdChat', function(o)
  require('agentd').chat(o.bang)
end, { bang = true, desc = 'agentd: open the chat and write a prompt (! = a new conversation)' })

cmd('AgentdChatTab', function()
  require('agentd').chat_tab()
end, { desc = 'agentd: another conversation in a new tab page, while the others go on' })

cmd('AgentdCancel', function()
  require('agentd').cancel()
end, { desc = 'agentd: cancel the current run' })

cmd('AgentdPending', function()
  require('agentd').pending()
end, { desc = 'agentd: pick an open input request to answer' })

cmd('AgentdSessions', function(o)
  require('agentd').sessions(o.args ~= '' and o.args or nil, o.bang)
end, {
  nargs = '*',
  bang = true,
  desc = 'agentd: pick a session to show and continue (words: those that mention them; !: the panel to rename, delete, search)',
})

cmd('AgentdRename', function(o)
  require('agentd').rename(o.args ~= '' and o.args or nil)
end, { nargs = '*', desc = "agentd: rename the chat's conversation" })

cmd('AgentdPaste', function()
  require('agentd').paste()
end, { desc = "agentd: the clipboard's image goes with the next prompt" })

cmd('AgentdCompact', function()
  require('agentd').compact()
end, { desc = "agentd: summarize the chat's conversation's older turns now (the context meter drops)" })

cmd('AgentdRules', function()
  require('agentd').rules()
end, { desc = 'agentd: the rules the policy applies; revoke or edit the ones your answers stored' })

-- The conversation's settings: a value, "default" (the daemon's), or none
-- for a picker.
for name, which in pairs({ AgentdModel = 'model', AgentdEffort = 'effort', AgentdMode = 'mode' }) do
  cmd(name, function(o)
    require('agentd').configure(which, o.args ~= '' and o.args or nil)
  end, {
    nargs = '?',
    complete = function(lead)
      return require('agentd.settings').complete(which, lead)
    end,
    desc = ("agentd: the conversation's %s (default: the daemon's; no argument: a picker)"):format(
      which == 'effort' and 'reasoning effort' or which == 'mode' and 'approval mode' or which),
  })
end

-- Undo: every change of the conversation is a checkpoint (c1, c2, …);
-- each command previews what it would restore before anything is written.
cmd('AgentdUndo', function(o)
  require('agentd').undo(o.args ~= '' and o.args or nil, o.bang)
end, {
  nargs = '?',
  bang = true,
  complete = function(lead)
    return require('agentd.undo').complete(lead)
  end,
  desc = 'agentd: undo the last change (! the last turn; cN a change and every later one; a run id that run)',
})

cmd('AgentdRewind', function(o)
  require('agentd').rewind(o.args ~= '' and o.args or nil)
end, { nargs = '?', desc = 'agentd: rewind the conversation and its files N runs back (no argument: a picker)' })

cmd('AgentdCheckpoints', function()
  require('agentd').checkpoints()
end, { desc = "agentd: the conversation's changes; the one picked is undone" })

cmd('AgentdCommands', function()
  require('agentd').commands()
end, { desc = 'agentd: the custom commands (those that cannot run, with why)' })

cmd('AgentdMcp', function()
  require('agentd').mcp()
end, { desc = "agentd: the MCP servers' states and tools" })

cmd('AgentdProcesses', function()
  require('agentd.processes').pick()
end, { desc = "agentd: the conversation's background processes; the running one picked is stopped" })

cmd('AgentdToggle', function()
  require('agentd').toggle()
end, { desc = 'agentd: open or close the chat' })

cmd('AgentdResume', function(o)
  require('agentd').resume(o.args ~= '' and o.args or nil)
end, { nargs = '?', desc = 'agentd: resume a paused run' })

cmd('AgentdRestart', function()
  require('agentd').restart()
end, { desc = 'agentd: restart the daemon' })
