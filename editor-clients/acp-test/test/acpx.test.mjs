// `agentd acp` driven by a second real ACP client from npm, acpx, typed
// into a terminal (tmux) as a person would: acpx asks its y/N permission
// questions only on a terminal.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { createServer } from "node:http";
import { existsSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { bin, startModel, tempDir } from "../lib/harness.mjs";
import { Tmux } from "../lib/tmux.mjs";

const acpxBin = join(dirname(fileURLToPath(import.meta.url)), "..", "node_modules", ".bin", "acpx");

let model;
before(async () => { model = await startModel("acpx.json"); });
after(() => model?.stop());

// terminal opens a shell in a fresh workspace with acpx at hand: acpx(args)
// is the command line that runs acpx on agentd there.
// The agent's words as acpx prints them: acpx writes a line of its own when
// the agent calls one of its methods (`[client] fs/read_text_file
// (running)`), in the middle of a message that is streaming.
function prose(screen) {
  return screen.replace(/\n*\[client\] [^\n]* \(running\)\n/g, "");
}

function terminal(t, m = model) {
  const dir = realpathSync(tempDir("agentd-acpx-"));
  const ws = realpathSync(tempDir("agentd-acpx-ws-"));
  const state = join(dir, "state");
  const env = { HOME: dir, PATH: process.env.PATH, TERM: "xterm-256color", OPENAI_BASE_URL: m.url, OPENAI_API_KEY: "x",
    AGENTD_MODEL: "fake", AGENTD_STATE_DIR: state, XDG_CONFIG_HOME: state, AGENTD_RETRY_BASE: "10ms" };
  const agent = `${join(bin, "agentd")} acp --log-level debug --log-file ${join(dir, "agentd.log")}`;
  const args = ["--ttl", "5", "--agent", agent];
  const acpx = (rest) => `${acpxBin} --ttl 5 --agent '${agent}' ${rest}`;
  const term = new Tmux(dir, env);
  term.type(`cd ${ws}`);
  t.after(() => {
    try { // stops the session's queue owner and its agentd, if a test made one
      execFileSync(acpxBin, [...args, "sessions", "close"], { cwd: ws, env, stdio: "ignore" });
    } catch {
      // no session
    }
    term.kill();
    for (const d of [dir, ws]) { // agentd may still be closing its log: best effort
      try {
        rmSync(d, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
      } catch {
        // left in the temp directory
      }
    }
  });
  return { term, ws, acpx, log: () => readFileSync(join(dir, "agentd.log"), "utf8") };
}

test("acpx: a choice is asked in the chat and answered by the next prompt", async (t) => {
  const { term, acpx } = terminal(t);
  term.step();
  term.type(acpx("sessions new"));
  await term.waitFor("the session", /created session/);

  term.step();
  term.type(acpx("'pick a colour'"));
  let s = await term.waitFor("the question", /\[done\] \w+/);
  assert.match(s, /\[done\] end_turn/);
  assert.match(s, /Which colour\?/);
  assert.match(s, /^1\. red$/m);
  assert.match(s, /^2\. blue$/m);
  assert.doesNotMatch(s, /\[permission\]/, "a choice is not a permission");

  term.step();
  term.type(acpx("2"));
  s = await term.waitFor("the answer taken", /\[done\] \w+/);
  assert.match(s, /\[done\] end_turn/);
  assert.match(s, /You chose blue\./);
  assert.equal(s.match(/The user chose: blue/g)?.length, 1, "the answer is printed once");
});

test("acpx: a write rejected at agentd's prompt lets the run go on", async (t) => {
  const { term, ws, acpx, log } = terminal(t);
  term.step();
  term.type(acpx("exec 'write notes'"));
  let s = await term.waitFor("agentd's permission", /\(y\/N\)/);
  assert.match(s, /\[permission\] Allow create notes\.txt \[edit\]\? \(y\/N\)/);
  term.type("n");
  s = await term.waitFor("the end of the turn", /\[done\] \w+/);
  assert.match(s, /\[done\] end_turn/);
  assert.match(s, /Understood, I left notes\.txt alone\./);
  assert.equal(existsSync(join(ws, "notes.txt")), false);
  assert.match(log(), /msg="acp recv" kind=response method=session\/request_permission id=\S+ result=.*reject_once/,
    "the outcome is in agentd's debug log");
});

test("acpx: offering fs, a write is confirmed once (agentd's permission), and a session's write in auto-edit needs no --no-fs", async (t) => {
  const { term, ws, acpx, log } = terminal(t);
  term.step();
  term.type(acpx("exec 'write notes'"));
  await term.waitFor("agentd's permission", /Allow create notes\.txt \[edit\]\? \(y\/N\)/);
  term.type("y");
  let s = await term.waitFor("the end of the turn", /\[done\] \w+/);
  assert.match(prose(s), /Wrote notes\.txt\./);
  assert.equal(s.match(/\(y\/N\)/g).length, 1, "one confirmation: acpx is not asked to confirm the write again");
  assert.doesNotMatch(s, /Allow write to/);
  assert.equal(readFileSync(join(ws, "notes.txt"), "utf8"), "remember the milk\n");
  assert.match(log(), /the client confirms each fs\/write_text_file itself/);

  // a session runs in acpx's background process, where nothing can answer
  // acpx's own confirmation (it denies): agentd's mode decides alone
  rmSync(join(ws, "notes.txt"));
  term.step();
  term.type(acpx("sessions new"));
  await term.waitFor("the session", /created session/);
  term.step();
  term.type(acpx("set mode auto-edit"));
  await term.waitFor("the mode", /auto-edit/);
  term.step();
  term.type(acpx("'write notes'"));
  s = await term.waitFor("the end of the turn", /\[done\] \w+/);
  assert.match(prose(s), /Wrote notes\.txt\./);
  assert.equal(readFileSync(join(ws, "notes.txt"), "utf8"), "remember the milk\n");
});

test("acpx: a command is titled with its command line; rejecting it lets the run go on", async (t) => {
  const { term, ws, acpx } = terminal(t);
  term.step();
  term.type(acpx("exec 'make a file'"));
  let s = await term.waitFor("agentd's permission", /\(y\/N\)/);
  assert.match(s, /\[tool\] `touch made\.txt` \(pending\)/);
  assert.match(s, /\[permission\] Allow `touch made\.txt` \[execute\]\? \(y\/N\)/);
  assert.doesNotMatch(s, /files: /, "the cwd is not shown as a file");
  term.type("n");
  s = await term.waitFor("the end of the turn", /\[done\] \w+/);
  assert.match(s, /\[done\] end_turn/);
  assert.match(s, /Fine, I did not run it\./);
  assert.equal(existsSync(join(ws, "made.txt")), false);
});

test("acpx: cancel stops a running command and ends the turn cancelled", async (t) => {
  const { term, ws, acpx } = terminal(t);
  term.step();
  term.type(acpx("sessions new"));
  await term.waitFor("the session", /created session/);

  term.step();
  term.type(acpx("'sleep a while'")); // sleep is allowed without asking
  await term.waitFor("the command to run", /\[tool\] `sleep 30`/);
  const other = term.newPane();
  term.type(`cd ${ws} && ${acpx("cancel")}`, other);
  const began = Date.now();
  const s = await term.waitFor("the cancelled turn", /\[done\] \w+/, { ms: 15000 });
  assert.match(s, /\[done\] cancelled/);
  assert.ok(Date.now() - began < 10000, "the 30 s command was stopped");
  await term.waitFor("acpx cancel to finish", /cancel requested|cancelled/, { pane: other });
});

test("acpx: two subagents at once, their calls labelled and scoped by their task; one's question in the chat", async (t) => {
  const { term, ws, acpx } = terminal(t);
  writeFileSync(join(ws, "cart.go"), "package cart\n\nfunc Total() int { return 0 }\n");
  term.step();
  term.type(acpx("sessions new"));
  await term.waitFor("the session", /created session/);

  term.step();
  term.type(acpx("'survey the cart'"));
  let s = await term.waitFor("the subagent's question", /\[done\] \w+/);
  assert.match(s, /\[done\] end_turn/);
  assert.match(s, /\[tool\] Subagent: Find the cart total/);
  assert.match(s, /\[tool\] Subagent: List the files/);
  assert.match(s, /\[tool\] \[Find the cart total\] read cart\.go/, "the subagent's call, labelled with it");
  assert.match(s, /\[tool\] \[List the files\] list/, "the other subagent's, at the same time");
  assert.match(s, /Subagent “Find the cart total” asks: Question/);
  assert.match(s, /Which currency\?/);

  term.step();
  term.type(acpx("EUR"));
  s = await term.waitFor("the answer taken", /\[done\] \w+/);
  assert.match(s, /\[done\] end_turn/);
  assert.match(s, /Totals are in cart\.go; the user wants EUR\./);
});

test("acpx: plan mode refuses a write unasked, asks to approve the plan in the chat, and the approved plan runs in auto-edit", async (t) => {
  const { term, ws, acpx, log } = terminal(t);
  term.step();
  term.type(acpx("sessions new"));
  await term.waitFor("the session", /created session/);
  term.step();
  term.type(acpx("set-mode plan"));
  await term.waitFor("the mode", /plan/);

  term.step();
  term.type(acpx("'plan the notes'"));
  let s = await term.waitFor("the plan", /\[done\] \w+/);
  assert.match(s, /\[done\] end_turn/);
  assert.doesNotMatch(s, /\(y\/N\)/, "the write was refused without asking");
  assert.match(s, /Approve the plan\?/);
  assert.match(s, /Write notes\.txt with one line\./);
  assert.match(s, /^1\. Approve, and edit files without asking/m);
  assert.match(s, /^4\. Keep planning/m);
  assert.equal(existsSync(join(ws, "notes.txt")), false);

  term.step();
  term.type(acpx("1"));
  s = await term.waitFor("the plan carried out", /\[done\] \w+/);
  assert.match(s, /\[done\] end_turn/);
  assert.match(prose(s), /Wrote notes\.txt\./);
  assert.equal(readFileSync(join(ws, "notes.txt"), "utf8"), "remember the milk\n");
  assert.match(log(), /currentModeId\\":\\"auto-edit\\",\\"sessionUpdate\\":\\"current_mode_update/, "the client is told the mode changed");
});

test("acpx: a prompt sent while a turn works waits for it, then runs with its conversation", async (t) => {
  const { term, ws, acpx } = terminal(t);
  term.step();
  term.type(acpx("sessions new"));
  await term.waitFor("the session", /created session/);
  term.step();
  term.type(acpx("set-mode full-auto"));
  await term.waitFor("the mode", /full-auto/);

  term.step();
  term.type(acpx("'count slowly'"));
  await term.waitFor("the command to run", /\[tool\] `sleep 3; echo counted`/);
  const other = term.newPane();
  term.step(other);
  term.type(`cd ${ws} && ${acpx("'and then say hi'")}`, other);
  const first = await term.waitFor("the first turn", /\[done\] \w+/, { ms: 60000 });
  assert.match(first, /The command finished\./);
  const second = await term.waitFor("the follow-up", /\[done\] \w+/, { pane: other, ms: 60000 });
  assert.match(second, /\[done\] end_turn/);
  assert.match(second, /Hi, after the count\./, "the follow-up ran after the first turn, with its conversation");
});

test("acpx: a background process the agent started is listed by /processes and stopped by /stop", async (t) => {
  const { term, acpx } = terminal(t);
  term.step();
  term.type(acpx("sessions new"));
  await term.waitFor("the session", /created session/);
  term.step();
  term.type(acpx("set-mode full-auto"));
  await term.waitFor("the mode", /full-auto/);

  term.step();
  term.type(acpx("'start the dev server'"));
  let s = await term.waitFor("the server started", /\[done\] \w+/);
  assert.match(s, /\[done\] end_turn/);
  assert.match(s, /\[tool\] `echo serving; sleep 60`/);
  assert.match(prose(s), /The server runs in the background\./, "the call returned while the process goes on");

  term.step();
  term.type(acpx("/processes"));
  s = await term.waitFor("the list", /\[done\] \w+/);
  assert.match(s, /\*\*p1\*\* `echo serving; sleep 60` \(in [^)]*\): running for \d/);
  assert.match(s, /Stop one with `\/stop <id>`\./);

  term.step();
  term.type(acpx("'/stop p1'"));
  s = await term.waitFor("the stop", /\[done\] \w+/);
  assert.match(s, /p1 `echo serving; sleep 60`: stopped\./);

  term.step();
  term.type(acpx("/processes"));
  s = await term.waitFor("the list again", /\[done\] \w+/);
  assert.match(s, /\*\*p1\*\* `echo serving; sleep 60` \(in [^)]*\): stopped/);
  assert.doesNotMatch(s, /Stop one with/, "nothing left to stop");
});

