package tools

import "strings"

// Some files of a workspace are run later by something outside any
// sandbox: the editor when the folder opens (VS Code's tasks with runOn:
// folderOpen, a dev container's postCreateCommand), the shell when it
// enters the directory (direnv's .envrc), git at the next commit (hooks a
// hooks path points to), CI when the branch is pushed (with the
// repository's secrets), the user's shell when it starts (a workspace
// that is the home directory). A write there is a command the sandbox
// never sees: the policy asks before it in every mode (an allow rule the
// user wrote, or a grant of that exact file, lifts it), and the run's
// diffs mark it (FileDiff.RunsLater), for the user to see in the
// confirmation and in the run's summary. Git's own configuration and
// hooks are refused outright (the built-in rules, and the sandbox keeps
// .git read-only).

// runsLater are the patterns, matched against workspace-relative paths
// (matchGlob: ** spans directories), each with who runs the file and when.
var runsLater = []struct{ pattern, why string }{
	{"**/.vscode/tasks.json", "VS Code runs its tasks, some as soon as the folder opens (runOn: folderOpen)"},
	{"**/.vscode/launch.json", "VS Code runs its launch configurations and their preLaunchTask"},
	{"**/.vscode/settings.json", "VS Code settings name programs it runs (terminal profiles, linters, formatters, interpreters)"},
	{"**/.vscode/**", "VS Code reads it when the folder opens"},
	{"**/*.code-workspace", "a VS Code workspace file holds settings and tasks it runs"},
	{"**/.devcontainer/**", "a dev container runs its commands (postCreateCommand …) when the folder is opened in it"},
	{"**/.devcontainer.json", "a dev container runs its commands (postCreateCommand …) when the folder is opened in it"},
	{"**/.idea/**", "JetBrains IDEs run its run configurations and startup tasks"},
	{"**/.envrc", "direnv runs it when a shell enters the directory"},
	{"**/.nvim.lua", "Neovim runs it when started here ('exrc')"},
	{"**/.nvimrc", "Neovim and Vim run it when started here ('exrc')"},
	{"**/.exrc", "Vim runs it when started here ('exrc')"},
	{"**/.dir-locals.el", "Emacs evaluates it when a file here is opened"},
	{"**/.dir-locals-2.el", "Emacs evaluates it when a file here is opened"},
	{".husky/**", "git runs these hooks (husky points core.hooksPath here)"},
	{".githooks/**", "git runs these hooks when core.hooksPath points here"},
	{".pre-commit-config.yaml", "pre-commit runs the hooks it lists at each commit"},
	{"{lefthook,.lefthook,lefthook-local,.lefthook-local}.{yml,yaml,json,toml}", "lefthook runs the commands it lists at each commit"},
	{".github/workflows/**", "GitHub Actions runs it, with the repository's secrets, when the branch is pushed"},
	{".gitlab-ci.yml", "GitLab CI runs it, with the project's secrets, when the branch is pushed"},
	{"{.bashrc,.bash_profile,.bash_login,.bash_logout,.profile,.zshrc,.zshenv,.zprofile,.zlogin,.zlogout}", "the shell runs it when it starts (a workspace that is the home directory)"},
	{".config/fish/**", "fish runs it when it starts (a workspace that is the home directory)"},
	{".ssh/**", "ssh reads it (ProxyCommand, keys, authorized keys)"},
	{"{.gitconfig,.config/git/**}", "git reads it for every command, in every repository (hooks, pagers, filters)"},
}

// RunsLater says who runs a workspace file later, outside any sandbox,
// and when; "" for a file nothing runs by itself.
func RunsLater(rel string) string {
	rel = strings.TrimPrefix(rel, "./")
	for _, r := range runsLater {
		if matchGlob(r.pattern, rel) {
			return r.why
		}
	}
	return ""
}
