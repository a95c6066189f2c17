// Starts the fake model and `agentd acp`, and connects the official ACP
// client library to it.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname, isAbsolute } from "node:path";
import { Readable, Writable } from "node:stream";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import * as acp from "@agentclientprotocol/sdk/unstable";
import { scaled } from "./scale.mjs";

const here = dirname(fileURLToPath(import.meta.url));
export const bin = process.env.AGENTD_ACP_BIN_DIR ?? join(here, "..", "bin");

// startModel runs fakemodel with a script and resolves its base URL.
// startModel serves a script of models/ (or one at an absolute path).
export async function startModel(script) {
  const path = isAbsolute(script) ? script : join(here, "..", "models", script);
  const proc = spawn(join(bin, "fakemodel"), ["-script", path, "-stdin-exit"], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = createInterface({ input: proc.stdout });
  const url = await new Promise((resolve, reject) => {
    proc.once("exit", (code) => reject(new Error(`fakemodel exited with ${code}`)));
    lines.once("line", (line) => resolve(line.replace(/^listening on /, "").trim()));
  });
  return { url, stop: () => proc.kill(), requests: async () => (await fetch(`${url}/_requests`)).json() };
}

export function tempDir(prefix) {
  return mkdtempSync(join(tmpdir(), prefix));
}

// Agent is one `agentd acp` process and a client connected to it. With fs,
// the client serves fs/read_text_file and fs/write_text_file from buffers
// (an editor's unsaved buffers, by absolute path) before the disk.
export class Agent {
  constructor({ modelURL, stateDir, form = false, fs = false }) {
    this.updates = [];
    this.buffers = new Map();
    this.fsReads = [];
    this.fsWrites = [];
    this.permissions = [];
    this.permissionWaiters = [];
    this.answerPermission = null; // (params) => outcome, or null to leave it open
    this.answerElicitation = null;
    this.proc = spawn(join(bin, "agentd"), ["acp", "--log-level", "debug"], {
      stdio: ["pipe", "pipe", "pipe"],
      env: { ...process.env, OPENAI_BASE_URL: modelURL, OPENAI_API_KEY: "x", AGENTD_MODEL: "fake",
        AGENTD_STATE_DIR: stateDir, XDG_CONFIG_HOME: stateDir, AGENTD_RETRY_BASE: "10ms" },
    });
    this.stderr = "";
    this.proc.stderr.on("data", (d) => { this.stderr += d; });
    this.exited = new Promise((resolve) => this.proc.once("exit", resolve));
    const app = acp.client({ name: "agentd-acp-test" })
      .onNotification(acp.methods.client.session.update, ({ params }) => { this.updates.push(params); })
      .onRequest(acp.methods.client.session.requestPermission, ({ params, signal }) => this.permission(params, signal))
      .onRequest(acp.methods.client.elicitation.create, ({ params }) => this.answerElicitation(params))
      .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => this.readTextFile(params))
      .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => this.writeTextFile(params));
    const stream = acp.ndJsonStream(Writable.toWeb(this.proc.stdin), Readable.toWeb(this.proc.stdout));
    this.conn = app.connect(stream);
    this.agent = this.conn.agent;
    this.form = form;
    this.fs = fs;
  }

  async initialize() {
    const clientCapabilities = { fs: { readTextFile: this.fs, writeTextFile: this.fs } };
    if (this.form) clientCapabilities.elicitation = { form: {} };
    return this.agent.request(acp.methods.agent.initialize, { protocolVersion: acp.PROTOCOL_VERSION ?? 1, clientCapabilities });
  }

  permission(params, signal) {
    this.permissions.push(params);
    const waiters = this.permissionWaiters;
    this.permissionWaiters = [];
    waiters.forEach((w) => w(params));
    if (this.answerPermission) return { outcome: this.answerPermission(params) };
    // Left open until the agent withdraws it or goes away.
    return new Promise((resolve) => signal.addEventListener("abort", () => resolve({ outcome: { outcome: "cancelled" } })));
  }

  readTextFile(params) {
    this.fsReads.push(params);
    const content = this.buffers.get(params.path) ?? readFileSync(params.path, "utf8");
    return { content };
  }

  writeTextFile(params) {
    this.fsWrites.push(params);
    this.buffers.set(params.path, params.content);
    return {};
  }

  nextPermission() {
    return new Promise((resolve) => this.permissionWaiters.push(resolve));
  }

  newSession(cwd) {
    return this.agent.request(acp.methods.agent.session.new, { cwd, mcpServers: [] });
  }

  setOption(sessionId, configId, value) {
    return this.agent.request(acp.methods.agent.session.setConfigOption, { sessionId, configId, value });
  }

  prompt(sessionId, text) {
    return this.agent.request(acp.methods.agent.session.prompt, { sessionId, prompt: [{ type: "text", text }] });
  }

  of(sessionId) {
    return this.updates.filter((n) => n.sessionId === sessionId).map((n) => n.update);
  }

  // text joins the agent's message chunks in a session.
  text(sessionId) {
    return this.of(sessionId)
      .filter((u) => u.sessionUpdate === "agent_message_chunk" && u.content.type === "text")
      .map((u) => u.content.text).join("");
  }

  async waitFor(what, cond, ms = 10000) {
    const end = Date.now() + scaled(ms);
    while (!cond()) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}\n--- agentd stderr ---\n${this.stderr}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  // stop closes stdin, as an editor that quits does, and waits for the exit.
  async stop() {
    this.proc.stdin.end();
    const timer = setTimeout(() => this.proc.kill("SIGKILL"), 10000);
    const code = await this.exited;
    clearTimeout(timer);
    this.conn.close();
    return code;
  }
}
