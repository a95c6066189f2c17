package rpc

import (
	"bytes"
	"encoding/json"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/agentd/agentd/agent"
	"github.com/agentd/agentd/internal/contract"
	"github.com/agentd/agentd/rpc/wire"
	"github.com/agentd/agentd/tools"
	"github.com/agentd/agentd/tools/mcp"
)

var updateContract = flag.Bool("update", false, "rewrite testdata/contract/protocol.json and the clients' generated types")

// The contract and what is generated from it: the description every client
// reads (the methods, their params and results, every type they use, the
// enumerations, the error codes), and the clients' types written from it.
const contractFile = "../testdata/contract/protocol.json"

var generated = []struct {
	path  string
	write func(*contract.Contract) []byte
}{
	{"../editor-clients/vscode/src/contract.ts", contract.TypeScript},
	{"../editor-clients/nvim/lua/agentd/contract.lua", contract.Lua},
}

// serverMessages are what the daemon sends, with their params (and a
// request's result): the agent's notifications as rpc/notify.go sends
// them, LSP's progress (index.go), and the requests of the editor's
// language intelligence (language.go), whose results may be null (the
// editor has none).
var serverMessages = []struct {
	method         string
	dir            contract.Direction
	params, result reflect.Type
	optIn          bool // sent only to an editor that declared it
}{
	{wire.MethodUpdate, contract.ServerNotification, reflect.TypeFor[agent.UpdateParams](), nil, false},
	{wire.MethodInputRequest, contract.ServerNotification, reflect.TypeFor[agent.InputRequest](), nil, false},
	{wire.MethodInputResolved, contract.ServerNotification, reflect.TypeFor[agent.InputResolved](), nil, false},
	{wire.MethodRunState, contract.ServerNotification, reflect.TypeFor[agent.RunState](), nil, false},
	{wire.MethodProgress, contract.ServerNotification, reflect.TypeFor[progressParams](), nil, true},
	{wire.MethodMCPChanged, contract.ServerNotification, reflect.TypeFor[MCPChangedParams](), nil, false},
	{wire.MethodProcessChanged, contract.ServerNotification, reflect.TypeFor[ProcessResult](), nil, false},
	{wire.MethodProgressCreate, contract.ServerRequest, reflect.TypeFor[progressCreate](), reflect.TypeFor[*struct{}](), true},
	{wire.MethodEditorDiagnostics, contract.ServerRequest, reflect.TypeFor[wire.DiagnosticsParams](), reflect.TypeFor[*wire.DiagnosticsResult](), true},
	{wire.MethodEditorDefinition, contract.ServerRequest, reflect.TypeFor[wire.TextDocumentPosition](), reflect.TypeFor[*[]wire.Location](), true},
	{wire.MethodEditorReferences, contract.ServerRequest, reflect.TypeFor[wire.ReferencesParams](), reflect.TypeFor[*[]wire.Location](), true},
	{wire.MethodEditorHover, contract.ServerRequest, reflect.TypeFor[wire.TextDocumentPosition](), reflect.TypeFor[*wire.Hover](), true},
	{wire.MethodEditorDocumentSymbols, contract.ServerRequest, reflect.TypeFor[wire.DocumentSymbolsParams](), reflect.TypeFor[*[]wire.Symbol](), true},
	{wire.MethodEditorWorkspaceSymbols, contract.ServerRequest, reflect.TypeFor[wire.WorkspaceSymbolsParams](), reflect.TypeFor[*[]wire.Symbol](), true},
	{wire.MethodEditorContext, contract.ServerRequest, reflect.TypeFor[struct{}](), reflect.TypeFor[*wire.EditorContext](), true},
	{wire.MethodEditorReadFile, contract.ServerRequest, reflect.TypeFor[wire.ReadFileParams](), reflect.TypeFor[*wire.ReadFileResult](), true},
}

