package tools

import (
	"regexp"
	"slices"
)

// secretsUsed lists, sorted, the names of secrets that line names as a
// word ($NAME, ${NAME}, "NAME" for printenv): only those reach the command,
// and the policy never lets such a command run without the user, whose
// prompt names them. A command that does not name a secret does not get it,
// so it cannot read it through its environment by accident or by trick.
func secretsUsed(line string, secrets map[string]string) []string {
	var out []string
	for name := range secrets {
		if name != "" && namesWord(line, name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func namesWord(line, name string) bool {
	re := regexp.MustCompile(`(^|[^A-Za-z0-9_])` + regexp.QuoteMeta(name) + `($|[^A-Za-z0-9_])`)
	return re.MatchString(line)
}
