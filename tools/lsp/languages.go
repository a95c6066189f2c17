package lsp

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"go.lsp.dev/protocol"
)

// language is one language agentd knows a server for.
type language struct {
	// Name is the key in the languageServers setting: go, typescript,
	// python, rust, c.
	Name string
	// Command is the server's command line by default; its first word is
	// looked up on the PATH.
	Command []string
	// IDs maps each file extension to LSP's language identifier.
	IDs map[string]string
	// Init are the server's initializationOptions.
	Init any
	// Ask, when set, asks the server for a file's diagnostics instead of
	// waiting for it to publish them.
	Ask func(ctx context.Context, s *server, path string) ([]protocol.Diagnostic, error)
}

// languages are the servers agentd can run.
var languages = []language{
	// diagnosticsDelay 0: gopls publishes its analyzers' findings (vet's)
	// with the type errors, not a second later.
	{Name: "go", Command: []string{"gopls"}, IDs: map[string]string{".go": "go"},
		Init: map[string]any{"diagnosticsDelay": "0s"}},
	// useSyntaxServer never: tsserver's syntax-only server would answer a
	// definition while the project loads, with the import, not the
	// declaration.
	{Name: "typescript", Command: []string{"typescript-language-server", "--stdio"}, Ask: tsDiagnostics,
		Init: map[string]any{"tsserver": map[string]any{"useSyntaxServer": "never"}},
		IDs: map[string]string{".ts": "typescript", ".tsx": "typescriptreact", ".mts": "typescript", ".cts": "typescript",
			".js": "javascript", ".jsx": "javascriptreact", ".mjs": "javascript", ".cjs": "javascript"}},
	{Name: "python", Command: []string{"pyright-langserver", "--stdio"}, IDs: map[string]string{".py": "python", ".pyi": "python"}},
	{Name: "rust", Command: []string{"rust-analyzer"}, IDs: map[string]string{".rs": "rust"}},
	{Name: "c", Command: []string{"clangd"}, IDs: map[string]string{".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp",
		".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp"}},
}

func extOf(path string) string { return strings.ToLower(filepath.Ext(path)) }

// languageOf is the language of a file, by its extension.
func languageOf(path string) (language, bool) {
	ext := extOf(path)
	for _, l := range languages {
		if _, ok := l.IDs[ext]; ok {
			return l, true
		}
	}
	return language{}, false
}

// Names lists the languages agentd can run a server for.
func Names() []string {
	out := make([]string, len(languages))
	for i, l := range languages {
		out[i] = l.Name
	}
	return out
}

// Settings are the languageServers setting: whether agentd runs language
// servers itself, and which, by language.
type Settings struct {
	// Auto: agentd runs the server of a language when it is installed. The
	// zero Settings run none.
	Auto bool
	// Servers replace a language's command, or turn it off.
	Servers map[string]ServerSetting
}

// ServerSetting is one language's entry in the setting.
type ServerSetting struct {
	// Command is the server's command line; its first word is a path or a
	// name looked up on the PATH.
	Command []string `json:"command,omitempty"`
	// Disabled turns the language's server off.
	Disabled bool `json:"disabled,omitempty"`
}

// ParseSettings reads the setting: "auto", "off", or an object by language
// (`{"go": {"command": ["gopls", "-remote=auto"]}, "rust": false}`) that
// changes the automatic choice. A language agentd does not know is a
// warning.
func ParseSettings(raw json.RawMessage) (Settings, []string, error) {
	var word string
	if json.Unmarshal(raw, &word) == nil {
		return ParseWord(word)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return Settings{}, nil, fmt.Errorf(`must be "auto", "off" or an object by language (%s)`, strings.Join(Names(), ", "))
	}
	s := Settings{Auto: true, Servers: map[string]ServerSetting{}}
	var warnings []string
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, name := range keys {
		if !slices.Contains(Names(), name) {
			warnings = append(warnings, fmt.Sprintf("languageServers: unknown language %q (ignored; known: %s)", name, strings.Join(Names(), ", ")))
			continue
		}
		v := obj[name]
		var on bool
		if json.Unmarshal(v, &on) == nil {
			s.Servers[name] = ServerSetting{Disabled: !on}
			continue
		}
		var one ServerSetting
		dec := json.NewDecoder(strings.NewReader(string(v)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&one); err != nil {
			return Settings{}, warnings, fmt.Errorf(`%s: must be false, true or {"command": [...], "disabled": bool}: %v`, name, err)
		}
		if !one.Disabled && len(one.Command) == 0 {
			return Settings{}, warnings, fmt.Errorf("%s: command is empty", name)
		}
		s.Servers[name] = one
	}
	return s, warnings, nil
}

// ParseWord reads the setting from the environment: "auto", "off", or the
// object as JSON.
func ParseWord(word string) (Settings, []string, error) {
	switch strings.TrimSpace(word) {
	case "auto", "":
		return Settings{Auto: true}, nil, nil
	case "off":
		return Settings{}, nil, nil
	}
	if strings.HasPrefix(strings.TrimSpace(word), "{") {
		return ParseSettings(json.RawMessage(word))
	}
	return Settings{}, nil, fmt.Errorf(`%q is not "auto", "off" or a JSON object by language`, word)
}

// String shows the setting as it would be written.
func (s Settings) String() string {
	if !s.Auto {
		return "off"
	}
	if len(s.Servers) == 0 {
		return "auto"
	}
	b, _ := json.Marshal(s.Servers)
	return string(b)
}

// command is the command line of lang's server under s; nil when off.
func (s Settings) command(lang language) []string {
	if !s.Auto {
		return nil
	}
	if o, ok := s.Servers[lang.Name]; ok {
		if o.Disabled {
			return nil
		}
		return o.Command
	}
	return lang.Command
}
