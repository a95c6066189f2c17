package agent

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentd/agentd/internal/lazy"
	"github.com/agentd/agentd/tools"
)

// Custom commands are Markdown prompt files: <workspace>/.agentd/commands/
// and ~/.config/agentd/commands/. A prompt "/name args" expands to the
// file's body before the run starts (docs/extensions.md). They are
// prompts: they grant nothing, and the workspace's are untrusted content
// like any file of the workspace.

// CommandSource says where a command was found.
type CommandSource string

// Command sources.
const (
	CommandsOfUser      CommandSource = "user"
	CommandsOfWorkspace CommandSource = "workspace"
)

// Command is one custom slash command, as the editors list it.
type Command struct {
	// Name is what follows the slash: the file's name without .md, its
	// subdirectories joined with ":" (git/commit.md is git:commit).
	Name         string        `json:"name"`
	Description  string        `json:"description,omitempty"`
	ArgumentHint string        `json:"argumentHint,omitempty"`
	Source       CommandSource `json:"source"`
	// Path is the file, absolute.
	Path string `json:"path"`
	// Shadowed: a command of the same name from the user's directory wins;
	// this one cannot be run.
	Shadowed bool `json:"shadowed,omitempty"`
	// Error says why the file cannot be used; the command cannot be run.
	Error string `json:"error,omitempty"`

	body string
}

// Runnable says whether "/name" runs this command.
func (c Command) Runnable() bool { return c.Error == "" && !c.Shadowed }

// Usage is how the command is typed, for a list such as the terminal's
// /help: "/review <file>".
func (c Command) Usage() string {
	if c.ArgumentHint == "" {
		return "/" + c.Name
	}
	return "/" + c.Name + " " + c.ArgumentHint
}

// Limits on what is read as commands.
const (
	maxCommandFile  = 64 << 10
	maxCommands     = 500
	maxCommandDepth = 4
	// maxDescription caps a description taken from the prompt's first line.
	maxDescription = 100
)

// CommandDir is a directory commands are read from.
type CommandDir struct {
	Source CommandSource `json:"source"`
	Path   string        `json:"path"`
}

// CommandDirs are the directories commands are read from, the user's
// first: when both have a command of one name, the user's wins (the
// workspace cannot replace a command the user wrote).
func CommandDirs(root, userConfigDir string) []CommandDir {
	var out []CommandDir
	if userConfigDir != "" {
		out = append(out, CommandDir{CommandsOfUser, filepath.Join(userConfigDir, "commands")})
	}
	if root != "" {
		out = append(out, CommandDir{CommandsOfWorkspace, filepath.Join(root, ".agentd", "commands")})
	}
	return out
}

// LoadCommands reads the custom commands of a workspace and of the user
// (userConfigDir is ~/.config/agentd), sorted by name, the one that runs
// first among commands of one name. Files that cannot be used are listed
// with their Error; nothing here fails.
func LoadCommands(root, userConfigDir string) []Command {
	out := []Command{}
	seen := map[string]bool{}
	for _, d := range CommandDirs(root, userConfigDir) {
		for _, c := range readCommandDir(d.Path, d.Source) {
			if c.Error == "" {
				c.Shadowed = seen[c.Name]
				seen[c.Name] = true
			}
			out = append(out, c)
		}
	}
	slices.SortStableFunc(out, func(a, b Command) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Commands lists the custom commands of the agent's workspace and user.
func (a *Agent) Commands() []Command { return LoadCommands(a.cfg.Root, a.cfg.UserConfigDir) }

// CommandDirs are the directories the agent reads commands from, the one
// that wins first.
func (a *Agent) CommandDirs() []CommandDir { return CommandDirs(a.cfg.Root, a.cfg.UserConfigDir) }

// readCommandDir reads the .md files under dir. The workspace's directory
// is read through os.Root, so a link cannot make a command of a file
// outside it; the user's may link anywhere (dotfiles).
func readCommandDir(dir string, source CommandSource) []Command {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return nil
	}
	var fsys fs.FS
	var readFile func(string) ([]byte, error)
	if source == CommandsOfWorkspace {
		root, err := os.OpenRoot(dir)
		if err != nil {
			return nil
		}
		defer root.Close()
		fsys = root.FS()
		readFile = func(name string) ([]byte, error) { return readWorkspaceCommand(dir, name) }
	} else {
		fsys = os.DirFS(dir)
		readFile = func(name string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, filepath.FromSlash(name))) }
	}
	var out []Command
	_ = fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		switch {
		case len(out) >= maxCommands:
			return fs.SkipAll
		case err != nil && d != nil && d.IsDir():
			return fs.SkipDir
		case err != nil:
			return nil
		}
		if d.IsDir() {
			if p != "." && (strings.HasPrefix(d.Name(), ".") || strings.Count(p, "/") >= maxCommandDepth-1) {
				return fs.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".md") || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		c := Command{Name: strings.ReplaceAll(strings.TrimSuffix(p, ".md"), "/", ":"), Source: source,
			Path: filepath.Join(dir, filepath.FromSlash(p))}
		c.load(p, readFile)
		out = append(out, c)
		return nil
	})
	return out
}

