package agent

import (
	"fmt"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/agentd/agentd/tools"
)

// Request classes: a task is hinted to plan first.
const (
	classChat     = "chat"
	classQuestion = "question"
	classTask     = "task"
)

var taskVerbs = []string{"add", "fix", "implement", "refactor", "rename", "write", "create", "update", "change", "remove",
	"delete", "move", "replace", "make", "build", "run", "test", "convert", "port", "migrate", "generate", "edit", "install", "upgrade", "bump"}

var chatWords = []string{"hi", "hello", "hey", "thanks", "thank you", "good morning", "bye", "ok", "okay", "cool"}

// classify is a cheap first look at the request (no model call): a task
// gets the hint to plan. It never changes the tools offered.
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

// buildRequest assembles what the model sees for the next step: the
// session's prefix (the system message and the tools, the same bytes in
// every request of the session, so a provider's prompt cache serves them),
// then the conversation, compacted if it no longer fits. r.mu is held.
func (r *run) buildRequestLocked(pfx *sessionPrefix) ModelRequest {
	a := r.a
	specs := r.specsLocked(pfx.Tools)
	system := pfx.System
	if a.textMode() {
		system += textToolInstructions(specs)
	}
	r.fixed = len(system) + specsSize(specs)
	msgs := r.compactedLocked(a.ContextWindow(), r.fixed)
	out := append([]Message{{Role: RoleSystem, Content: system}}, a.hydrateImages(msgs)...)
	if a.textMode() {
		out = textModeMessages(out)
		specs = nil
	}
	return ModelRequest{Messages: out, Tools: specs}
}

// offeredTools names the tools a session offers, every request the same:
// the workspace tools that can work here (search_semantic needs an index),
// ask_user when someone can answer, update_plan always.
func (a *Agent) offeredTools() []string {
	names := make([]string, 0, len(a.order)+2)
	nav := a.navigates()
	for _, t := range a.order {
		n := t.Info().Name
		switch {
		case n == tools.SearchSemanticToolName && a.cfg.Searcher == nil:
		case slices.Contains(languageTools, n) && !nav:
		case n == tools.WebSearchToolName && a.cfg.WebSearchURL == "":
		default:
			names = append(names, n)
		}
	}
	if a.canAsk() {
		names = append(names, askToolName)
	}
	names = append(names, planToolName)
	if a.renders(KindConfirmPlan) {
		names = append(names, proposeToolName)
	}
	return append(names, taskToolName)
}

// canAsk says whether the front end shows questions of some kind.
func (a *Agent) canAsk() bool {
	return a.renders(KindQuestion) || a.renders(KindChoice) || a.renders(KindSecret)
}

// canConfirm says whether the front end shows write or command approvals.
func (a *Agent) canConfirm() bool {
	return a.renders(KindConfirmWrite) || a.renders(KindConfirmCommand)
}

// specsFor describes the named tools to the model; a name this agentd no
// longer knows is left out.
func (a *Agent) specsFor(names []string) []ToolSpec {
	specs := make([]ToolSpec, 0, len(names))
	for _, n := range names {
		switch n {
		case askToolName:
			specs = append(specs, ToolSpec{Name: n, Description: askDescription, Parameters: askSchema})
		case planToolName:
			specs = append(specs, ToolSpec{Name: n, Description: planDescription, Parameters: planSchema})
		case proposeToolName:
			specs = append(specs, ToolSpec{Name: n, Description: proposeDescription, Parameters: proposeSchema})
		case taskToolName:
			specs = append(specs, ToolSpec{Name: n, Description: taskDescription, Parameters: taskSchema})
		default:
			if t, ok := a.tools[n]; ok {
				in := t.Info()
				specs = append(specs, ToolSpec{Name: in.Name, Description: in.Description, Parameters: in.Parameters})
			}
		}
	}
	return specs
}

// specsSize is about what the tool list adds to each request, in bytes.
func specsSize(specs []ToolSpec) int {
	n := 0
	for _, s := range specs {
		n += len(s.Name) + len(s.Description) + len(s.Parameters) + 48 // {"type":"function","function":{...}}
	}
	return n
}

const rulesIntro = `You are agentd, a coding agent working inside the user's editor.

Rules:
- Look before you change: list, search and read the relevant code first. A file must be read before you edit it.
- For a task with several steps, publish a short plan with update_plan first and keep it current: one step in_progress, completed steps marked, a failed step marked failed and then retried or the plan revised.
`

const rulesAsk = `- When the request is ambiguous or a decision belongs to the user, ask with ask_user instead of guessing; offer options when there are clear choices.
`

const rulesNoAsk = `- No one can answer questions in this session: when the request is ambiguous, make the most reasonable assumption, say which one, and go on.
`

