// Test deadlines scaled to the machine, as the Go tests' internal/await scales them: written for
// an idle machine, multiplied by AGENTD_TEST_TIMEOUT_SCALE when set, else by the 1-minute load
// per CPU (at least 1, at most 20), read again at every call. A deadline met on an idle machine
// is met on a busy one; what never comes still fails.
import os from 'node:os';

/** The factor every deadline is multiplied by, now. */
export function scale() {
  const env = Number(process.env.AGENTD_TEST_TIMEOUT_SCALE);
  if (env > 0) return env;
  const per = os.loadavg()[0] / Math.max(1, os.cpus().length);
  return Math.min(Math.max(per, 1), 20);
}

/** ms scaled for this machine, now. */
export const scaled = (ms) => Math.round(ms * scale());