// nameSegment is one part of a command's name.
var nameSegment = lazy.Regexp(`^[A-Za-z0-9][A-Za-z0-9_.-]*$`)

// load reads the command's file; what is wrong with it goes to Error.
func (c *Command) load(rel string, readFile func(string) ([]byte, error)) {
	for _, seg := range strings.Split(strings.TrimSuffix(rel, ".md"), "/") {
		if !nameSegment().MatchString(seg) {
			c.Error = fmt.Sprintf("%q is not a command name: use letters, digits, '-', '_' and '.'", path.Base(rel))
			return
		}
	}
	data, err := readFile(rel)
	switch {
	case errors.Is(err, os.ErrNotExist):
		c.Error = "cannot be read: it is a link to a missing file, or to a file outside the commands directory"
		return
	case err != nil:
		c.Error = "cannot be read: " + err.Error()
		return
	case len(data) > maxCommandFile:
		c.Error = fmt.Sprintf("too large: %d bytes (at most %d KiB)", len(data), maxCommandFile>>10)
		return
	case !utf8.Valid(data):
		c.Error = "not UTF-8 text"
		return
	}
	meta, body, err := frontMatter(strings.ReplaceAll(string(data), "\r\n", "\n"))
	if err != nil {
		c.Error = err.Error()
		return
	}
	c.body = strings.TrimSpace(body)
	if c.body == "" {
		c.Error = "the prompt is empty"
		return
	}
	c.Description, c.ArgumentHint = meta["description"], meta["argument-hint"]
	if c.Description == "" {
		c.Description = truncate(strings.TrimLeft(firstLine(c.body), "# "), maxDescription)
	}
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(line)
}

// frontMatter splits a "---" block of "key: value" lines from the body.
// It is the small part of YAML that command files use: a value may be
// quoted, or folded over the indented lines that follow (after ">" or
// "|", or nothing). Keys other than description and argument-hint (such as
// Claude Code's allowed-tools or model) are read and ignored: a command
// grants nothing.
func frontMatter(text string) (map[string]string, string, error) {
	meta := map[string]string{}
	if !strings.HasPrefix(text, "---\n") {
		return meta, text, nil
	}
	head, body, ok := strings.Cut(text[4:], "\n---")
	if !ok {
		return nil, "", errors.New("the front matter has no closing --- line")
	}
	if rest, ok := strings.CutPrefix(body, "\n"); ok || body == "" {
		body = rest
	} else {
		return nil, "", errors.New("the front matter's closing --- must be a line of its own")
	}
	key := ""
	for i, line := range strings.Split(head, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case trimmed == "" || strings.HasPrefix(trimmed, "#"):
			continue
		case line[0] == ' ' || line[0] == '\t':
			if key == "" {
				return nil, "", fmt.Errorf("front matter line %d is indented but follows no key", i+2)
			}
			meta[key] = strings.TrimSpace(meta[key] + " " + trimmed)
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, "", fmt.Errorf("front matter line %d is not \"key: value\": %q", i+2, truncate(line, 60))
		}
		key = strings.ToLower(strings.TrimSpace(k))
		key = strings.ReplaceAll(key, "_", "-")
		if key == "argumenthint" {
			key = "argument-hint"
		}
		v = strings.TrimSpace(v)
		if v == ">" || v == "|" || v == ">-" || v == "|-" {
			v = ""
		}
		meta[key] = unquote(v)
	}
	return meta, body, nil
}

