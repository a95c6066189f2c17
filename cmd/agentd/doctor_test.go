package main

import (
	"encoding/json"
	"os/exec"
	"strings"
	"testing"

	"github.com/agentd/agentd/internal/proctest"
	"github.com/agentd/agentd/tools/sandbox"
)

// The real binary is its own sandbox entry point: `agentd doctor` probes
// through it and times commands confined by it.
func TestDoctor(t *testing.T) {
	out, err := exec.Command(proctest.Agentd(t), "doctor", "--json", "--bench", "3").Output()
	if err != nil {
		t.Fatalf("agentd doctor: %v\n%s", err, out)
	}
	var report struct {
		Sandbox sandbox.Status     `json:"sandbox"`
		Cost    map[string]float64 `json:"costMs"`
	}
	if err := json.Unmarshal(out, &report); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	st := report.Sandbox
	if !st.EntryPoint || st.Landlock < 1 || !st.Supports(sandbox.WorkspaceWrite) {
		t.Fatalf("the sandbox is not active through the agentd binary:\n%s", st)
	}
	for _, k := range []string{"plain", "full", "read", "workspace-write"} {
		if report.Cost[k] <= 0 {
			t.Errorf("no cost for %s: %v", k, report.Cost)
		}
	}
	text, err := exec.Command(proctest.Agentd(t), "doctor").Output()
	if err != nil || !strings.Contains(string(text), "kernel sandbox: active (Landlock ABI") {
		t.Errorf("agentd doctor: %v\n%s", err, text)
	}
}

// With Landlock alone (sandbox: landlock, as where user namespaces are
// missing) doctor says exactly which profiles there are and exits 1 when
// the approval mode needs workspace-write, which is then missing; 0 in
// read-only mode, which needs only read.
func TestDoctorLandlockAlone(t *testing.T) {
	bin := proctest.Agentd(t)
	doctor := func(mode string, args ...string) (string, int) {
		cmd := exec.Command(bin, append([]string{"doctor"}, args...)...)
		cmd.Env = append(cmd.Environ(), "AGENTD_SANDBOX=landlock", "AGENTD_POLICY="+mode)
		out, err := cmd.Output()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return string(out), code
	}
	out, code := doctor("ask")
	if code != 1 || !strings.Contains(out, "PARTLY active") || !strings.Contains(out, "workspace-write: NO") ||
		!strings.Contains(out, "read:            yes") || !strings.Contains(out, "NOT ENOUGH: the approval mode ask") {
		t.Errorf("landlock alone, ask: exit %d\n%s", code, out)
	}
	out, code = doctor("ask", "--json")
	var report struct {
		Profiles []string `json:"profiles"`
		Missing  string   `json:"missing"`
	}
	if err := json.Unmarshal([]byte(out), &report); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if code != 1 || strings.Join(report.Profiles, ",") != "read,full" || !strings.Contains(report.Missing, "workspace-write") {
		t.Errorf("landlock alone, --json: exit %d %+v", code, report)
	}
	if out, code = doctor("read-only"); code != 0 {
		t.Errorf("landlock alone, read-only mode needs only read: exit %d\n%s", code, out)
	}
}
