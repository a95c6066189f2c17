package mcp

import (
	"net/http"
	"os"
	"strings"

	"github.com/agentd/agentd/tools"
)

// redactor hides from the model the credentials a server is configured
// with: what its results and errors (its stderr, its messages) say of the
// token it was given would otherwise reach the model, and from there the
// model's host. They are the values of the ${VAR}s and env keys that look
// like credentials, and of the headers that carry them (the token of
// "Bearer <token>" too).
func (s Server) redactor() *tools.Redactor {
	r := tools.NewRedactor()
	for _, v := range s.Variables() {
		if val, ok := os.LookupEnv(v); ok && tools.LooksSecret(v) {
			r.AddNamed(v, val)
		}
	}
	x, _ := s.expanded(os.LookupEnv)
	for k, v := range x.Env {
		if tools.LooksSecret(k) {
			r.AddNamed(k, v)
		}
	}
	for k, v := range x.Headers {
		switch http.CanonicalHeaderKey(k) {
		case "Authorization", "Proxy-Authorization", "Cookie":
		default:
			if !tools.LooksSecret(strings.ReplaceAll(k, "-", "_")) {
				continue
			}
		}
		r.Add(v)
		if f := strings.Fields(v); len(f) > 1 {
			r.Add(f[len(f)-1])
		}
	}
	return r
}