func unquote(v string) string {
	if len(v) >= 2 && (v[0] == '"' && v[len(v)-1] == '"' || v[0] == '\'' && v[len(v)-1] == '\'') {
		return v[1 : len(v)-1]
	}
	return v
}

// slashName splits "/name args" into the name and the rest; ok is false
// when the prompt does not start with a slash and a name.
func slashName(prompt string) (name, args string, ok bool) {
	t := strings.TrimLeft(prompt, " \t\n")
	if !strings.HasPrefix(t, "/") {
		return "", "", false
	}
	t = t[1:]
	end := strings.IndexAny(t, " \t\n")
	if end < 0 {
		end = len(t)
	}
	name = t[:end]
	if name == "" {
		return "", "", false
	}
	return name, strings.TrimSpace(t[end:]), true
}

// expandPrompt returns what the model reads for a prompt: the prompt
// itself, or, for "/name args" naming a custom command, the command's body
// with its arguments. A prompt that names no command (a path such as
// "/usr/lib is missing") is the prompt; one that names a command that
// cannot run is an error saying why.
func (a *Agent) expandPrompt(prompt string) (string, error) {
	name, args, ok := slashName(prompt)
	if !ok {
		return prompt, nil
	}
	var broken *Command
	for _, c := range a.Commands() {
		if c.Name != name {
			continue
		}
		if c.Runnable() {
			return c.Expand(args), nil
		}
		if c.Error != "" && broken == nil {
			broken = &c
		}
	}
	if broken != nil {
		return "", fmt.Errorf("%w: the command /%s (%s) cannot be run: %s", ErrInvalid, name, broken.Path, broken.Error)
	}
	return prompt, nil
}

// placeholder is $ARGUMENTS or one of $1 … $9.
var placeholder = lazy.Regexp(`\$(ARGUMENTS|[1-9])`)

// Expand substitutes the arguments into the command's prompt: $ARGUMENTS
// is all of them as typed, $1 … $9 each one (split at blanks; quotes keep
// one together). A prompt with neither gets the arguments appended, so
// they are never lost.
func (c Command) Expand(args string) string {
	if !placeholder().MatchString(c.body) {
		if args == "" {
			return c.body
		}
		return c.body + "\n\nArguments: " + args
	}
	words := splitArgs(args)
	return placeholder().ReplaceAllStringFunc(c.body, func(m string) string {
		if m == "$ARGUMENTS" {
			return args
		}
		if i := int(m[1] - '1'); i < len(words) {
			return words[i]
		}
		return ""
	})
}

// splitArgs splits arguments at blanks; "double" or 'single' quotes keep
// blanks inside one argument.
func splitArgs(s string) []string {
	var out []string
	var cur strings.Builder
	var quote rune
	inWord := false
	for _, r := range s {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			cur.WriteRune(r)
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if inWord {
				out = append(out, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inWord {
		out = append(out, cur.String())
	}
	return out
}

// readWorkspaceCommand reads a workspace command's file beneath the
// commands directory: never a link out of it, never a named pipe a command
// left there (its open would wait for good).
func readWorkspaceCommand(dir, name string) ([]byte, error) {
	f, err := tools.OpenWorkspaceFile(dir, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, 16<<20)) // a bound on memory; load refuses over maxCommandFile
}