func buildContract(t *testing.T) *contract.Contract {
	t.Helper()
	keys := methodKeys(t)
	b := contract.NewBuilder("..", "github.com/agentd/agentd")
	describeWords(b)
	c := &contract.Contract{
		ProtocolVersion:     wire.ProtocolVersion,
		ErrorCodes:          map[string]int{},
		Kinds:               map[string]contract.KindInfo{},
		Methods:             map[string]contract.Method{},
		ServerNotifications: []string{},
		ServerRequests:      []string{},
	}
	add := func(method string, dir contract.Direction, params, result reflect.Type) {
		key, ok := keys[method]
		if !ok {
			t.Errorf("%s has no Method constant in rpc/wire", method)
		}
		m := contract.Method{Direction: dir, Key: key}
		if params != nil && params != reflect.TypeFor[struct{}]() {
			p := b.Type(params)
			m.Params = &p
		}
		if result != nil {
			if result.Kind() == reflect.Interface {
				t.Errorf("%s answers %s: give its handler a result type", method, result)
			}
			r := b.Type(result)
			m.Result = &r
		}
		c.Methods[method] = m
	}
	for m, h := range requests {
		c.Requests = append(c.Requests, m)
		add(m, contract.Request, h.params, h.result)
	}
	for m, h := range notifications {
		c.Notifications = append(c.Notifications, m)
		add(m, contract.Notification, h.params, nil)
	}
	// exit and $/cancelRequest are handled by the server loop itself, not
	// by the notification table.
	c.Notifications = append(c.Notifications, wire.MethodExit, wire.MethodCancelRequest)
	add(wire.MethodExit, contract.Notification, nil, nil)
	add(wire.MethodCancelRequest, contract.Notification, reflect.TypeFor[struct {
		ID any `json:"id"` // the id of the request to cancel
	}](), nil)
	slices.Sort(c.Requests)
	slices.Sort(c.Notifications)
	for _, s := range serverMessages {
		if s.dir == contract.ServerNotification {
			c.ServerNotifications = append(c.ServerNotifications, s.method)
		} else {
			c.ServerRequests = append(c.ServerRequests, s.method)
		}
		add(s.method, s.dir, s.params, s.result)
		if s.optIn {
			m := c.Methods[s.method]
			m.OptIn = true
			c.Methods[s.method] = m
		}
	}
	for _, code := range []int{wire.CodeParseError, wire.CodeInvalidRequest, wire.CodeMethodNotFound, wire.CodeInvalidParams,
		wire.CodeInternalError, wire.CodeServerNotInitialized, wire.CodeRequestCancelled} {
		c.ErrorCodes[codeNames[code]] = code
	}
	for _, e := range codes {
		name, ok := codeNames[e.code]
		if !ok {
			t.Fatalf("error code %d has no name in codeNames", e.code)
		}
		c.ErrorCodes[name] = e.code
	}
	for _, k := range agent.RequestKinds {
		decision, secret := agent.KindAnswer(k)
		info := contract.KindInfo{Answer: wire.MethodReply, Secret: secret}
		if decision {
			info.Answer = wire.MethodConfirm
		}
		c.Kinds[string(k)] = info
	}
	for method := range keys {
		if _, ok := c.Methods[method]; !ok {
			t.Errorf("%s (rpc/wire) is in no table: serve it, or list what the daemon sends in serverMessages", method)
		}
	}
	if err := b.Describe(c); err != nil {
		t.Fatal(err)
	}
	return c
}

// describeWords registers the protocol's enumerations and the names the
// clients know its types by.
func describeWords(b *contract.Builder) {
	b.Enum(agent.RequestKind(""), "PromptKind", "promptKinds", strs(agent.RequestKinds))
	b.Enum(agent.AnswerMethod(""), "AnswerMethod", "answerMethods", strs([]agent.AnswerMethod{agent.AnswerReply, agent.AnswerConfirm}))
	b.Enum(tools.Decision(""), "Decision", "decisions", strs(tools.Decisions))
	b.Enum(tools.Mode(""), "ApprovalPolicy", "policies", strs(agent.Modes))
	b.Enum(tools.Profile(""), "Profile", "profiles", strs(tools.Profiles))
	b.Enum(agent.UpdateKind(""), "UpdateKind", "updateKinds", strs(agent.UpdateKinds))
	// A session's state is its latest run's, or idle before its first.
	b.Enum(agent.State(""), "State", "states", append(strs(agent.States), string(agent.StateIdle)))
	b.List("RunStateName", "runStates", "The states a run goes through.", strs(agent.States))
	var finished []string
	for _, s := range agent.States {
		if s.Finished() {
			finished = append(finished, string(s))
		}
	}
	b.List("FinishedState", "finishedStates", "The states a run ends in: nothing more happens to it.", finished)
	b.Enum(agent.StopReason(""), "StopReason", "stopReasons", strs(agent.StopReasons))
	b.Enum(agent.ResolvedBy(""), "ResolvedBy", "resolvedBy", strs(agent.Resolvers))
	b.Enum(agent.Outcome(""), "Outcome", "outcomes", append([]string{string(agent.OutcomeAnswered), string(agent.OutcomeTimeout),
		string(agent.OutcomeCancelled)}, strs(tools.Decisions)...))
	b.Enum(tools.Kind(""), "ToolKind", "toolKinds", strs(tools.Kinds))
	b.Enum(agent.Status(""), "ToolStatus", "statuses", strs(agent.Statuses))
	b.List("ReasoningEffort", "reasoningEfforts", "The reasoning efforts a session may choose.", agent.ReasoningEfforts)
	b.Enum(agent.UndoStatus(""), "UndoStatus", "undoStatuses", strs(agent.UndoStatuses))
	b.List("OnConflict", "onConflict", "What agent/undo and agent/rewind do with a file changed since.", agent.OnConflicts)
	b.List("ConflictKind", "conflictKinds", "Why a file cannot be restored.", agent.ConflictKinds)
	b.Enum(mcp.State(""), "McpState", "mcpStates", strs(mcp.States))
	b.List("RuleScope", "ruleScopes", "Where a rule of the rules view lives.", agent.RuleScopes)
	b.List("RuleAction", "ruleActions", "What a rule does.", agent.RuleActions)
	b.Enum(agent.PauseReason(""), "PauseReason", "pauseReasons", strs(agent.PauseReasons))
	b.Enum(mcp.Origin(""), "McpOrigin", "mcpOrigins", strs([]mcp.Origin{mcp.OriginUser, mcp.OriginSession, mcp.OriginWorkspace}))
	b.Enum(agent.CommandSource(""), "CommandSource", "commandSources", strs([]agent.CommandSource{agent.CommandsOfUser, agent.CommandsOfWorkspace}))
	b.Enum(agent.HookEvent(""), "HookEvent", "hookEvents", strs(agent.HookEvents))
	b.Enum(agent.HookOutcome(""), "HookOutcome", "hookOutcomes", strs([]agent.HookOutcome{agent.HookFailed, agent.HookTimedOut}))
	b.Union(agent.UpdateParams{}, agent.InputRequest{}, agent.InputResolved{}, agent.RunState{}, wire.InitializeOptions{}, progressValue{})

	b.Rename(initializeParams{}, "InitializeParams")
	b.Rename(initializeResult{}, "InitializeResult")
	b.Rename(serverCapabilities{}, "ServerCapabilities")
	b.Rename(documentParams{}, "DocumentParams")
	b.Rename(progressToken{}, "ProgressToken")
	b.Rename(progressParams{}, "ProgressParams")
	b.Rename(progressValue{}, "ProgressValue")
	b.Rename(progressCreate{}, "ProgressCreateParams")
	b.Rename(wire.Selection{}, "EditorSelection")
	b.Rename(wire.Location{}, "EditorLocation")
	b.Rename(protocol.ServerInfo{}, "ServerInfo")
	b.Rename(Event{}, "RunEvent")
	b.Rename(agent.Command{}, "CustomCommand")
	b.Rename(agent.CheckpointInfo{}, "Checkpoint")
	b.Rename(mcp.Status{}, "McpServer")
	b.Rename(mcp.ToolInfo{}, "McpTool")
}

