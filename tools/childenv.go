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

// secretPatterns are variable names (upper-cased) that look like
// credentials, matched with path.Match.
var secretPatterns = []string{
	"*_KEY", "*_KEYS", "*_APIKEY", "*_API_KEY*", "*_TOKEN", "*_TOKENS", "*_SECRET", "*_SECRETS", "*SECRET_*",
	"*PASSWORD*", "*PASSWD*", "*_PASS", "*CREDENTIAL*", "*_PAT", "*PRIVATE_KEY*", "*_AUTH",
	"AWS_*", "GOOGLE_*", "GCLOUD_*", "GCP_*", "AZURE_*", "ARM_CLIENT_*", "OPENAI_*", "ANTHROPIC_*",
	"AGENTD_*", "HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN", "NPM_TOKEN",
	"DOCKER_AUTH_CONFIG", "KUBECONFIG", "VAULT_*",
}

// ChildEnv builds the environment of a command the model runs: base
// without secret-looking variables (unless a name matches one of the allow
// globs), then the forced non-interactive settings, then the user's
// secrets, which are meant for commands and never reach the model.
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
		if looksSecret(k) && !allowed(k, allow) {
			continue
		}
		set(k, v)
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

func looksSecret(name string) bool {
	up := strings.ToUpper(name)
	for _, p := range secretPatterns {
		if ok, _ := path.Match(p, up); ok {
			return true
		}
	}
	return false
}

func allowed(name string, allow []string) bool {
	for _, p := range allow {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}
