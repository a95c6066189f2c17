// `agentd acp` driven end to end by the official ACP TypeScript client
// library (@agentclientprotocol/sdk) against the scripted model.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Agent, bin, startModel, tempDir } from "../lib/harness.mjs";

let model;
before(async () => { model = await startModel("scenarios.json"); });
after(() => model?.stop());

async function started(opts = {}) {
  const agent = new Agent({ modelURL: model.url, stateDir: opts.stateDir ?? tempDir("agentd-acp-state-"), form: opts.form, fs: opts.fs });
  const init = await agent.initialize();
  assert.equal(init.protocolVersion, 1);
  assert.equal(init.agentCapabilities.loadSession, true);
  assert.equal(init.agentCapabilities.promptCapabilities.embeddedContext, true);
  assert.ok(init.agentCapabilities.sessionCapabilities.list);
  assert.equal(init.agentCapabilities.mcpCapabilities.http, true, "HTTP MCP servers are taken besides stdio ones");
  return agent;
}

test("a prompt streams its answer and a plan", async (t) => {
  const agent = await started();
  t.after(() => agent.stop());
  const { sessionId, modes } = await agent.newSession(tempDir("agentd-acp-ws-"));
  assert.deepEqual(modes.availableModes.map((m) => m.id), ["read-only", "plan", "ask", "auto-edit", "full-auto"]);
  const res = await agent.prompt(sessionId, "plan the refactor");
  assert.equal(res.stopReason, "end_turn");
  const ups = agent.of(sessionId);
  const plan = ups.find((u) => u.sessionUpdate === "plan");
  assert.deepEqual(plan.entries.map((e) => [e.content, e.status]), [["Read the code", "completed"], ["Change it", "in_progress"]]);
  assert.ok(ups.some((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "call_plan" && u.kind === "think"));
  assert.ok(ups.filter((u) => u.sessionUpdate === "agent_message_chunk").length >= 2, "the answer is streamed in chunks");
  assert.equal(agent.text(sessionId), "The refactor is planned and under way.");
  await agent.waitFor("available commands", () =>
    ups.concat(agent.of(sessionId)).some((u) => u.sessionUpdate === "available_commands_update" && u.availableCommands[0].name === "search"));
});

test("one permission rejected, one granted, with the diff in the tool call", async (t) => {
  const agent = await started();
  t.after(() => agent.stop());
  const ws = tempDir("agentd-acp-ws-");
  const { sessionId } = await agent.newSession(ws);
  const reject = (p) => ({ outcome: "selected", optionId: p.options.find((o) => o.kind === "reject_once").optionId });
  const allow = (p) => ({ outcome: "selected", optionId: p.options.find((o) => o.kind === "allow_once").optionId });

  agent.answerPermission = reject;
  assert.equal((await agent.prompt(sessionId, "write notes")).stopReason, "end_turn");
  const asked = agent.permissions[0];
  assert.deepEqual(asked.options.map((o) => o.kind).sort(), ["allow_always", "allow_once", "reject_always", "reject_once"]);
  assert.equal(asked.toolCall.kind, "edit");
  const diff = asked.toolCall.content.find((c) => c.type === "diff");
  assert.equal(diff.path, join(realpathSync(ws), "notes.txt"));
  assert.equal(diff.newText, "remember the milk\n");
  assert.match(agent.text(sessionId), /left notes\.txt alone/);
  assert.equal(existsSync(join(ws, "notes.txt")), false);

  agent.answerPermission = allow;
  assert.equal((await agent.prompt(sessionId, "write notes again")).stopReason, "end_turn");
  assert.equal(readFileSync(join(ws, "notes.txt"), "utf8"), "remember the milk\n");
  assert.match(agent.text(sessionId), /Wrote the file\./);
  const done = agent.of(sessionId).find((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "call_w2" && u.status === "completed");
  assert.ok(done?.content?.some((c) => c.type === "diff"), "the edit's diff is on its tool call");
});

test("reads and writes go through the editor when it offers fs", async (t) => {
  const agent = await started({ fs: true });
  t.after(() => agent.stop());
  const ws = realpathSync(tempDir("agentd-acp-ws-"));
  const file = join(ws, "buffer.txt");
  writeFileSync(file, "line one\nsaved on disk\n");
  agent.buffers.set(file, "line one\nunsaved edit\n"); // the editor's unsaved buffer
  const { sessionId } = await agent.newSession(ws);
  agent.answerPermission = (p) => ({ outcome: "selected", optionId: p.options.find((o) => o.kind === "allow_once").optionId });
  assert.equal((await agent.prompt(sessionId, "fix the buffer")).stopReason, "end_turn");
  assert.equal(agent.text(sessionId), "Edited the buffer.", "read_file saw the unsaved buffer");
  assert.ok(agent.fsReads.some((r) => r.path === file && r.sessionId === sessionId), "fs/read_text_file was asked");
  assert.deepEqual(agent.fsWrites.map((w) => [w.sessionId, w.path, w.content]), [[sessionId, file, "line one\nsaved by agentd\n"]]);
  assert.equal(agent.buffers.get(file), "line one\nsaved by agentd\n");
  assert.equal(readFileSync(file, "utf8"), "line one\nsaved on disk\n", "the write went to the editor, not the disk");
});

test("a question is answered by the next prompt", async (t) => {
  const agent = await started();
  t.after(() => agent.stop());
  const { sessionId } = await agent.newSession(tempDir("agentd-acp-ws-"));
  assert.equal((await agent.prompt(sessionId, "what is the meaning")).stopReason, "end_turn");
  assert.match(agent.text(sessionId), /Which number do you mean\?/);
  assert.equal((await agent.prompt(sessionId, "42")).stopReason, "end_turn");
  assert.match(agent.text(sessionId), /You mean 42\.$/);
});

test("a choice is asked as a form when the client offers elicitation", async (t) => {
  const agent = await started({ form: true });
  t.after(() => agent.stop());
  const { sessionId } = await agent.newSession(tempDir("agentd-acp-ws-"));
  let form;
  agent.answerElicitation = (params) => {
    form = params;
    const blue = params.requestedSchema.properties.answer.oneOf.find((o) => o.title === "blue");
    return { action: "accept", content: { answer: blue.const } };
  };
  assert.equal((await agent.prompt(sessionId, "pick a colour")).stopReason, "end_turn");
  assert.equal(form.mode, "form");
  assert.equal(form.sessionId, sessionId);
  assert.equal(form.toolCallId, "call_c");
  assert.match(agent.text(sessionId), /You chose blue\./);
});

test("a choice without elicitation is asked in the chat as numbered options", async (t) => {
  const agent = await started();
  t.after(() => agent.stop());
  const { sessionId } = await agent.newSession(tempDir("agentd-acp-ws-"));
  agent.answerPermission = () => ({ outcome: "cancelled" }); // a choice asked as a permission would end the turn
  assert.equal((await agent.prompt(sessionId, "pick a shade")).stopReason, "end_turn");
  const asked = agent.text(sessionId);
  assert.match(asked, /Which shade\?/);
  assert.match(asked, /\n1\. light\n2\. dark\n/);
  assert.equal(agent.permissions.length, 0, "a choice is not a permission");
  assert.equal((await agent.prompt(sessionId, "2")).stopReason, "end_turn");
  assert.match(agent.text(sessionId), /You chose dark\.$/);
});

test("a command's tool call is titled with its command line and has no location", async (t) => {
  const agent = await started();
  t.after(() => agent.stop());
  const ws = realpathSync(tempDir("agentd-acp-ws-"));
  mkdirSync(join(ws, "sub"));
  const { sessionId } = await agent.newSession(ws);
  assert.equal((await agent.prompt(sessionId, "greet the world")).stopReason, "end_turn");
  const call = agent.of(sessionId).find((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "call_g");
  assert.equal(call.title, "`echo hello: world` in sub");
  assert.equal(call.kind, "execute");
  assert.deepEqual(call.rawInput, { command: "echo hello: world", cwd: join(ws, "sub") });
  assert.equal(call.locations, undefined);
  assert.ok(!agent.of(sessionId).some((u) => u.toolCallId === "call_g" && u.locations?.length), "no update adds the cwd");
  assert.match(agent.text(sessionId), /Greeted\./);
});

test("a permission answered cancelled ends the turn, is audited, and every message is in the debug log", async (t) => {
  const stateDir = tempDir("agentd-acp-state-");
  const agent = await started({ stateDir });
  t.after(() => agent.stop());
  const { sessionId } = await agent.newSession(tempDir("agentd-acp-ws-"));
  agent.answerPermission = () => ({ outcome: "cancelled" });
  assert.equal((await agent.prompt(sessionId, "write and cancel")).stopReason, "cancelled");
  const audit = () => readdirSync(stateDir, { withFileTypes: true }).filter((d) => d.isDirectory())
    .map((d) => join(stateDir, d.name, "audit.jsonl")).filter(existsSync)
    .flatMap((f) => readFileSync(f, "utf8").trim().split("\n")).map((l) => JSON.parse(l));
  await agent.waitFor("the audit line", () => audit().some((l) => l.decision === "cancelled"));
  const line = audit().find((l) => l.decision === "cancelled");
  assert.deepEqual([line.tool, line.by, line.paths], ["write_file", "cancel", ["cancel.txt"]]);
  for (const re of [/msg="acp recv" kind=request method=session\/prompt id=\S+ params=.*write and cancel/,
    /msg="acp send" kind=request method=session\/request_permission/,
    /msg="acp recv" kind=response method=session\/request_permission id=\S+ result=.*cancelled/,
    /msg="acp send" kind=response method=session\/prompt id=\S+ result=.*"stopReason\\":\\"cancelled/]) {
    // The daemon logs a message as it sends it; its stderr may reach us
    // after the message itself.
    await agent.waitFor(`the log line ${re}`, () => re.test(agent.stderr));
  }
});

test("cancel ends the turn as cancelled", async (t) => {
  const agent = await started();
  t.after(() => agent.stop());
  const { sessionId } = await agent.newSession(tempDir("agentd-acp-ws-"));
  await agent.agent.request("session/set_mode", { sessionId, modeId: "full-auto" });
  const turn = agent.prompt(sessionId, "sleep a while");
  await agent.waitFor("the command to run", () =>
    agent.of(sessionId).some((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "call_s" && u.status === "in_progress"));
  const began = Date.now();
  await agent.agent.notify("session/cancel", { sessionId });
  assert.equal((await turn).stopReason, "cancelled");
  assert.ok(Date.now() - began < 5000, "the command was stopped");
});

test("session/load after a restart replays and asks the open permission again", async (t) => {
  const stateDir = tempDir("agentd-acp-state-");
  const ws = tempDir("agentd-acp-ws-");
  const first = await started({ stateDir });
  const { sessionId } = await first.newSession(ws);
  const asked = first.nextPermission();
  const turn = first.prompt(sessionId, "persist a file").catch(() => null);
  await asked;
  await first.stop(); // agentd goes away with the permission open
  await turn;

  const second = await started({ stateDir });
  t.after(() => second.stop());
  const listed = await second.agent.request("session/list", { cwd: ws });
  assert.ok(listed.sessions.some((s) => s.sessionId === sessionId), "the session is listed");
  second.answerPermission = (p) => ({ outcome: "selected", optionId: p.options.find((o) => o.kind === "allow_once").optionId });
  const reasked = second.nextPermission();
  await second.agent.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
  const replay = second.of(sessionId);
  assert.equal(replay[0].sessionUpdate, "user_message_chunk");
  assert.equal(replay[0].content.text, "persist a file");
  assert.ok(replay.some((u) => u.sessionUpdate === "tool_call" && u.toolCallId === "call_p"), "the tool call is replayed");
  const p = await reasked;
  assert.equal(p.toolCall.content.find((c) => c.type === "diff").newText, "kept across restarts\n");
  await second.waitFor("the run to finish", () => /Wrote the file\./.test(second.text(sessionId)));
  assert.equal(readFileSync(join(ws, "persist.txt"), "utf8"), "kept across restarts\n");
});

// replayOf groups a session's updates by user message: what the agent said
// and thought after each.
function replayOf(updates) {
  const turns = [];
  for (const u of updates) {
    if (u.sessionUpdate === "user_message_chunk") turns.push({ user: u.content.text, said: "", thought: "" });
    else if (u.sessionUpdate === "agent_message_chunk" && turns.length) turns.at(-1).said += u.content.text;
    else if (u.sessionUpdate === "agent_thought_chunk" && turns.length) turns.at(-1).thought += u.content.text;
  }
  return turns;
}

const values = (opts) => Object.fromEntries(opts.map((o) => [o.id, o.currentValue]));

test("session/load after a restart replays every run, thinking included", async (t) => {
  const stateDir = tempDir("agentd-acp-state-");
  const ws = tempDir("agentd-acp-ws-");
  const first = await started({ stateDir });
  const { sessionId } = await first.newSession(ws);
  assert.equal((await first.prompt(sessionId, "first question")).stopReason, "end_turn");
  assert.equal((await first.prompt(sessionId, "second question")).stopReason, "end_turn");
  await first.stop();

  const second = await started({ stateDir });
  t.after(() => second.stop());
  const listed = await second.agent.request("session/list", { cwd: ws });
  assert.deepEqual(listed.sessions.map((s) => [s.sessionId, s.title]), [[sessionId, "first question"]]);
  await second.agent.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
  assert.deepEqual(replayOf(second.of(sessionId)), [
    { user: "first question", said: "Hello there.", thought: "Greet them." },
    { user: "second question", said: "Goodbye now.", thought: "" },
  ]);
});

test("config options choose the model, the effort and the mode, and outlive a restart", async (t) => {
  const stateDir = tempDir("agentd-acp-state-");
  const ws = tempDir("agentd-acp-ws-");
  const first = await started({ stateDir });
  const created = await first.newSession(ws);
  const { sessionId } = created;
  assert.deepEqual(created.configOptions.map((o) => [o.id, o.category, o.currentValue]),
    [["mode", "mode", "ask"], ["model", "model", "fake"], ["reasoning_effort", "thought_level", "default"]]);
  assert.deepEqual(created.configOptions[1].options.map((o) => o.value), ["fake", "big"], "the endpoint's models");

  assert.equal(values((await first.setOption(sessionId, "model", "big")).configOptions).model, "big");
  assert.equal(values((await first.setOption(sessionId, "reasoning_effort", "high")).configOptions).reasoning_effort, "high");
  assert.equal((await first.prompt(sessionId, "first question")).stopReason, "end_turn");
  const asked = (await model.requests()).filter((r) => r.messages.at(-1)?.content === "first question").at(-1);
  assert.deepEqual([asked.model, asked.reasoningEffort], ["big", "high"], "the run used the session's model and effort");

  const changed = await first.setOption(sessionId, "mode", "full-auto");
  assert.equal(values(changed.configOptions).mode, "full-auto");
  await first.waitFor("the mode update", () =>
    first.of(sessionId).some((u) => u.sessionUpdate === "current_mode_update" && u.currentModeId === "full-auto"));
  assert.equal((await first.prompt(sessionId, "write without asking")).stopReason, "end_turn");
  assert.equal(first.permissions.length, 0, "full-auto wrote without a permission prompt");
  assert.equal(readFileSync(join(ws, "auto.txt"), "utf8"), "no one asked\n");
  await assert.rejects(first.setOption(sessionId, "reasoning_effort", "extreme"));
  await first.stop();

  const second = await started({ stateDir });
  t.after(() => second.stop());
  const loaded = await second.agent.request("session/load", { sessionId, cwd: ws, mcpServers: [] });
  assert.deepEqual(values(loaded.configOptions), { mode: "full-auto", model: "big", reasoning_effort: "high" });
  assert.equal(loaded.modes.currentModeId, "full-auto");
});

test("the MCP servers of session/new give the model their tools", async (t) => {
  const agent = await started();
  t.after(() => agent.stop());
  const { sessionId } = await agent.agent.request("session/new", { cwd: tempDir("agentd-acp-ws-"), mcpServers: [
    { name: "test", command: join(bin, "mcpserver"), args: [], env: [{ name: "GIVEN", value: "from-the-editor" }] },
  ] });
  agent.answerPermission = (p) => ({ outcome: "selected", optionId: p.options.find((o) => o.kind === "allow_once").optionId });
  assert.equal((await agent.prompt(sessionId, "which value did the editor give?")).stopReason, "end_turn");
  const asked = agent.permissions[0];
  assert.equal(asked.toolCall.title, "Call test: env");
  assert.ok(asked.toolCall.content.some((c) => c.type === "content" && /mcp__test__env \{"name":"GIVEN"\}/.test(c.content.text)),
    "the permission shows the tool and its arguments");
  assert.equal(agent.text(sessionId), "The editor gave from-the-editor.", "the tool's result reached the model");
  assert.equal((await agent.prompt(sessionId, "/mcp")).stopReason, "end_turn");
  assert.match(agent.text(sessionId), /\*\*test\*\* \(session, stdio\): connected/);
});
