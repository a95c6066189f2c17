// Package contract describes the protocol's types once, from the Go types
// the daemon decodes and sends, and writes the editor clients' types from
// that description: TypeScript for VS Code, a Lua table with LuaLS
// annotations for Neovim.
//
// rpc's contract test (rpc/contract_test.go) builds the Contract from the
// handler table and the agent's notifications and writes it to
// testdata/contract/protocol.json; the same test writes the clients' files
// and fails when any of them is stale:
//
//	go test ./rpc -run TestContract -update
//
// A Builder walks a Go type as encoding/json sees it: exported fields by
// their json names, omitempty fields optional, embedded structs flattened,
// time.Time a string, json.RawMessage anything. A named string type is an
// enumeration when its values are registered (Builder.Enum); a named struct
// becomes a type of its own, its doc and its fields' docs read from the Go
// source. Anything else with a MarshalJSON of its own fails, so the
// description never guesses.
package contract
