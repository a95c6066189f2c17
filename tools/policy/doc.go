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
// Where it cannot tell, the line is not read-only. Beyond the line, it
// keeps commands and writes out of agentd's own directories
// (tools.AgentDirs) and asks before a file that runs later outside any
// sandbox (tools.RunsLater) is written.
//
// Files:
//   - policy.go: [Policy], [Load], [Policy.Decide] and the mode defaults;
//   - rules.go: rules files and matching; grant.go: what the user's
//     answers store ([Policy.Grant], [Policy.GrantNetwork]);
//   - command.go: a command's verdict ([Policy.Classify], decideCommand);
//     confine.go: how it runs (profile, network, secrets, sandbox);
//   - network.go: the network a command needs;
//   - analysis.go, shell.go, flow.go, words.go, eval.go: the analysis of a
//     line (its result, the walk of its statements, where each command
//     runs and what it reads, what its words can hold, code bash evaluates
//     a second time);
//   - parts.go: each simple command, judged in one place (addPart), with
//     code.go (sh -c, eval, source), links.go (ln) and wrappers.go (the
//     commands a command runs: timeout, env, xargs, find -exec …);
//   - programs.go, scripts.go, git.go: which programs and arguments only
//     read (sed and awk scripts, git's subcommands and settings);
//   - risk.go: what a wildcard rule never covers; outputs.go: the files a
//     command's arguments write; denials.go: the denials no rule lifts
//     (a download reaching a program that runs it among them);
//   - fixed.go: the line expanded with the values it fixes itself
//     (x=rm; $x, ${X:-/}, braces), checked again for denials;
//   - family.go: what an allow grant of a test or build command covers
//     (go test *), and Covers, what an answer would allow, in words.
//
// policy imports tools (the words of a call: [tools.Call], [tools.Mode],
// [tools.Confine]) and never agent, rpc or cmd; tools never imports it.
package policy
