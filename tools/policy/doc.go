// Package policy is the permission policy: it decides which of the tools'
// calls run freely, which ask the user and which are refused, and, for a
// command line, how it runs if it runs (its sandbox profile, the network,
// the secrets it uses). The agent asks it about every call; nothing below
// the agent does.
//
// It judges a prepared [tools.Call] on its effect: reads by the files they
// read, edits by the files they write, a command by a static analysis of
// its shell line (mvdan.cc/sh, which only this package imports), network
// and unknown effects by the rules naming the tool. Built-in denials win
// over everything; otherwise the strictest matching rule decides, and
// without one the mode's default does.
//
// The kernel sandbox is the boundary; the analysis is the second line: it
// decides when to ask, and it must never call a line read-only that can
// change anything, run a program the workspace wrote, or reach the network.
// Where it cannot tell, the line is not read-only.
//
// Files:
//   - policy.go: [Policy], [Load], [Policy.Decide] and the mode defaults;
//   - rules.go: rules files, matching, and the grants an answer stores;
//   - command.go: a command's verdict ([Policy.Classify], decideCommand);
//   - network.go: the network a command needs and its grants;
//   - shell.go, flow.go, words.go, eval.go: the analysis of a line (the
//     statements, where each runs, what its words can hold, code evaluated
//     a second time);
//   - parts.go, wrappers.go: each simple command and the commands it runs
//     (xargs, find -exec, env, timeout …);
//   - programs.go, scripts.go: which programs and arguments only read
//     (sed, awk and jq scripts among them);
//   - risk.go, builtin.go: what needs the network, what a wildcard rule
//     never covers, and the denials no rule lifts;
//   - git.go: git's own risks (configuration that runs programs, the
//     repositories made during a session) and the settings every
//     auto-allowed git command runs with.
//
// policy imports tools (the words of a call: [tools.Call], [tools.Mode],
// [tools.Confine]) and never agent, rpc or cmd; tools never imports it.
package policy
