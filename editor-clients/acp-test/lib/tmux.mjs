// A private tmux server whose panes run a shell a test types into, as a
// person at a terminal does: acpx asks its y/N questions only on a terminal.
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { scaled } from "./scale.mjs";

export class Tmux {
  // dir holds the server's socket; env is the shells' environment.
  constructor(dir, env) {
    this.socket = join(dir, "tmux.sock");
    this.panes = 0;
    const vars = Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
    this.tmux("new-session", "-d", "-s", "t", "-x", "220", "-y", "50", ...vars, "bash --norc --noprofile");
    this.env = vars;
  }

  tmux(...args) {
    return execFileSync("tmux", ["-S", this.socket, ...args], { encoding: "utf8" });
  }

  // newPane opens another window with the same environment and returns its
  // target.
  newPane() {
    this.panes++;
    this.tmux("new-window", "-d", "-t", `t:${this.panes}`, ...this.env, "bash --norc --noprofile");
    return `t:${this.panes}`;
  }

  // type sends a line of text and Enter, literally.
  type(line, pane = "t:0") {
    this.tmux("send-keys", "-t", pane, "-l", line);
    this.tmux("send-keys", "-t", pane, "Enter");
  }

  // screen is the pane's text, its history included, wrapped lines joined.
  screen(pane = "t:0") {
    return this.tmux("capture-pane", "-p", "-J", "-S", "-500", "-t", pane);
  }

  // step marks the pane's screen: what a later waitFor looks at starts
  // after it. The typed line differs from what it prints.
  step(pane = "t:0") {
    this.steps = (this.steps ?? 0) + 1;
    this.type(`printf '== step %s ==\\n' ${this.steps}`, pane);
    this.marks = { ...this.marks, [pane]: `== step ${this.steps} ==` };
  }

  // since is the pane's text after the last step mark on it.
  since(pane = "t:0") {
    const s = this.screen(pane);
    const mark = this.marks?.[pane];
    if (!mark) return s;
    const lines = s.split("\n").map((l) => l.trimEnd());
    const i = lines.lastIndexOf(mark);
    return i < 0 ? "" : lines.slice(i + 1).join("\n");
  }

  // waitFor awaits text matching re on the pane since its last step mark,
  // and returns that text; ms is an idle machine's bound, scaled to the load.
  async waitFor(what, re, { pane = "t:0", ms = 30000 } = {}) {
    const end = Date.now() + scaled(ms);
    for (;;) {
      const s = this.since(pane);
      if (re.test(s)) return s;
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}\n--- screen ---\n${this.screen(pane)}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  kill() {
    try {
      this.tmux("kill-server");
    } catch {
      // already gone
    }
  }
}
