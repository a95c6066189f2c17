package policy

import (
	"net"
	"net/url"
	"strings"
	"sync"
)

// An HTTP client pointed only at this machine (curl http://127.0.0.1:8123/,
// wget localhost:3000) needs no network: in the session's private network
// its loopback is where the session's own servers listen (a background
// dev server), and the host's network would not reach them. Any other
// address, an argument that is not literal, or one that cannot be read as
// a URL keeps the command a network one.

// loopbackClients are the HTTP clients whose URLs are read.
var loopbackClients = sync.OnceValue(func() map[string]bool {
	return setOf("curl", "wget", "http", "https", "xh")
})

// valueOptions are, by client, the options whose value is not a URL.
var valueOptions = sync.OnceValue(func() map[string]map[string]bool {
	return map[string]map[string]bool{
		"curl": setOf("-o", "--output", "-H", "--header", "-d", "--data", "--data-raw", "--data-binary", "--data-urlencode",
			"-X", "--request", "-u", "--user", "-A", "--user-agent", "-e", "--referer", "-T", "--upload-file", "-w",
			"--write-out", "-F", "--form", "-m", "--max-time", "--connect-timeout", "--retry", "-b", "--cookie", "-c",
			"--cookie-jar"),
		"wget": setOf("-O", "--output-document", "-P", "--directory-prefix", "--header", "-t", "--tries", "-T", "--timeout",
			"-U", "--user-agent", "--post-data"),
	}
})

// onlyLoopback reports whether p is an HTTP client whose every URL is on
// this machine.
func onlyLoopback(p *shellPart) bool {
	if !loopbackClients()[p.name()] {
		return false
	}
	urls := 0
	args := p.words[1:]
	for i := 0; i < len(args); i++ {
		w := args[i]
		if !w.lit {
			return false
		}
		if strings.HasPrefix(w.val, "-") {
			if valueOptions()[p.name()][w.val] {
				i++ // its value
			}
			continue
		}
		if !loopbackURL(w.val) {
			return false
		}
		urls++
	}
	return urls > 0
}

func loopbackURL(s string) bool {
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	switch h := strings.ToLower(u.Hostname()); h {
	case "localhost", "localhost.":
		return true
	default:
		ip := net.ParseIP(h)
		return ip != nil && ip.IsLoopback()
	}
}
