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

// flagOptions are, by client, the options that take no value and change
// nothing about where the request goes. Any other option (a proxy,
// --connect-to, --resolve, --unix-socket, a config file, wget's -e or
// askpass program, --opt=value forms) keeps the command a network one: an
// option the list does not know could send the request elsewhere, so the
// line asks for the network rather than run without it.
var flagOptions = sync.OnceValue(func() map[string]map[string]bool {
	return map[string]map[string]bool{
		"curl": setOf("-s", "--silent", "-S", "--show-error", "-f", "--fail", "--fail-with-body", "-L", "--location",
			"-v", "--verbose", "-i", "--include", "-I", "--head", "-k", "--insecure", "-G", "--get", "-N", "--no-buffer",
			"--compressed", "-#", "--progress-bar", "-O", "--remote-name", "-J", "--remote-header-name", "--http1.1", "--http2"),
		"wget": setOf("-q", "--quiet", "-S", "--server-response", "-v", "--verbose", "-nv", "--no-verbose", "--spider",
			"-c", "--continue", "-N", "--timestamping", "--no-check-certificate"),
	}
})

// shortFlags are, by client, the one-letter flags that may be written
// together (-sSfL, -qO-); a value option's letter ends the cluster, the
// rest of it being its value.
func shortFlags(client string) string {
	switch client {
	case "curl":
		return "sSfLviIkGNOJ#"
	case "wget":
		return "qSvcN"
	}
	return ""
}

// onlyLoopback reports whether p is an HTTP client whose every URL is on
// this machine, with no option that could send it elsewhere.
func onlyLoopback(p *shellPart) bool {
	name := p.name()
	if !loopbackClients()[name] {
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
			switch takes, known := knownOption(name, w.val); {
			case !known:
				return false
			case takes:
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

// knownOption says whether opt is an option of the client that cannot send
// the request elsewhere, and whether its value is the next word. http and
// xh (HTTPie) are judged by their URLs alone only without options.
func knownOption(client, opt string) (takesValue, known bool) {
	switch {
	case valueOptions()[client][opt]:
		return true, true
	case flagOptions()[client][opt]:
		return false, true
	case strings.HasPrefix(opt, "--") || len(opt) < 2:
		return false, false
	}
	for j, r := range opt[1:] {
		if valueOptions()[client]["-"+string(r)] {
			return j == len(opt)-2, true // -qO- has its value; -sSo takes the next word
		}
		if !strings.ContainsRune(shortFlags(client), r) {
			return false, false
		}
	}
	return false, true
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
