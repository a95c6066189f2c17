// Package sandbox confines the processes agentd starts with the kernel, so
// that what a command may do no longer depends on how well a shell parser
// guessed what it does.
//
// A command runs in a [Profile]: [Read] (read the workspace, the system and
// the toolchains; write only a private temporary directory), [WorkspaceWrite]
// (the workspace too, except .git/config, .git/hooks, nested .git
// directories and .agentd/) or [Full] (no confinement; only by an explicit
// grant). The network is off unless [Spec.Network] asks for it; without it,
// the commands of one session ([Spec.Session]) share a network namespace of
// their own where only the loopback exists ([EndSession] ends it).
//
//	c, err := sandbox.Command(ctx, sandbox.Spec{Profile: sandbox.WorkspaceWrite,
//		Workspace: root, Args: []string{"bash", "-c", line}, Dir: dir, Env: env})
//	c.Stdout, c.Stderr = w, w
//	err = c.Start()      // ErrUnavailable or *SetupError: nothing ran
//	record(c.ID())       // to Reap after a crash
//	err = c.Wait()       // then c.ExitCode()
//
// On Linux the daemon re-executes its own binary as an entry point, in new
// user, mount and PID namespaces, ahead of time: it waits on a socket for a
// command's streams and plan. A small namespace holder (the same binary,
// one for the host's network and one per session) forks the entry points
// as the daemon's children, so that the daemon itself never forks into a
// new user namespace. It then binds the protected paths read-only,
// masks /tmp, /var/tmp, /dev/shm, /run and HOME with an empty tmpfs (the
// paths the command may use are bound back), hides /etc's secrets, mounts
// a /proc of its own, and on its one locked thread builds a Landlock
// ruleset (filesystem, TCP and scope rules), drops every capability, sets
// no_new_privs and a seccomp filter on sockets, restricts itself and forks
// the command from that thread. It stays as the command's init, sends its
// exit status and exits; the kernel then kills whatever the command left.
// See docs/security.md for what this does and does not cover.
//
// The entry point takes over in this package's initializer when the binary
// is started with its marker argument, so a binary (or test binary) that
// links this package needs no wiring. [Check] says once what the machine
// offers; [Root] opens workspace files relative to a directory handle at the
// moment of use; [NestedGitDirs] lists the repositories to protect.
//
// The package imports nothing of this module and no third-party library:
// Landlock, seccomp and the mount API are raw system calls.
package sandbox
