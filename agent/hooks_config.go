package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// HookEvent names when a hook runs.
type HookEvent string

// Hook events.
const (
	// HookBeforeTool runs before the policy judges a tool call; it may
	// deny the call, with a reason the model reads.
	HookBeforeTool HookEvent = "before_tool"
	// HookAfterTool runs after a tool call ran.
	HookAfterTool HookEvent = "after_tool"
	// HookInputRequested runs when a run asks the user something.
	HookInputRequested HookEvent = "input_requested"
	// HookRunFinished runs when a run ends, before the editor hears it.
	HookRunFinished HookEvent = "run_finished"
)

// HookEvents lists every event, in the order they are documented.
var HookEvents = []HookEvent{HookBeforeTool, HookAfterTool, HookInputRequested, HookRunFinished}

// toolEvent says whether the event is about one tool call (so a hook on
// it may be limited to tools by name).
func (e HookEvent) toolEvent() bool { return e == HookBeforeTool || e == HookAfterTool }

// Hooks are the user's hooks by event, each list in config.json's order.
// They come from the user's config.json only: a workspace cannot add any
// (docs/extensions.md says why).
type Hooks map[HookEvent][]Hook

// Hook is one command run on an event.
type Hook struct {
	// Command is a shell line, run with /bin/sh -c; Args, when set
	// instead, is the program and its arguments.
	Command string
	Args    []string
	// Match limits a tool event's hook to the tools whose whole name it
	// matches; nil matches every tool.
	Match *regexp.Regexp
	// Timeout bounds the hook (defaultHookTimeout when not given).
	Timeout time.Duration
	// Sandbox is the kernel sandbox profile: "read" (the default),
	// "workspace-write" or "full" (the user's own rights).
	Sandbox string
	// Network lets a confined hook open sockets.
	Network bool
	// Read and Write are more absolute paths the hook may read or write.
	Read, Write []string
	// Env adds variables to the hook's environment.
	Env map[string]string
}

// defaultHookTimeout bounds a hook whose configuration gives no timeout.
const defaultHookTimeout = 10 * time.Second

// hookProfiles are the sandbox profiles a hook may name.
var hookProfiles = []string{"read", "workspace-write", "full"}

// hookKeys are the keys of one hook in config.json.
var hookKeys = []string{"command", "match", "timeout", "sandbox", "network", "read", "write", "env"}

// hooksValue reads config.json's hooks.
func hooksValue(p *Hooks) value {
	return objectValue{get: p.summary, parse: func(raw json.RawMessage) ([]string, error) {
		h, warnings, err := parseHooks(raw)
		if err == nil {
			*p = h
		}
		return warnings, err
	}}
}

// summary is how `agentd config` shows the hooks: how many per event.
func (h *Hooks) summary() string {
	var parts []string
	for _, e := range HookEvents {
		if n := len((*h)[e]); n > 0 {
			parts = append(parts, fmt.Sprintf("%s: %d", e, n))
		}
	}
	return strings.Join(parts, ", ")
}

// parseHooks reads {"event": [hook, …], …}. An unknown event or key is a
// warning (ignored); a hook that cannot run as written is an error.
func parseHooks(raw json.RawMessage) (Hooks, []string, error) {
	var events map[string]json.RawMessage
	if err := json.Unmarshal(raw, &events); err != nil {
		return nil, nil, fmt.Errorf("must be an object of events, each a list of hooks")
	}
	var warnings []string
	out := Hooks{}
	for _, name := range sortedKeys(events) {
		e := HookEvent(name)
		if !slices.Contains(HookEvents, e) {
			warnings = append(warnings, fmt.Sprintf("hooks: unknown event %q (ignored); the events are %s", name, eventList()))
			continue
		}
		var list []json.RawMessage
		if err := json.Unmarshal(events[name], &list); err != nil {
			return nil, warnings, fmt.Errorf("%s must be a list of hooks", name)
		}
		for i, h := range list {
			hook, more, err := parseHook(e, h)
			for _, w := range more {
				warnings = append(warnings, fmt.Sprintf("hooks: %s[%d]: %s", name, i, w))
			}
			if err != nil {
				return nil, warnings, fmt.Errorf("%s[%d]: %w", name, i, err)
			}
			out[e] = append(out[e], hook)
		}
	}
	return out, warnings, nil
}

func eventList() string {
	names := make([]string, len(HookEvents))
	for i, e := range HookEvents {
		names[i] = string(e)
	}
	return strings.Join(names, ", ")
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// parseHook reads one hook of event e.
func parseHook(e HookEvent, raw json.RawMessage) (Hook, []string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return Hook{}, nil, fmt.Errorf("must be an object such as {\"command\": \"notify-send agentd\"}")
	}
	var warnings []string
	for _, k := range sortedKeys(m) {
		if !slices.Contains(hookKeys, k) {
			warnings = append(warnings, fmt.Sprintf("unknown key %q (ignored)", k))
		}
	}
	h := Hook{Timeout: defaultHookTimeout}
	if err := h.setCommand(m["command"]); err != nil {
		return Hook{}, warnings, err
	}
	for _, step := range []func() error{
		func() error { return h.setMatch(e, m["match"]) },
		func() error { return h.setTimeout(m["timeout"]) },
		func() error { return h.setSandbox(m["sandbox"]) },
		func() error { return decodeIf(m["network"], &h.Network, "network must be true or false") },
		func() error { return decodePaths(m["read"], &h.Read, "read") },
		func() error { return decodePaths(m["write"], &h.Write, "write") },
		func() error { return h.setEnv(m["env"]) },
	} {
		if err := step(); err != nil {
			return Hook{}, warnings, err
		}
	}
	return h, warnings, nil
}