const rulesApprove = `- Writes and commands may need the user's approval. A rejection is the user's decision: read the reason and adapt; never retry the same call unchanged.
`

const rulesNoApprove = `- No one can approve writes or commands in this session: a call the approval policy does not allow is refused. Do what you can without it, never retry it unchanged, and tell the user what is left for them to run or change.
`

// goToDefinition is offered with the other navigation tools.
const goToDefinition = "go_to_definition"

const rulesLanguage = `- Language servers answer here: to find where a symbol is defined or every place it is used, use go_to_definition and find_references rather than grep (they resolve the symbol, not its spelling); hover gives a symbol's type and documentation. The last edit of each of your replies ends with the servers' diagnostics of the files you changed: fix the problems marked (new) before you finish.
`

const rulesRest = `- Paths are relative to the workspace root. Never touch anything outside the workspace.
- Prefer small, targeted edits (edit_file) over rewriting whole files. After changing code, check it (build, vet or tests) when a command for that exists.
- A result that was cut says which lines are missing and how to get them: follow that instead of guessing what they said.
- Finish with a short, plain answer: what you did or found, and anything left for the user. Do not invent results you did not see.`

// systemPrompt is a session's system message, made once when the session
// starts: the rules for the tools offered, the workspace, the instruction
// files and the repository map.
func (a *Agent) systemPrompt(tools []string, ins []instruction, repoMap string, now time.Time) string {
	var b strings.Builder
	b.WriteString(rulesIntro)
	if slices.Contains(tools, askToolName) {
		b.WriteString(rulesAsk)
	} else {
		b.WriteString(rulesNoAsk)
	}
	if a.canConfirm() {
		b.WriteString(rulesApprove)
	} else {
		b.WriteString(rulesNoApprove)
	}
	if slices.Contains(tools, goToDefinition) {
		b.WriteString(rulesLanguage)
	}
	b.WriteString(rulesRest)
	fmt.Fprintf(&b, "\n\n## Workspace\n- Root: %s\n- OS: %s/%s, shell: bash\n- Date: %s (when this conversation started)", a.cfg.Root, runtime.GOOS, runtime.GOARCH, now.Format("2006-01-02"))
	if s := instructionsSection(ins); s != "" {
		b.WriteString("\n\n" + s)
	}
	if repoMap != "" {
		b.WriteString("\n\n## Repository map\n" + repoMap)
	}
	return strings.TrimRight(b.String(), "\n")
}

// limitNote is the user message that withdraws the tools at the step
// limit: the tools stay in the request (the prefix does not change), and
// calls the model still makes are not run.
const limitNote = "[agentd: you have used all your steps; tools are no longer available and calls will not run. Answer now with what you have: say what is done and what is left.]"

// userMessage renders the prompt with the editor's context: the selection,
// the files the user points at, the files open in the editor, and for a
// task the hint to plan. It is part of the conversation, so what it says of
// the editor's state never changes the prompt's prefix. a.mu is held.
func (a *Agent) userMessageLocked(p RunParams) string {
	var b strings.Builder
	b.WriteString(p.Prompt)
	if p.Context != nil {
		if sel := p.Context.Selection; sel != nil {
			fmt.Fprintf(&b, "\n\nSelected in %s, lines %d-%d:\n```\n%s\n```", relPath(a.cfg.Root, sel.Path), sel.StartLine, sel.EndLine, sel.Text)
		}
		if len(p.Context.Files) > 0 {
			rel := make([]string, 0, len(p.Context.Files))
			for _, f := range p.Context.Files {
				rel = append(rel, relPath(a.cfg.Root, f))
			}
			fmt.Fprintf(&b, "\n\nFiles the user points at: %s", strings.Join(rel, ", "))
		}
		for _, at := range p.Context.Attachments {
			fmt.Fprintf(&b, "\n\nAttached by the user, %s:\n%s", at.Name, codeFence(at.Text))
		}
	}
	var notes []string
	if open := a.openFiles; len(open) > 0 {
		notes = append(notes, "Files open in the editor: "+strings.Join(open, ", ")+".")
	}
	if classify(p.Prompt) == classTask {
		notes = append(notes, "This looks like a task: unless it is a single small change, start with update_plan.")
	}
	if len(notes) > 0 {
		b.WriteString("\n\n[agentd: " + strings.Join(notes, " ") + "]")
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

// codeFence quotes text in a Markdown code block whose fence no line of the
// text can close (a diff may hold ``` lines).
func codeFence(text string) string {
	f := "```"
	for strings.Contains(text, f) {
		f += "`"
	}
	return f + "\n" + strings.TrimRight(text, "\n") + "\n" + f
}
