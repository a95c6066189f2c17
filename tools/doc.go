// Package tools is the agent's hands: the workspace tools the model calls
// (list_dir, read_file, glob_file_search, grep, edit_file, apply_patch,
// write_file, undo_patch, run_cmd, search_semantic). The permission policy
// that decides which calls run freely, which ask the user and which are
// refused is tools/policy, above this package.
//
// Each tool is one file with its description for the model beside it (a .md
// file), a typed parameter struct whose JSON Schema is derived from it
// ([SchemaOf]: descriptions and bounds in struct tags), and a timeout. A
// failure the model can act on is a [Result] with IsError set, never a Go
// error; a Go error means the infrastructure broke. Tools reach up to the human only through the [Asker] interface the
// agent implements, and to the index through [Searcher].
//
// Every tool declares in its [Info] the [Effect] of its calls (read, edit,
// execute, network, unknown), and the policy (tools/policy) decides on that effect; a
// tool that declares none is unknown and fails closed. tools owns the words
// of its calls: [Kind], [Effect], [FileDiff], [Location], [Option], the
// approval [Mode]s and the user's [Decision]s.
//
// tools imports rag and the libraries it owns (creack/pty, go-udiff);
// never tools/policy, agent, rpc or cmd.
package tools
