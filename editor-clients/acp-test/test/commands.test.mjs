// Custom commands (docs/extensions.md) seen by the official ACP client:
// announced after agentd's own, and run expanded.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Agent, startModel, tempDir } from "../lib/harness.mjs";

let model;
before(async () => { model = await startModel("commands.json"); });
after(() => model?.stop());

function write(dir, name, content) {
  const path = join(dir, ...name.split("/"));
  mkdirSync(join(path, ".."), { recursive: true });
  writeFileSync(path, content);
}

test("custom commands are announced after agentd's own and run expanded", async (t) => {
  const stateDir = tempDir("agentd-acp-state-"); // also XDG_CONFIG_HOME: the user's commands are in agentd/commands
  write(stateDir, "agentd/commands/hello.md", "---\ndescription: Greet someone\nargument-hint: <name>\n---\nSay hello to $1.");
  const ws = tempDir("agentd-acp-ws-");
  write(ws, ".agentd/commands/review.md", "---\ndescription: Review a file\nargument-hint: <file>\n---\nReview $ARGUMENTS with care.");
  write(ws, ".agentd/commands/broken.md", "---\ndescription: never closed\n");

  const agent = new Agent({ modelURL: model.url, stateDir });
  t.after(() => agent.stop());
  await agent.initialize();
  const { sessionId } = await agent.newSession(ws);
  await agent.waitFor("available commands", () => agent.of(sessionId).some((u) => u.sessionUpdate === "available_commands_update"));
  const cmds = agent.of(sessionId).find((u) => u.sessionUpdate === "available_commands_update").availableCommands;
  assert.equal(cmds[0].name, "search", "agentd's own come first");
  const custom = cmds.filter((c) => / command\)$/.test(c.description) || c.description.startsWith("broken: "));
  assert.deepEqual(custom.map((c) => c.name), ["broken", "hello", "review"]);
  const byName = Object.fromEntries(custom.map((c) => [c.name, c]));
  assert.equal(byName.review.description, "Review a file (workspace command)");
  assert.equal(byName.review.input.hint, "<file>");
  assert.equal(byName.hello.description, "Greet someone (user command)");
  assert.match(byName.broken.description, /^broken: the front matter has no closing --- line/);

  let res = await agent.prompt(sessionId, "/review cart.go");
  assert.equal(res.stopReason, "end_turn");
  assert.equal(agent.text(sessionId), "Reviewed cart.go.");
  res = await agent.prompt(sessionId, "/hello Ada");
  assert.equal(res.stopReason, "end_turn");
  assert.match(agent.text(sessionId), /Hello, Ada\.$/);
  await assert.rejects(agent.prompt(sessionId, "/broken now"), /no closing ---/);
});
