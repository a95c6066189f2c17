package tools

import (
	"encoding/base64"
	"net/url"
	"path/filepath"
	"strings"

	"github.com/agentd/agentd/internal/lazy"
)

// GitConfigSecrets are the credentials the workspace's .git/config holds:
// the password (or token) in a remote's URL (https://user:TOKEN@host/…,
// https://TOKEN@host/…) and http.extraHeader values (actions/checkout keeps
// "AUTHORIZATION: basic base64(x-access-token:TOKEN)" there). The file is
// in the workspace, so read_file and a read-only cat read it unasked: the
// agent hides these values from what the model reads, as it hides the
// secrets the user gives.
func GitConfigSecrets(root string) []string {
	data, err := ReadRegularFile(filepath.Join(root, ".git", "config"), 1<<20)
	if err != nil {
		return nil
	}
	var out []string
	add := func(s string) {
		if s = strings.TrimSpace(s); len(s) >= 6 {
			out = append(out, s)
		}
	}
	for _, line := range strings.Split(string(data), "\n") {
		m := gitConfigLine().FindStringSubmatch(line)
		if m == nil {
			continue
		}
		key, val := strings.ToLower(m[1]), strings.Trim(strings.TrimSpace(m[2]), `"`)
		switch key {
		case "url", "pushurl":
			u, err := url.Parse(val)
			if err != nil || u.User == nil {
				continue
			}
			if p, ok := u.User.Password(); ok {
				add(p)
			} else {
				add(u.User.Username()) // https://TOKEN@host
			}
		case "extraheader":
			add(val)
			f := strings.Fields(val)
			if len(f) == 0 {
				continue
			}
			last := f[len(f)-1]
			add(last)
			if dec, err := base64.StdEncoding.DecodeString(last); err == nil {
				add(string(dec))
				if _, tok, ok := strings.Cut(string(dec), ":"); ok {
					add(tok)
				}
			}
		}
	}
	return out
}

var gitConfigLine = lazy.Regexp(`(?i)^\s*(url|pushurl|extraheader)\s*=\s*(.+?)\s*$`)
