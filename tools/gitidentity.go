package tools

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// A confined command cannot read the user's ~/.gitconfig (HOME is masked,
// and the file may hold credentials: a helper's settings, a token in an
// http.extraHeader), so git inside the sandbox would not know who commits.
// The daemon reads the one thing git needs from it, the user's name and
// email, and gives them as git's identity variables, unless the
// environment sets them already.

// userGitIdentity is user.name and user.email from the user's global git
// configuration ($XDG_CONFIG_HOME/git/config, then ~/.gitconfig, which
// wins), read once.
var userGitIdentity = sync.OnceValues(func() (name, email string) {
	var files []string
	xdg := os.Getenv("XDG_CONFIG_HOME")
	home, _ := os.UserHomeDir()
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	if xdg != "" {
		files = append(files, filepath.Join(xdg, "git", "config"))
	}
	if home != "" {
		files = append(files, filepath.Join(home, ".gitconfig"))
	}
	for _, f := range files {
		n, e := gitUserOf(f)
		if n != "" {
			name = n
		}
		if e != "" {
			email = e
		}
	}
	return name, email
})

// gitUserOf reads [user] name and email from a git configuration file.
func gitUserOf(file string) (name, email string) {
	data, err := os.ReadFile(file)
	if err != nil || len(data) > 1<<20 {
		return "", ""
	}
	section := ""
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			section = strings.ToLower(strings.TrimSpace(strings.Trim(line, "[]")))
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || section != "user" {
			continue
		}
		v = strings.Trim(strings.TrimSpace(v), `"`)
		switch strings.ToLower(strings.TrimSpace(k)) {
		case "name":
			name = v
		case "email":
			email = v
		}
	}
	return name, email
}

// withGitIdentity adds the user's git identity to a confined command's
// environment where it does not set one.
func withGitIdentity(env []string) []string {
	name, email := userGitIdentity()
	for _, kv := range [][2]string{{"GIT_AUTHOR_NAME", name}, {"GIT_COMMITTER_NAME", name},
		{"GIT_AUTHOR_EMAIL", email}, {"GIT_COMMITTER_EMAIL", email}} {
		if kv[1] != "" && envValue(env, kv[0]) == "" {
			env = append(env, kv[0]+"="+kv[1])
		}
	}
	return env
}
