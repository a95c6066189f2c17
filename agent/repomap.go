package agent

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentd/agentd/tools"
)

// repoMapCap bounds the repository map in the system prompt (~1.5k tokens).
const repoMapCap = 6000

type repoMapper struct {
	once sync.Once
	mu   sync.Mutex // guards text
	text string
}

// repoMap returns the symbol map if it is ready. It is built once in the
// background with universal-ctags when installed; a run never waits for it.
func (a *Agent) repoMap() string {
	m := &a.rmap
	m.once.Do(func() { go m.build(a.sandbox, a.cfg.Root) })
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.text
}

// build runs ctags like every process agentd starts: in the kernel
// sandbox's read profile, and never following a link (out of the workspace).
func (m *repoMapper) build(sb *tools.Sandbox, root string) {
	bin, err := exec.LookPath("ctags")
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := sb.Output(ctx, root, root, bin, "-R", "--links=no", "--output-format=json", "--fields=+n",
		"--exclude=.git", "--exclude=node_modules", "--exclude=vendor", "--exclude=dist", "--exclude=build", "-f", "-", ".")
	if err != nil {
		return // not universal-ctags, or it failed: no map
	}
	text := formatRepoMap(out)
	m.mu.Lock()
	m.text = text
	m.mu.Unlock()
}

var mapKinds = []string{"function", "func", "method", "type", "struct", "interface", "class", "module", "enum", "trait"}

// formatRepoMap turns ctags JSON lines into "path: sym, sym" lines.
func formatRepoMap(out []byte) string {
	byFile := map[string][]string{}
	var files []string
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		var tag struct {
			Type, Name, Path, Kind string
		}
		if json.Unmarshal(sc.Bytes(), &tag) != nil || !slices.Contains(mapKinds, tag.Kind) {
			continue
		}
		if _, ok := byFile[tag.Path]; !ok {
			files = append(files, tag.Path)
		}
		byFile[tag.Path] = append(byFile[tag.Path], tag.Name)
	}
	slices.Sort(files)
	var b strings.Builder
	for _, f := range files {
		line := fmt.Sprintf("%s: %s\n", f, strings.Join(byFile[f], ", "))
		if b.Len()+len(line) > repoMapCap {
			b.WriteString("… (more files)\n")
			break
		}
		b.WriteString(line)
	}
	return b.String()
}
