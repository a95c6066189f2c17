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

// Credentials inside the values of allow-listed variables are stripped;
// the rest of each setting passes. A variable the user named passes as it
// is.
func TestChildEnvStripsCredentials(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"GOPROXY", "https://user:tok3n@proxy.corp.example/go,https://proxy.golang.org|direct", "https://proxy.corp.example/go,https://proxy.golang.org|direct"},
		{"GOPROXY", "https://only-a-token@proxy.corp.example", "https://proxy.corp.example"},
		{"GOSUMDB", "sum.corp+abc https://u:p@sum.corp.example", "sum.corp+abc https://sum.corp.example"},
		{"GOFLAGS", "-mod=mod -ldflags=-X=main.apiToken=s3cr3t -trimpath", "-mod=mod -trimpath"},
		{"MAVEN_OPTS", "-Xmx2g -Dmaven.repo.password=s3cr3t -Dhttp.proxyPassword=s3cr3t -Dsonar.login=s3cr3t -Dfile.encoding=UTF-8", "-Xmx2g -Dfile.encoding=UTF-8"},
		{"NODE_OPTIONS", "--max-old-space-size=4096 --auth-token s3cr3t", "--max-old-space-size=4096"},
		{"GOPROXY", "https://proxy.corp.example/?access_token=s3cr3t&x=1", "https://proxy.corp.example/?x=1"},
		{"CGO_CFLAGS", "-O2 -DAPI_KEY=s3cr3t -I/usr/include", "-O2 -I/usr/include"},
		{"GOFLAGS", "-mod=mod -tags=ghp_abcdefghijklmnopqrstuvwxyz0123", ""}, // a token of a known shape: dropped
		// Settings that carry none pass unchanged.
		{"GOFLAGS", "-mod=mod -trimpath -tags=integration,sqlite", "-mod=mod -trimpath -tags=integration,sqlite"},
		{"GOPROXY", "https://proxy.golang.org,direct", "https://proxy.golang.org,direct"},
		{"GOPRIVATE", "*.corp.example,github.com/me/*", "*.corp.example,github.com/me/*"},
		{"MAVEN_OPTS", "-Xmx2g -Dfile.encoding=UTF-8 -Dmaven.repo.local=/m2", "-Xmx2g -Dfile.encoding=UTF-8 -Dmaven.repo.local=/m2"},
		{"PATH", "/usr/local/go/bin:/home/u/go/bin:/usr/bin", "/usr/local/go/bin:/home/u/go/bin:/usr/bin"},
		{"GIT_AUTHOR_EMAIL", "me@example.com", "me@example.com"},
		{"LDFLAGS", "-L/opt/lib -Wl,-rpath,/opt/lib", "-L/opt/lib -Wl,-rpath,/opt/lib"},
		{"PATH", "/opt/auth/bin:/opt/tokens:/usr/bin", "/opt/auth/bin:/opt/tokens:/usr/bin"},
		{"MAVEN_OPTS", "-Dauthor=me -Dbypass=yes -Dcompass.dir=/c", "-Dauthor=me -Dbypass=yes -Dcompass.dir=/c"},
		{"MAVEN_OPTS", "-Ddb.pass=s3cr3t -Dx=1", "-Dx=1"},
	} {
		got, ok := envMap(ChildEnv([]string{tc.name + "=" + tc.in}, nil, nil))[tc.name]
		if tc.want == "" {
			if ok {
				t.Errorf("%s=%q passed as %q, want it dropped", tc.name, tc.in, got)
			}
			continue
		}
		if got != tc.want {
			t.Errorf("%s=%q: got %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
	named := "https://user:tok3n@proxy.corp.example"
	if got := envMap(ChildEnv([]string{"GOPROXY=" + named}, nil, []string{"GOPROXY"}))["GOPROXY"]; got != named {
		t.Errorf("a variable the user named: got %q", got)
	}
}
