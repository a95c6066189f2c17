package tools

import (
	"strings"
	"testing"
)

func envMap(env []string) map[string]string {
	m := map[string]string{}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return m
}

// The environment is an allow-list: credentials of every shape stay with
// the daemon, the toolchains' settings pass.
func TestChildEnvAllowList(t *testing.T) {
	absent := []string{"DATABASE_URL", "SSH_AUTH_SOCK", "SENTRY_DSN", "MYSQL_PWD", "SLACK_TOKEN", "MYTOKEN",
		"GITLAB_TOKEN", "STRIPE_APIKEY", "MAPSAPIKEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AWS_ACCESS_KEY_ID",
		"AWS_SECRET_ACCESS_KEY", "GOOGLE_API_KEY", "PGPASSWORD", "REDIS_URL", "HTTPS_PROXY", "http_proxy",
		"npm_config__authToken", "NPM_CONFIG_REGISTRY", "GIT_ASKPASS", "GIT_SSH_COMMAND", "GIT_CONFIG_COUNT",
		"GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0", "LESSOPEN", "BASH_ENV", "ENV", "PROMPT_COMMAND", "DBUS_SESSION_BUS_ADDRESS",
		"XDG_RUNTIME_DIR", "DISPLAY", "KUBECONFIG", "DOCKER_HOST", "AGENTD_MODEL", "LC_SECRET_TOKEN", "CGO_TOKEN"}
	present := map[string]string{"PATH": "/usr/bin", "HOME": "/home/u", "LANG": "C.UTF-8", "LC_ALL": "C", "TERM": "xterm",
		"GOPATH": "/home/u/go", "GOCACHE": "/c", "GOFLAGS": "-mod=mod", "CGO_ENABLED": "0", "GOPROXY": "off",
		"NODE_PATH": "/n", "VIRTUAL_ENV": "/v", "CARGO_HOME": "/h/.cargo", "JAVA_HOME": "/j", "TZ": "UTC"}
	var base []string
	for _, k := range absent {
		base = append(base, k+"=secret-"+k)
	}
	for k, v := range present {
		base = append(base, k+"="+v)
	}
	got := envMap(ChildEnv(base, nil, nil))
	for _, k := range absent {
		if v, ok := got[k]; ok {
			t.Errorf("%s passed to the command (%q)", k, v)
		}
	}
	for k, v := range present {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	for _, kv := range ChildEnv(base, nil, nil) {
		if strings.Contains(kv, "secret-") {
			t.Errorf("a secret value passed: %s", kv)
		}
	}
}

// Names the user adds in config pass, credentials included (the user's
// choice); the run's secrets always pass and win over the base.
func TestChildEnvUserAllowAndSecrets(t *testing.T) {
	base := []string{"PATH=/bin", "DATABASE_URL=postgres://u:p@h/db", "MY_TOOL_HOME=/t", "PAGER=less", "TMPDIR=/x"}
	got := envMap(ChildEnv(base, map[string]string{"DEPLOY_TOKEN": "s", "PATH": "/override"}, []string{"DATABASE_URL", "MY_TOOL_*"}))
	if got["DATABASE_URL"] != "postgres://u:p@h/db" || got["MY_TOOL_HOME"] != "/t" {
		t.Errorf("user allow-list not honoured: %v", got)
	}
	if got["DEPLOY_TOKEN"] != "s" || got["PATH"] != "/override" {
		t.Errorf("secrets not set last: %v", got)
	}
	if got["PAGER"] != "cat" || got["CI"] != "1" || got["GIT_TERMINAL_PROMPT"] != "0" {
		t.Errorf("forced settings missing: %v", got)
	}
}
