package tools

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestRunsLater(t *testing.T) {
	for path, runs := range map[string]bool{
		".vscode/tasks.json": true, "web/.vscode/tasks.json": true, ".vscode/settings.json": true, ".vscode/launch.json": true,
		".vscode/extensions.json": true, "app.code-workspace": true, ".devcontainer/devcontainer.json": true,
		".devcontainer.json": true, ".idea/workspace.xml": true, ".envrc": true, "sub/.envrc": true, ".nvim.lua": true,
		".exrc": true, ".dir-locals.el": true, ".husky/pre-commit": true, ".githooks/pre-push": true,
		".pre-commit-config.yaml": true, "lefthook.yml": true, ".github/workflows/ci.yml": true, ".gitlab-ci.yml": true,
		".bashrc": true, ".zshrc": true, ".profile": true, ".config/fish/config.fish": true, ".ssh/config": true,
		".gitconfig": true, ".config/git/config": true, "./.envrc": true,
		"main.go": false, "vscode/tasks.json": false, "docs/.bashrc.md": false, ".github/CODEOWNERS": false,
		"src/.profile.ts": false, "envrc": false, "sub/.bashrc": false, ".gitignore": false,
	} {
		assert.Equal(t, runs, RunsLater(path) != "", path)
	}
}
