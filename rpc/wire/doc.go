// Package wire holds the types that cross the editor ↔ daemon wire: method
// names, parameter and result structs, notification payloads and error codes.
//
// It sits at the bottom of the import graph and has no behaviour: every other
// package may import it, it imports only the standard library. The contract it
// encodes is written out, with examples, in docs/protocol.md; change both in
// the same commit.
package wire
