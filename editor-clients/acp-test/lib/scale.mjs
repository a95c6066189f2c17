// Deadlines that scale with the machine's load, as the Go tests' do
// (internal/await): AGENTD_TEST_TIMEOUT_SCALE when set, else the 1-minute
// load average per CPU, between 1 and 20. A wait that fails only on a busy
// machine is a defect of the wait.
import { readFileSync } from "node:fs";
import { availableParallelism } from "node:os";

export function scale() {
  const env = Number(process.env.AGENTD_TEST_TIMEOUT_SCALE);
  if (env > 0) return env;
  try {
    const load = Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0]);
    return Math.min(Math.max(load / availableParallelism(), 1), 20);
  } catch {
    return 1;
  }
}

// scaled is ms for this machine, now.
export function scaled(ms) {
  return Math.round(ms * scale());
}