// methodKeys names each method after its constant in rpc/wire
// (MethodRun: Run), for the clients' tables.
func methodKeys(t *testing.T) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join("wire", "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	keys := map[string]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		inspectMethods(f, keys)
	}
	return keys
}

// inspectMethods adds the Method constants of f to keys.
func inspectMethods(f *ast.File, keys map[string]string) {
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || len(vs.Values) != 1 {
			return true
		}
		lit, ok := vs.Values[0].(*ast.BasicLit)
		if !ok || lit.Kind != token.STRING || !strings.HasPrefix(vs.Names[0].Name, "Method") {
			return true
		}
		v, _ := strconv.Unquote(lit.Value)
		keys[v] = strings.TrimPrefix(vs.Names[0].Name, "Method")
		return true
	})
}

// codeNames names the error codes after their wire constants.
var codeNames = map[int]string{
	wire.CodeUnknownRun: "UnknownRun", wire.CodeUnknownRequest: "UnknownRequest",
	wire.CodeAlreadyResolved: "AlreadyResolved", wire.CodeWrongKind: "WrongKind", wire.CodeExpired: "Expired",
	wire.CodeIndexUnavailable: "IndexUnavailable", wire.CodeSessionBusy: "SessionBusy",
	wire.CodeUnknownSession: "UnknownSession", wire.CodeNoModel: "NoModel",
	wire.CodeRunNotPaused: "RunNotPaused", wire.CodeShuttingDown: "ShuttingDown", wire.CodeNotSaved: "NotSaved",
	wire.CodeUnknownCheckpoint: "UnknownCheckpoint",
	wire.CodeUnknownRule:       "UnknownRule", wire.CodeRunFinished: "RunFinished",
	wire.CodeParseError: "ParseError", wire.CodeMethodNotFound: "MethodNotFound", wire.CodeInvalidRequest: "InvalidRequest",
	wire.CodeInvalidParams: "InvalidParams", wire.CodeServerNotInitialized: "ServerNotInitialized",
	wire.CodeRequestCancelled: "RequestCancelled", wire.CodeInternalError: "InternalError",
}

// TestContract keeps testdata/contract/protocol.json and the clients'
// generated types equal to what the daemon serves and sends. After a change
// to a method, a wire type or a kind: go test ./rpc -run TestContract
// -update, then the clients' own tests say what they miss.
func TestContract(t *testing.T) {
	c := buildContract(t)
	data, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{contractFile: append(data, '\n')}
	for _, g := range generated {
		files[g.path] = g.write(c)
	}
	for path, want := range files {
		if *updateContract {
			if err := os.WriteFile(path, want, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		have, err := os.ReadFile(path)
		if err != nil {
			t.Errorf("%v (run go test ./rpc -run TestContract -update)", err)
			continue
		}
		if !bytes.Equal(have, want) {
			t.Errorf("%s is stale: run go test ./rpc -run TestContract -update and commit it", path)
		}
	}
}

// The contract file reads back as what was written: a client (or a tool)
// that loads it gets every type.
func TestContractRoundTrip(t *testing.T) {
	c := buildContract(t)
	data, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var back contract.Contract
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(&back)
	if !bytes.Equal(data, again) {
		t.Fatal("the contract does not read back as written")
	}
}
