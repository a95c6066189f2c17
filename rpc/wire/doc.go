// Package wire is the native protocol's own vocabulary: the method names, the
// error codes, initialize's options and capabilities, and the index's
// params. It is part of rpc: no lower layer imports it.
//
// What the methods carry belongs to the packages whose words they are: the
// run vocabulary (run params, updates, input requests, states) to agent, the
// tools' nouns, modes and decisions to tools, the envelopes of the agent/*
// methods to rpc. The contract is written out, with examples, in
// docs/protocol.md; change both in the same commit.
package wire
