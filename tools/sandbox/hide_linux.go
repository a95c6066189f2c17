package sandbox

import (
	"os"
	"path/filepath"
	"slices"
)

// Some paths stay out of a command's reach even inside a path it is
// granted: the user's credentials under HOME when the workspace is HOME (or
// contains it), and agentd's own state, configuration and caches
// (Spec.Hide), wherever the workspace lies — a command that could write
// agentd's rules.json would grant the next daemon everything, one that
// could read its state would read other projects' transcripts. With a
// mount namespace each is covered with an empty, unreadable file or
// directory; with Landlock alone, which cannot leave a hole in a grant, the
// grant is carved: replaced by grants of the entries around the hole.

// homePrivate are the user's credentials and private files under HOME.
var homePrivate = []string{".ssh", ".gnupg", ".aws", ".azure", ".config", ".kube", ".docker", ".netrc", ".npmrc",
	".pypirc", ".git-credentials", ".gitconfig", ".password-store", ".local/share/keyrings", ".cargo/credentials.toml",
	".cargo/credentials", ".m2/settings.xml", ".gradle/gradle.properties", ".terraform.d", ".vault-token",
	".bash_history", ".zsh_history", ".python_history", ".psql_history", ".mysql_history", ".node_repl_history"}

// hidden lists the existing paths to hide: the private files under home
// and the extra ones.
func hidden(home string, extra []string) []string {
	var out []string
	if filepath.IsAbs(home) && home != "/" {
		for _, name := range homePrivate {
			out = append(out, filepath.Join(home, name))
		}
	}
	for _, q := range extra {
		if filepath.IsAbs(q) {
			out = append(out, filepath.Clean(q))
		}
	}
	out = slices.DeleteFunc(out, func(q string) bool { _, err := os.Lstat(q); return err != nil })
	slices.Sort(out)
	return slices.Compact(out)
}

// holesIn are the paths of list that lie strictly inside a path a rule
// grants (a rule for the path itself is an explicit grant, kept): the
// others are out of reach already. A hole that holds a granted path itself
// (agentd's cache holds the caches commands share) is replaced by its
// entries around that path.
func holesIn(rules []rule, list []string) []string {
	var out []string
	for _, q := range list {
		if slices.ContainsFunc(rules, func(r rule) bool { return r.Access != accDev && r.Path != q && within(r.Path, q) }) {
			out = append(out, spare(q, rules)...)
		}
	}
	return out
}

// spare is q, or the entries of q around the paths granted inside it.
func spare(q string, rules []rule) []string {
	inner := func(p string) (granted, deeper bool) {
		for _, r := range rules {
			switch {
			case r.Access == accDev:
			case r.Path == p:
				granted = true
			case within(p, r.Path):
				deeper = true
			}
		}
		return granted, deeper
	}
	if _, deeper := inner(q); !deeper {
		return []string{q}
	}
	entries, err := os.ReadDir(q)
	if err != nil {
		return nil
	}
	var out []string
	for _, e := range entries {
		p := filepath.Join(q, e.Name())
		granted, deeper := inner(p)
		switch {
		case granted:
		case deeper && e.IsDir():
			out = append(out, spare(p, rules)...)
		default:
			out = append(out, p)
		}
	}
	return out
}

// carve replaces each rule that holds a hole by rules for the entries
// around it, recursing only into the directories on the way to a hole; the
// directories on the way may still be listed.
func carve(rules []rule, holes []string) []rule {
	var out []rule
	for _, r := range rules {
		var inside []string
		for _, h := range holes {
			if r.Access != accDev && h != r.Path && within(r.Path, h) {
				inside = append(inside, h)
			}
		}
		if len(inside) == 0 {
			out = append(out, r)
			continue
		}
		out = append(out, carveDir(r.Path, r.Access, inside)...)
	}
	return out
}

func carveDir(dir string, access uint64, holes []string) []rule {
	out := []rule{{Path: dir, Access: llReadDir}}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return out
	}
	for _, e := range entries {
		q := filepath.Join(dir, e.Name())
		if slices.Contains(holes, q) {
			continue
		}
		var deeper []string
		for _, h := range holes {
			if within(q, h) {
				deeper = append(deeper, h)
			}
		}
		if len(deeper) > 0 && e.IsDir() {
			out = append(out, carveDir(q, access, deeper)...)
			continue
		}
		out = append(out, rule{Path: q, Access: access})
	}
	return out
}
