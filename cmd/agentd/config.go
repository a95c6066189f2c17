package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/rag"
)

// settings is the daemon's configuration before initialize options: the
// environment over the config file over defaults.
type settings struct {
	Model           agent.ModelConfig
	Policy          string
	QuestionTimeout time.Duration
	ConfirmTimeout  time.Duration
	RetryBase       time.Duration
	MaxSteps        int
	UserConfigDir   string
	Embed           embedConfig
}

type embedConfig struct {
	BaseURL string `json:"baseUrl"`
	APIKey  string `json:"apiKey"`
	Model   string `json:"model"`
}

// fileConfig is ~/.config/agentd/config.json.
type fileConfig struct {
	Model *struct {
		BaseURL           string `json:"baseUrl"`
		APIKey            string `json:"apiKey"`
		Name              string `json:"name"`
		ToolMode          string `json:"toolMode"`
		ContextWindow     int    `json:"contextWindow"`
		ReasoningEffort   string `json:"reasoningEffort"`
		StreamIdleTimeout string `json:"streamIdleTimeout"`
		CallTimeout       string `json:"callTimeout"`
		MaxRetryWait      string `json:"maxRetryWait"`
	} `json:"model"`
	ApprovalPolicy  string       `json:"approvalPolicy"`
	QuestionTimeout string       `json:"questionTimeout"`
	ConfirmTimeout  string       `json:"confirmTimeout"`
	MaxSteps        int          `json:"maxSteps"`
	Embeddings      *embedConfig `json:"embeddings"`
}

func loadSettings() (settings, error) {
	s := settings{QuestionTimeout: 30 * time.Minute}
	if dir, err := os.UserConfigDir(); err == nil {
		s.UserConfigDir = filepath.Join(dir, "agentd")
	}
	if err := s.applyFile(filepath.Join(s.UserConfigDir, "config.json")); err != nil {
		return s, err
	}
	return s, s.applyEnv()
}

func (s *settings) applyFile(path string) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) || s.UserConfigDir == "" {
		return nil
	}
	if err != nil {
		return fmt.Errorf("reading %s: %w", path, err)
	}
	var fc fileConfig
	if err := json.Unmarshal(data, &fc); err != nil {
		return fmt.Errorf("parsing %s: %w", path, err)
	}
	var durations []fileDuration
	if m := fc.Model; m != nil {
		s.Model = agent.ModelConfig{BaseURL: m.BaseURL, APIKey: m.APIKey, Name: m.Name, ToolMode: m.ToolMode, ContextWindow: m.ContextWindow,
			ReasoningEffort: m.ReasoningEffort}
		durations = []fileDuration{{m.StreamIdleTimeout, &s.Model.StreamIdleTimeout}, {m.CallTimeout, &s.Model.CallTimeout}, {m.MaxRetryWait, &s.Model.MaxRetryWait}}
	}
	s.Policy, s.MaxSteps = fc.ApprovalPolicy, fc.MaxSteps
	if fc.Embeddings != nil {
		s.Embed = *fc.Embeddings
	}
	for _, d := range append(durations, fileDuration{fc.QuestionTimeout, &s.QuestionTimeout}, fileDuration{fc.ConfirmTimeout, &s.ConfirmTimeout}) {
		if d.v == "" {
			continue
		}
		if *d.dst, err = time.ParseDuration(d.v); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return nil
}

type fileDuration struct {
	v   string
	dst *time.Duration
}

func (s *settings) applyEnv() error {
	set := func(dst *string, name string) {
		if v := os.Getenv(name); v != "" {
			*dst = v
		}
	}
	set(&s.Model.BaseURL, "OPENAI_BASE_URL")
	set(&s.Model.APIKey, "OPENAI_API_KEY")
	set(&s.Model.Name, "AGENTD_MODEL")
	set(&s.Model.ToolMode, "AGENTD_TOOL_MODE")
	set(&s.Model.ReasoningEffort, "AGENTD_REASONING_EFFORT")
	set(&s.Policy, "AGENTD_POLICY")
	set(&s.Embed.BaseURL, "AGENTD_EMBED_BASE_URL")
	set(&s.Embed.Model, "AGENTD_EMBED_MODEL")
	if s.Model.BaseURL == "" && s.Model.APIKey != "" {
		s.Model.BaseURL = "https://api.openai.com/v1"
	}
	if s.Embed.BaseURL != "" && s.Embed.APIKey == "" {
		s.Embed.APIKey = s.Model.APIKey
	}
	for name, dst := range map[string]*time.Duration{"AGENTD_QUESTION_TIMEOUT": &s.QuestionTimeout,
		"AGENTD_CONFIRM_TIMEOUT": &s.ConfirmTimeout, "AGENTD_RETRY_BASE": &s.RetryBase,
		"AGENTD_STREAM_IDLE_TIMEOUT": &s.Model.StreamIdleTimeout, "AGENTD_MODEL_TIMEOUT": &s.Model.CallTimeout,
		"AGENTD_RETRY_MAX_WAIT": &s.Model.MaxRetryWait} {
		if v := os.Getenv(name); v != "" {
			d, err := time.ParseDuration(v)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			*dst = d
		}
	}
	for name, dst := range map[string]*int{"AGENTD_MAX_STEPS": &s.MaxSteps, "AGENTD_CONTEXT_WINDOW": &s.Model.ContextWindow} {
		if v := os.Getenv(name); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			*dst = n
		}
	}
	if !agent.ValidEffort(s.Model.ReasoningEffort) {
		return fmt.Errorf("reasoning effort %q: use low, medium or high", s.Model.ReasoningEffort)
	}
	return nil
}

// stateDirs returns the per-workspace state directory (sessions, runs, logs,
// rules) and cache directory (the index). With AGENTD_STATE_DIR (or
// --state-dir) both live under it; otherwise the state goes under
// $XDG_STATE_HOME (~/.local/state) and the index under the user cache dir.
func stateDirs(root string) (string, string, error) {
	cache, err := rag.StateDirFor(root)
	if err != nil {
		return "", "", err
	}
	if os.Getenv("AGENTD_STATE_DIR") != "" {
		return cache, cache, nil
	}
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", "", fmt.Errorf("state dir: %w", err)
		}
		base = filepath.Join(home, ".local", "state")
	}
	return filepath.Join(base, "agentd", filepath.Base(cache)), cache, nil
}

// newLogger logs to the file, or to stderr; never to stdout, which carries
// the protocol.
func newLogger(file, level string, stderr io.Writer) (*slog.Logger, func(), error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(strings.ToUpper(level))); err != nil {
		return nil, nil, fmt.Errorf("--log-level: %w", err)
	}
	w, closeFn := stderr, func() {}
	if file != "" {
		f, err := os.OpenFile(file, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
		if err != nil {
			return nil, nil, fmt.Errorf("--log-file: %w", err)
		}
		w, closeFn = f, func() { f.Close() }
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: lv})), closeFn, nil
}
