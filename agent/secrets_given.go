package agent

import "sync"

// givenSecrets are the values the user answered secret questions with, or
// typed at a command's password prompt, kept in memory only (never persisted) for as long as the daemon runs:
// every new run's redactor starts with them. A command the user approved
// may have written one to a file; a run's own redactor hid it from that
// run, and a later run (of any session) that reads the file must not show
// it to the model either. After a restart they are gone: the docs say so.
type givenSecrets struct {
	mu   sync.Mutex
	list []givenSecret
}

type givenSecret struct{ name, value string }

func (g *givenSecrets) add(name, value string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, s := range g.list {
		if s.value == value {
			return
		}
	}
	g.list = append(g.list, givenSecret{name, value})
}

func (g *givenSecrets) all() []givenSecret {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]givenSecret(nil), g.list...)
}