// present says whether a key was given (and not null).
func present(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && string(t) != "null"
}

func decodeIf(raw json.RawMessage, v any, msg string) error {
	if !present(raw) {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return fmt.Errorf("%s", msg)
	}
	return nil
}

func (h *Hook) setCommand(raw json.RawMessage) error {
	if !present(raw) {
		return fmt.Errorf("command is required: a shell line, or a list of the program and its arguments")
	}
	var line string
	if err := json.Unmarshal(raw, &line); err == nil {
		if strings.TrimSpace(line) == "" {
			return fmt.Errorf("command is empty")
		}
		h.Command = line
		return nil
	}
	var args []string
	if err := json.Unmarshal(raw, &args); err != nil || len(args) == 0 || args[0] == "" {
		return fmt.Errorf("command must be a shell line or a non-empty list of strings")
	}
	args[0] = expandHome(args[0])
	h.Args = args
	return nil
}

func (h *Hook) setMatch(e HookEvent, raw json.RawMessage) error {
	var pat string
	if err := decodeIf(raw, &pat, "match must be a string: a regular expression of tool names"); err != nil || pat == "" {
		return err
	}
	if !e.toolEvent() {
		return fmt.Errorf("match limits hooks on tool calls only (before_tool, after_tool)")
	}
	if _, err := regexp.Compile(pat); err != nil {
		return fmt.Errorf("match %q is not a regular expression: %w", pat, err)
	}
	h.Match = regexp.MustCompile("^(?:" + pat + ")$")
	return nil
}

// setTimeout takes a Go duration ("5s") or a number of seconds.
func (h *Hook) setTimeout(raw json.RawMessage) error {
	if !present(raw) {
		return nil
	}
	var secs float64
	if err := json.Unmarshal(raw, &secs); err == nil {
		h.Timeout = time.Duration(secs * float64(time.Second))
	} else {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return fmt.Errorf("timeout must be a duration such as \"5s\", or seconds")
		}
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("timeout %q is not a duration such as \"5s\" or \"1m\"", s)
		}
		h.Timeout = d
	}
	if h.Timeout <= 0 {
		return fmt.Errorf("timeout must be more than zero")
	}
	return nil
}

func (h *Hook) setSandbox(raw json.RawMessage) error {
	if err := decodeIf(raw, &h.Sandbox, "sandbox must be a string"); err != nil {
		return err
	}
	if h.Sandbox != "" && !slices.Contains(hookProfiles, h.Sandbox) {
		return fmt.Errorf("sandbox %q is not one of %s", h.Sandbox, strings.Join(hookProfiles, ", "))
	}
	return nil
}

func (h *Hook) setEnv(raw json.RawMessage) error {
	if err := decodeIf(raw, &h.Env, "env must be an object of strings"); err != nil {
		return err
	}
	for k := range h.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") {
			return fmt.Errorf("env: %q is not a variable name", k)
		}
	}
	return nil
}

// decodePaths reads a list of paths, absolute or under ~/.
func decodePaths(raw json.RawMessage, out *[]string, key string) error {
	var paths []string
	if err := decodeIf(raw, &paths, key+" must be a list of paths"); err != nil {
		return err
	}
	for _, p := range paths {
		abs := expandHome(p)
		if !filepath.IsAbs(abs) {
			return fmt.Errorf("%s: %q must be absolute or start with ~/", key, p)
		}
		*out = append(*out, filepath.Clean(abs))
	}
	return nil
}

// expandHome expands a leading ~/ to the user's home directory.
func expandHome(p string) string {
	if p == "~" || strings.HasPrefix(p, "~/") {
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, p[1:])
		}
	}
	return p
}

// label names the hook in logs and reports: its command, shortened.
func (h Hook) label() string {
	s := h.Command
	if h.Args != nil {
		s = strings.Join(h.Args, " ")
	}
	return truncate(s, 120)
}

// argv is the hook's process.
func (h Hook) argv() []string {
	if h.Args != nil {
		return h.Args
	}
	return []string{"/bin/sh", "-c", h.Command}
}

// program is the hook's own script or program when it is named by a
// path, so that it is readable inside the sandbox (which hides HOME).
func (h Hook) program() string {
	first := ""
	if h.Args != nil {
		first = h.Args[0]
	} else if f := strings.Fields(h.Command); len(f) > 0 {
		first = expandHome(f[0])
	}
	if filepath.IsAbs(first) {
		return filepath.Clean(first)
	}
	return ""
}

// matches says whether the hook applies to a call of the tool.
func (h Hook) matches(tool string) bool { return h.Match == nil || h.Match.MatchString(tool) }
