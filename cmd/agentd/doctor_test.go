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