test("acpx: a web fetch asks for its host, then its call is titled with the page's address, size and type", async (t) => {
  const page = `<html><head><title>Cart API</title></head><body><h1>Cart API</h1><p>${"Totals are in cents. ".repeat(200)}</p></body></html>`;
  const server = createServer((req, res) => {
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    res.end(page);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  t.after(() => server.close());
  const url = `http://127.0.0.1:${server.address().port}/docs`;
  const script = join(tempDir("agentd-acpx-fetch-"), "fetch.json");
  writeFileSync(script, JSON.stringify({ turns: [
    { name: "fetch", match: { lastUser: "read the docs" }, reply: { toolCalls: [{ id: "call_f", name: "web_fetch", arguments: { url } }] } },
    { name: "read", match: { afterTool: "web_fetch" }, reply: { text: "Totals are in cents." } },
  ] }));
  const m = await startModel(script);
  t.after(() => m.stop());
  const { term, acpx } = terminal(t, m);
  term.step();
  term.type(acpx("exec 'read the docs'"));
  let s = await term.waitFor("agentd's permission", /\(y\/N\)/);
  assert.ok(s.includes(`[permission] Allow Fetch ${url} [fetch]? (y/N)`), `asked as a fetch, not a command:\n${s}`);
  term.type("y");
  s = await term.waitFor("the end of the turn", /\[done\] \w+/);
  assert.match(s, /\[done\] end_turn/);
  const kb = Math.floor(Buffer.byteLength(page) / 1024);
  assert.ok(s.includes(`fetch ${url} · ${kb} KB · text/html`), `the call titled with what it got:\n${s}`);
  assert.match(prose(s), /Totals are in cents\./);
  assert.match(s, /# Cart API/, "the page's text under the call");
  assert.doesNotMatch(s, /untrusted content|web_content/, "not the lines for the model");
});
