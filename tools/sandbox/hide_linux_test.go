package sandbox

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A workspace that is HOME holds agentd's own state (every project's
// transcripts, the audit log), its configuration (rules.json) and its
// caches. Commands neither read nor write them — with Landlock alone too,
// where the workspace's grant is carved around them — while the caches
// commands share stay writable and the rest of HOME is the workspace.
func TestHiddenInsideTheWorkspace(t *testing.T) {
	requireSandbox(t)
	home := filepath.Join(visibleTempDir(t), "home")
	files := map[string]string{
		".local/state/agentd/0123abcd/audit.jsonl":      "AUDIT-LINE\n",
		".local/state/agentd/fedc3210/sessions/s.jsonl": "OTHER-TRANSCRIPT\n",
		".config/agentd/config.json":                    `{"apiKey":"KEY-IN-CONFIG"}`,
		".cache/agentd/fedc3210/index.bin":              "INDEX-BYTES\n",
		".cache/agentd/sandbox/go-build/README":         "shared\n",
		".ssh/id_ed25519":                               sshKey + "\n",
		"notes.txt":                                     "my notes\n",
		"project/main.go":                               "package main\n",
	}
	for name, content := range files {
		p := filepath.Join(home, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	hide := []string{filepath.Join(home, ".local/state/agentd"), filepath.Join(home, ".config/agentd"), filepath.Join(home, ".cache/agentd")}
	shared := filepath.Join(home, ".cache/agentd/sandbox")
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + home}
	for _, m := range modes {
		profiles := []Profile{Read, WorkspaceWrite}
		if m.name == "landlock-only" {
			profiles = []Profile{Read}
		}
		for _, p := range profiles {
			t.Run(m.name+"/"+p.String(), func(t *testing.T) {
				sh := func(script string) result {
					return run(t, m, Spec{Profile: p, Workspace: home, Args: []string{"bash", "-c", script}, Env: env,
						Write: []string{shared}, Hide: hide})
				}
				for _, script := range []string{
					"cat .local/state/agentd/0123abcd/audit.jsonl", "grep -r OTHER-TRANSCRIPT .local",
					"cat .config/agentd/config.json", "cat .cache/agentd/fedc3210/index.bin", "cat .ssh/id_ed25519",
					": > .local/state/agentd/0123abcd/audit.jsonl", "echo '{}' > .config/agentd/rules.json",
					"rm -rf .local/state/agentd/fedc3210", "mv .config/agentd .config/x",
				} {
					r := sh(script)
					if r.err != nil {
						t.Fatal(r.err)
					}
					leaked := strings.Contains(r.out, "AUDIT-LINE") || strings.Contains(r.out, "OTHER-TRANSCRIPT") ||
						strings.Contains(r.out, "KEY-IN-CONFIG") || strings.Contains(r.out, "INDEX-BYTES") || strings.Contains(r.out, "8d2f7c1e")
					if r.code == 0 || leaked {
						t.Errorf("%q: exit %d:\n%s", script, r.code, r.out)
					}
				}
				ok := []string{"cat notes.txt", "cat project/main.go", "ls -a | grep -q notes.txt", "cat .cache/agentd/sandbox/go-build/README",
					"echo x > .cache/agentd/sandbox/go-build/new"}
				if p == WorkspaceWrite {
					ok = append(ok, "echo more >> notes.txt")
				}
				for _, script := range ok {
					if r := sh(script); r.err != nil || r.code != 0 {
						t.Errorf("%q: %v exit %d:\n%s", script, r.err, r.code, r.out)
					}
				}
			})
		}
	}
	for name, content := range files {
		if got, err := os.ReadFile(filepath.Join(home, name)); err != nil || (name != "notes.txt" && string(got) != content) {
			t.Errorf("%s changed: %q %v", name, got, err)
		}
	}
	if _, err := os.Stat(filepath.Join(home, ".config/agentd/rules.json")); err == nil {
		t.Error("a command wrote agentd's rules.json")
	}
}
