package tools

import (
	"path"
	"strings"
)

// forcedEnv makes tools behave as in CI: no pagers, no editors, no
// credential prompts, no interactive installers.
var forcedEnv = []string{
	"CI=1", "PAGER=cat", "GIT_PAGER=cat", "GIT_TERMINAL_PROMPT=0", "GIT_EDITOR=true", "EDITOR=true",
	"VISUAL=true", "DEBIAN_FRONTEND=noninteractive", "npm_config_yes=true",
}

// passEnv is the allow-list of the daemon's variables a command inherits:
// the locale, the terminal, where things are, and the toolchains' own
// settings. Anything else (DATABASE_URL, SSH_AUTH_SOCK, SENTRY_DSN,
// MYSQL_PWD, tokens, keys, proxies with credentials, npm_config_* with
// auth tokens) stays with the daemon unless the user names it in config.
// Patterns are matched with path.Match; keep them narrow ("GO*" would
// admit GOOGLE_API_KEY).
var passEnv = []string{
	// Where things are, who and what the user is.
	"PATH", "HOME", "USER", "LOGNAME", "SHELL", "PWD", "TMPDIR", "HOSTNAME",
	"XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME",
	// Locale and terminal.
	"LANG", "LANGUAGE", "LC_*", "TZ", "TERM", "COLORTERM", "NO_COLOR", "FORCE_COLOR", "COLUMNS", "LINES",
	// Go.
	"GOROOT", "GOPATH", "GOBIN", "GOCACHE", "GOMODCACHE", "GOFLAGS", "GOPROXY", "GOPRIVATE", "GONOPROXY", "GONOSUMDB",
	"GONOSUMCHECK", "GOSUMDB", "GOINSECURE", "GOTOOLCHAIN", "GOOS", "GOARCH", "GOAMD64", "GOARM", "GOARM64", "GO386",
	"GOEXPERIMENT", "GODEBUG", "GOTELEMETRY", "GOWORK", "GOENV", "GOTMPDIR", "GOGC", "GOMAXPROCS", "GOMEMLIMIT",
	"GOTRACEBACK", "GOCOVERDIR", "GORACE", "CGO_*",
	// C and build tools.
	"CC", "CXX", "AR", "LD", "CFLAGS", "CXXFLAGS", "CPPFLAGS", "LDFLAGS", "CPATH", "LIBRARY_PATH", "LD_LIBRARY_PATH",
	"PKG_CONFIG_PATH", "MAKEFLAGS",
	// Node.
	"NODE_PATH", "NODE_OPTIONS", "NODE_ENV", "NODE_EXTRA_CA_CERTS", "NVM_DIR", "NVM_BIN", "NVM_INC", "COREPACK_HOME",
	"PNPM_HOME", "VOLTA_HOME", "BUN_INSTALL", "DENO_DIR", "YARN_CACHE_FOLDER",
	// Python.
	"VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME", "PYTHONDONTWRITEBYTECODE", "PYTHONUNBUFFERED", "PYTHONIOENCODING",
	"PYENV_ROOT", "PYENV_VERSION", "CONDA_PREFIX", "CONDA_DEFAULT_ENV", "UV_CACHE_DIR", "PIP_CACHE_DIR",
	// Rust, Java and the JVM's tools.
	"CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "RUSTFLAGS", "CARGO_TARGET_DIR", "JAVA_HOME",
	"GRADLE_USER_HOME", "MAVEN_OPTS",
	// Certificates (paths, not secrets) and git's identity.
	"SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE",
	"GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL",
}

// secretPatterns are variable names (upper-cased) that look like
// credentials: a second lock on the allow-list's wildcard entries.
var secretPatterns = []string{
	"*_KEY", "*_KEYS", "*APIKEY*", "*_API_KEY*", "*TOKEN*", "*SECRET*", "*PASSWORD*", "*PASSWD*", "*_PASS", "*_PWD",
	"*CREDENTIAL*", "*_PAT", "*PRIVATE_KEY*", "*_AUTH", "*_DSN", "*DATABASE_URL*",
}

// ChildEnv builds the environment of a command the model runs: the
// variables of base on the allow-list (or matching one of the user's allow
// globs, from config), then the forced non-interactive settings, then the
// user's secrets for commands, which never reach the model.
func ChildEnv(base []string, secrets map[string]string, allow []string) []string {
	var out []string
	idx := map[string]int{}
	set := func(k, v string) {
		if i, ok := idx[k]; ok {
			out[i] = k + "=" + v
			return
		}
		idx[k] = len(out)
		out = append(out, k+"="+v)
	}
	for _, kv := range base {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			continue
		}
		if matchAny(k, allow) || (matchAny(k, passEnv) && !looksSecret(k)) {
			set(k, v)
		}
	}
	for _, kv := range forcedEnv {
		k, v, _ := strings.Cut(kv, "=")
		set(k, v)
	}
	for k, v := range secrets {
		set(k, v)
	}
	return out
}

// LooksSecret reports whether a variable's name looks like a credential's
// (GITHUB_TOKEN, OPENAI_API_KEY, DATABASE_URL …).
func LooksSecret(name string) bool { return looksSecret(name) }

func looksSecret(name string) bool {
	up := strings.ToUpper(name)
	for _, p := range secretPatterns {
		if ok, _ := path.Match(p, up); ok {
			return true
		}
	}
	return false
}

func matchAny(name string, patterns []string) bool {
	for _, p := range patterns {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}
