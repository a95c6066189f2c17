package policy

import (
	"testing"

	"github.com/agentd/agentd/tools"
)

// A request to this machine's loopback needs no network (it runs in the
// session's private network, where the session's servers are); anything
// else that names a host, or that cannot be read, does.
func TestLoopbackClientsNeedNoNetwork(t *testing.T) {
	env := newEnv(t)
	p, _ := newPolicy(t, env, tools.ModeAsk)
	for line, want := range map[string]bool{
		"curl -s http://127.0.0.1:8123/hello.txt":               false,
		"curl -sf localhost:3000/health":                        false,
		"curl -H 'Accept: text/plain' 'http://[::1]:80/'":       false,
		"curl http://[::1]:80/":                                 true, // unquoted, [ ] is a glob
		"wget -qO- http://localhost:8080/":                      false,
		"curl -o out.html http://127.0.0.1:8000/":               false,
		"curl http://127.0.0.1:8000/ https://example.com/":      true,
		"curl https://example.com/":                             true,
		"curl http://localhost.evil.test/":                      true,
		"curl http://127.0.0.1.nip.io/":                         true,
		"curl $URL":                                             true,
		"curl -x http://proxy:3128 http://localhost:8000/":      true,
		"curl --resolve localhost:80:1.2.3.4 http://localhost/": true,
		// Options that send the request elsewhere, or that the list
		// does not know, ask for the network (issue 24's red team).
		"curl -sSfL http://127.0.0.1:8000/":                                  false,
		"curl -sSo out.html http://127.0.0.1:8000/":                          false,
		"wget -qO- -S http://localhost:8080/":                                false,
		"curl --proxy http://127.0.0.1:3128 http://localhost:8000/":          true,
		"curl -x 127.0.0.1:3128 http://localhost:8000/":                      true,
		"curl -sx 127.0.0.1:3128 http://localhost:8000/":                     true,
		"curl --connect-to 127.0.0.1:1:10.0.0.1:80 http://127.0.0.1:1/":      true,
		"curl --unix-socket /run/docker.sock http://localhost/containers":    true,
		"curl -K evil.cfg http://127.0.0.1:1/":                               true,
		"curl --config=evil.cfg http://127.0.0.1:1/":                         true,
		"wget --use-askpass=./x.sh http://127.0.0.1:1/":                      true,
		"wget -e use_proxy=on -e http_proxy=10.0.0.1:3128 http://127.0.0.1/": true,
		"http --proxy http:http://10.0.0.1:3128 localhost:8000":              true,
	} {
		an := p.analyze(&tools.Command{Line: line, Cwd: "."})
		got := false
		for _, part := range an.Parts {
			got = got || part.network
		}
		if got != want {
			t.Errorf("%s: network %v, want %v", line, got, want)
		}
	}
}
