package rpc

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/rpc/wire"
	"github.com/agentd/agentd/tools"
	"github.com/agentd/agentd/tools/mcp"
)

var updateContract = flag.Bool("update", false, "rewrite testdata/contract/protocol.json")

// contractFile is what each editor client's contract test reads: the
// methods the daemon serves and sends, and every enumerated word of the
// protocol, so a client that names a method or a kind the daemon does not
// know fails its own tests.
const contractFile = "../testdata/contract/protocol.json"

type contract struct {
	ProtocolVersion int `json:"protocolVersion"`
	// Requests and Notifications are what an editor may send; they come
	// from the handler tables, so a method is listed exactly when it is
	// served.
	Requests      []string `json:"requests"`
	Notifications []string `json:"notifications"`
	// ServerNotifications and ServerRequests are what the daemon sends.
	ServerNotifications []string       `json:"serverNotifications"`
	ServerRequests      []string       `json:"serverRequests"`
	PromptKinds         []string       `json:"promptKinds"`
	Decisions           []string       `json:"decisions"`
	Policies            []string       `json:"policies"`
	Profiles            []string       `json:"profiles"`
	UpdateKinds         []string       `json:"updateKinds"`
	RunStates           []string       `json:"runStates"`
	StopReasons         []string       `json:"stopReasons"`
	ResolvedBy          []string       `json:"resolvedBy"`
	ToolKinds           []string       `json:"toolKinds"`
	Statuses            []string       `json:"statuses"`
	ReasoningEfforts    []string       `json:"reasoningEfforts"`
	UndoStatuses        []string       `json:"undoStatuses"`
	OnConflict          []string       `json:"onConflict"`
	ConflictKinds       []string       `json:"conflictKinds"`
	MCPStates           []string       `json:"mcpStates"`
	RuleScopes          []string       `json:"ruleScopes"`
	RuleActions         []string       `json:"ruleActions"`
	PauseReasons        []string       `json:"pauseReasons"`
	ErrorCodes          map[string]int `json:"errorCodes"`
}

func currentContract(t *testing.T) contract {
	c := contract{
		ProtocolVersion:     wire.ProtocolVersion,
		ServerNotifications: []string{wire.MethodUpdate, wire.MethodInputRequest, wire.MethodInputResolved, wire.MethodRunState, wire.MethodProgress, wire.MethodMCPChanged},
		ServerRequests:      []string{wire.MethodProgressCreate},
		PromptKinds:         strs(agent.RequestKinds),
		Decisions:           strs(tools.Decisions),
		Policies:            strs(tools.Modes),
		Profiles:            strs(tools.Profiles),
		UpdateKinds:         strs(agent.UpdateKinds),
		RunStates:           strs(agent.States),
		StopReasons:         strs(agent.StopReasons),
		ResolvedBy:          strs(agent.Resolvers),
		ToolKinds:           strs(tools.Kinds),
		Statuses:            strs(agent.Statuses),
		ReasoningEfforts:    agent.ReasoningEfforts,
		UndoStatuses:        strs(agent.UndoStatuses),
		OnConflict:          agent.OnConflicts,
		ConflictKinds:       agent.ConflictKinds,
		MCPStates:           strs(mcp.States),
		RuleScopes:          agent.RuleScopes,
		RuleActions:         agent.RuleActions,
		PauseReasons:        strs(agent.PauseReasons),
		ErrorCodes: map[string]int{
			"ParseError": wire.CodeParseError, "InvalidRequest": wire.CodeInvalidRequest,
			"MethodNotFound": wire.CodeMethodNotFound, "InvalidParams": wire.CodeInvalidParams,
			"InternalError": wire.CodeInternalError, "ServerNotInitialized": wire.CodeServerNotInitialized,
			"RequestCancelled": wire.CodeRequestCancelled,
		},
	}
	for m := range requests {
		c.Requests = append(c.Requests, m)
	}
	for m := range notifications {
		c.Notifications = append(c.Notifications, m)
	}
	// exit and $/cancelRequest are handled by the server loop itself, not
	// by the notification table.
	c.Notifications = append(c.Notifications, wire.MethodExit, wire.MethodCancelRequest)
	slices.Sort(c.Requests)
	slices.Sort(c.Notifications)
	for _, e := range codes {
		name, ok := codeNames[e.code]
		if !ok {
			t.Fatalf("error code %d has no name in codeNames", e.code)
		}
		c.ErrorCodes[name] = e.code
	}
	return c
}

// codeNames names agentd's own codes after their wire constants.
var codeNames = map[int]string{
	wire.CodeUnknownRun: "UnknownRun", wire.CodeUnknownRequest: "UnknownRequest",
	wire.CodeAlreadyResolved: "AlreadyResolved", wire.CodeWrongKind: "WrongKind", wire.CodeExpired: "Expired",
	wire.CodeIndexUnavailable: "IndexUnavailable", wire.CodeSessionBusy: "SessionBusy",
	wire.CodeUnknownSession: "UnknownSession", wire.CodeNoModel: "NoModel",
	wire.CodeRunNotPaused: "RunNotPaused", wire.CodeShuttingDown: "ShuttingDown", wire.CodeNotSaved: "NotSaved",
	wire.CodeUnknownCheckpoint: "UnknownCheckpoint",
	wire.CodeUnknownRule:       "UnknownRule",
	wire.CodeMethodNotFound:    "MethodNotFound", wire.CodeInvalidRequest: "InvalidRequest",
	wire.CodeInvalidParams: "InvalidParams", wire.CodeServerNotInitialized: "ServerNotInitialized",
	wire.CodeRequestCancelled: "RequestCancelled", wire.CodeInternalError: "InternalError",
}

// TestContract keeps testdata/contract/protocol.json equal to what the
// daemon serves. Run with -update after adding a method or a kind, then let
// the clients' contract tests say what they miss.
func TestContract(t *testing.T) {
	got, err := json.MarshalIndent(currentContract(t), "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *updateContract {
		if err := os.MkdirAll(filepath.Dir(contractFile), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(contractFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(contractFile)
	if err != nil {
		t.Fatalf("%v (run go test ./rpc -run TestContract -update)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s is stale; run go test ./rpc -run TestContract -update and commit it.\ngot:\n%s", contractFile, got)
	}
}
