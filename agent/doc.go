// Package agent is the heart of agentd: a run takes the user's prompt, the
// workspace and its session's history, and works with an OpenAI-compatible
// model until it has an answer, asking the human whenever it needs to.
//
// The loop follows the seeds' graph: plan → execute step → decide →
// continue | request input | adjust plan | synthesize. The model works through
// native tool calls (or JSON in its text, for models without them); the plan
// is the update_plan tool, a question is the ask_user tool, and the final
// answer is a reply without tool calls.
//
// Every open input request and the run's whole state are persisted before the
// request is sent ([store]), so a run paused on several questions survives a
// daemon restart and resumes exactly where it stopped when they are answered.
//
// agent owns the run vocabulary: what a front end asks ([RunParams],
// [ReplyParams], [ConfirmParams]) and what a run reports ([UpdateParams],
// [InputRequest], [InputResolved], [RunState]), with their states, kinds and
// outcomes. It reports through the [Listener] each front end implements, as
// values: it neither names protocol methods nor encodes for a wire. Every
// notification is also appended to the run's event log ([Event]), which
// [Agent.Events], [Agent.History] and [Agent.SessionHistory] replay.
//
// Start-up reads no history: it restores the unfinished runs, found by their
// markers, and reads a session when it is first used; the sessions are
// listed from a small index (session_store.go). Each session keeps its
// settings, the model, reasoning effort and approval mode its runs use
// ([Agent.Configure]).
//
// agent talks to the model over plain net/http (model_openai.go reads the
// event stream itself, bounding every line and telling a clean end from a
// cut). It imports tools, never rpc or cmd.
package agent
