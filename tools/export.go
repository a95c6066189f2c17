package tools

// DiffFiles renders one file's change from before to after (nil: absent) as
// editors show it; the agent uses it for a run's final files_changed.
func DiffFiles(rel string, before, after *string) FileDiff {
	return diffs([]fileChange{{Rel: rel, Before: before, After: after}})[0]
}
