package agent

import (
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// Request classes: planning and tools are waste for a greeting.
const (
	classChat     = "chat"
	classQuestion = "question"
	classTask     = "task"
)

var taskVerbs = []string{"add", "fix", "implement", "refactor", "rename", "write", "create", "update", "change", "remove",
	"delete", "move", "replace", "make", "build", "run", "test", "convert", "port", "migrate", "generate", "edit", "install", "upgrade", "bump"}

var chatWords = []string{"hi", "hello", "hey", "thanks", "thank you", "good morning", "bye", "ok", "okay", "cool"}

// classify is a cheap first look at the request (no model call): a greeting
// needs no tools, a question needs no plan, a task gets both.
func classify(prompt string) string {
	p := strings.ToLower(strings.TrimSpace(prompt))
	words := strings.FieldsFunc(p, func(r rune) bool { return !(r >= 'a' && r <= 'z' || r == '\'') })
	if len(words) <= 4 {
		for _, c := range chatWords {
			if strings.Trim(p, "!.? ") == c {
				return classChat
			}
		}
	}
	for _, w := range words {
		for _, v := range taskVerbs {
			if w == v {
				return classTask
			}
		}
	}
	return classQuestion
}

// buildRequest assembles what the model sees for the next step.
func (a *Agent) buildRequest(rec *runRecord, secrets map[string]string, limit bool) ModelRequest {
	specs := a.toolSpecs(rec.Class)
	if limit {
		specs = nil
	}
	system := a.systemPrompt(rec, specs, secrets, limit)
	window := a.ContextWindow()
	msgs, summary := compact(rec.Messages, window, len(system))
	if summary != "" {
		system += "\n\n## Earlier in this conversation (compacted)\n" + summary
	}
	out := append([]Message{{Role: RoleSystem, Content: system}}, msgs...)
	if a.textMode() {
		out = textModeMessages(out)
		specs = nil
	}
	return ModelRequest{Messages: out, Tools: specs}
}

func (a *Agent) toolSpecs(class string) []ToolSpec {
	if class == classChat {
		return nil
	}
	specs := make([]ToolSpec, 0, len(a.order)+2)
	for _, t := range a.order {
		in := t.Info()
		specs = append(specs, ToolSpec{Name: in.Name, Description: in.Description, Parameters: in.Parameters})
	}
	specs = append(specs, ToolSpec{Name: askToolName, Description: askDescription, Parameters: askSchema})
	if class == classTask {
		specs = append(specs, ToolSpec{Name: planToolName, Description: planDescription, Parameters: planSchema})
	}
	return specs
}

const rules = `You are agentd, a coding agent working inside the user's editor.

Rules:
- Look before you change: list, search and read the relevant code first. A file must be read before you edit it.
- For a task with several steps, publish a short plan with update_plan first and keep it current: one step in_progress, completed steps marked, a failed step marked failed and then retried or the plan revised.
- When the request is ambiguous or a decision belongs to the user, ask with ask_user instead of guessing; offer options when there are clear choices.
- Writes and commands may need the user's approval. A rejection is the user's decision: read the reason and adapt; never retry the same call unchanged.
- Paths are relative to the workspace root. Never touch anything outside the workspace.
- Prefer small, targeted edits (edit_file) over rewriting whole files. After changing code, check it (build, vet or tests) when a command for that exists.
- Finish with a short, plain answer: what you did or found, and anything left for the user. Do not invent results you did not see.`

func (a *Agent) systemPrompt(rec *runRecord, specs []ToolSpec, secrets map[string]string, limit bool) string {
	var b strings.Builder
	b.WriteString(rules)
	fmt.Fprintf(&b, "\n\n## Workspace\n- Root: %s\n- OS: %s/%s, shell: bash\n- Date: %s\n", a.cfg.Root, runtime.GOOS, runtime.GOARCH, time.Now().Format("2006-01-02"))
	if open := a.openFileList(); len(open) > 0 {
		fmt.Fprintf(&b, "- Open in the editor: %s\n", strings.Join(open, ", "))
	}
	if len(secrets) > 0 {
		names := make([]string, 0, len(secrets))
		for k := range secrets {
			names = append(names, "$"+k)
		}
		fmt.Fprintf(&b, "- Secrets available to commands as environment variables: %s\n", strings.Join(names, ", "))
	}
	if rec.Class == classTask && len(rec.Plan) == 0 {
		b.WriteString("\nThis looks like a task: start with update_plan unless it is a single small change.\n")
	}
	if m := a.repoMap(); m != "" {
		b.WriteString("\n## Repository map (symbols by file, from ctags)\n")
		b.WriteString(m)
	}
	if limit {
		b.WriteString("\n\n## Step limit reached\nYou have used all your steps; tools are no longer available. Answer now with what you have: say what is done and what is left.\n")
	}
	if a.textMode() && len(specs) > 0 {
		b.WriteString(textToolInstructions(specs))
	}
	return b.String()
}

// userMessage renders the prompt with the editor's context.
func userMessage(root string, p RunParams) string {
	if p.Context == nil {
		return p.Prompt
	}
	var b strings.Builder
	b.WriteString(p.Prompt)
	if sel := p.Context.Selection; sel != nil {
		fmt.Fprintf(&b, "\n\nSelected in %s, lines %d-%d:\n```\n%s\n```", relPath(root, sel.Path), sel.StartLine, sel.EndLine, sel.Text)
	}
	if len(p.Context.Files) > 0 {
		rel := make([]string, 0, len(p.Context.Files))
		for _, f := range p.Context.Files {
			rel = append(rel, relPath(root, f))
		}
		fmt.Fprintf(&b, "\n\nFiles the user points at: %s", strings.Join(rel, ", "))
	}
	return b.String()
}

func relPath(root, p string) string {
	if filepath.IsAbs(p) {
		if r, err := filepath.Rel(root, p); err == nil && !strings.HasPrefix(r, "..") {
			return filepath.ToSlash(r)
		}
	}
	return filepath.ToSlash(p)
}
