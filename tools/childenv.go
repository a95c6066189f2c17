package tools

import (
	"path"
	"strings"

	"github.com/agentd/agentd/internal/lazy"
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
// variables of base on the allow-list, their credentials stripped
// (stripCredentials), or matching one of the user's allow globs (from
// config, passed as they are), then the forced non-interactive settings,
// then the user's secrets for commands, which never reach the model.
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
		switch {
		case matchAny(k, allow):
			set(k, v) // the user named it: as it is
		case matchAny(k, passEnv) && !looksSecret(k):
			if v, ok := stripCredentials(v); ok {
				set(k, v)
			}
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

// A variable on the allow-list is a toolchain's setting, but its value can
// carry a credential: GOPROXY=https://user:token@proxy.corp,
// GOFLAGS=-ldflags=-X=main.apiToken=…, MAVEN_OPTS=-Dmaven.repo.password=…,
// a URL's ?access_token=. stripCredentials removes them, keeping the rest
// of the setting:
//
//   - the user information of every URL (scheme://user:pass@host → scheme://host);
//   - a query parameter whose name looks like a credential's;
//   - a word (options are separated by spaces) that sets something whose
//     name looks like a credential's (-Dhttp.proxyPassword=…,
//     --token=…, -X=main.apiKey=…), and the word after an option that
//     takes one (--password x);
//
// and drops the variable (false) when what is left still holds a token of
// a known shape (ghp_…, AKIA…, xoxb-…). A user who wants a credential in
// a command's environment names the variable in the settings' env list.
func stripCredentials(v string) (string, bool) {
	if !strings.ContainsAny(v, "@=:_-") {
		return v, true // a path, a number, a plain word: nothing to strip
	}
	v = urlUserinfo().ReplaceAllString(v, "$1")
	v = secretQuery().ReplaceAllString(v, "$1")
	if strings.ContainsAny(v, "=- ") {
		words := strings.Fields(v)
		kept := words[:0]
		skipNext := false
		for _, w := range words {
			switch {
			case skipNext:
				skipNext = false
			case secretSetting().MatchString(w):
			case secretOption().MatchString(w):
				skipNext = true
			default:
				kept = append(kept, w)
			}
		}
		if len(kept) != len(words) || skipNext {
			v = strings.Join(kept, " ")
		}
	}
	if tokenShape().MatchString(v) {
		return "", false
	}
	return v, true
}

// credentialName is what a credential's name contains: password, passwd,
// passphrase, pass and pwd as words, secret, token, apikey (api_key,
// api-key, api.key), credential, private key, auth as a word or authToken,
// _auth, login as a word (sonar.login), access key.
const credentialName = `(?i:password|passwd|passphrase|\bpass\b|\bpwd\b|secret|token|api[._-]?key|credential|` +
	`private[._-]?key|\bauth\b|auth[._-]?token|_auth|\blogin\b|access[._-]?key)`

var (
	// urlUserinfo is "scheme://user[:pass]@", kept: "scheme://".
	urlUserinfo = lazy.Regexp(`([A-Za-z][A-Za-z0-9+.-]*://)[^/?#@\s,|]*@`)
	// secretQuery is "?name=value" or "&name=value" with a credential's name.
	secretQuery = lazy.Regexp(`([?&])[A-Za-z0-9_.-]*` + credentialName + `[A-Za-z0-9_.-]*=[^&\s,|#]*&?`)
	// secretSetting is a word that sets a credential: -Dx.password=…,
	// --token=…, -ldflags=-X=main.apiKey=…, PASSWORD=….
	secretSetting = lazy.Regexp(`[A-Za-z0-9_.-]*` + credentialName + `[A-Za-z0-9_.-]*=\S`)
	// secretOption is an option naming a credential, its value the next word.
	secretOption = lazy.Regexp(`^--?[A-Za-z0-9_.-]*` + credentialName + `[A-Za-z0-9_.-]*$`)
	// tokenShape are tokens whose shape gives them away: GitHub's, GitLab's,
	// Slack's, AWS's access key ids, npm's, OpenAI-style keys, JWTs.
	tokenShape = lazy.Regexp(`\b(gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,}|glpat-[A-Za-z0-9_-]{20,}|` +
		`xox[abprs]-[A-Za-z0-9-]{10,}|AKIA[0-9A-Z]{16}|npm_[A-Za-z0-9]{36}|sk-[A-Za-z0-9_-]{20,}|` +
		`eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]+)`)
)
