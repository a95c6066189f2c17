// Package modeltest is the stand-in for the model in agentd's tests.
//
// No model runs where agentd is tested, so every test talks to a scripted
// OpenAI-compatible HTTP server instead. The server speaks the wire format of
// POST /v1/chat/completions (streaming server-sent events and plain JSON,
// tool calls included) exactly as github.com/sashabaranov/go-openai parses
// it, so the code under test runs its real client against it.
//
// A Script is a list of turns. Each request takes the first unconsumed turn,
// in order, whose Match holds, and answers with its Reply: text (streamed in
// chunks), tool calls (arguments streamed in deltas, several calls at once
// being parallel tool calls), an HTTP error, a garbled body, a stream that
// never finishes, or a delay. A request that no turn matches gets an HTTP 500
// naming the last message, so a test fails on the spot rather than hanging.
//
// Every request is recorded (Server.Requests) and the turns never played are
// listed (Server.Unused), so tests can check both what agentd sent and that
// the script was played out. The same data is served over HTTP for the
// editor tests that run cmd/fakemodel as a process:
//
//	GET  /_requests   the recorded requests, as JSON
//	GET  /_unused     the turns not yet consumed, as a JSON array of names
//	POST /_turns      append turns (a JSON array of turns)
//	GET  /v1/models   the model names seen so far
//
// The script format, in JSON:
//
//	{"turns": [
//	  {"name": "greet", "match": {"lastUser": "hello"}, "reply": {"text": "Hi!", "chunks": 4}},
//	  {"reply": {"toolCalls": [{"id": "call_1", "name": "ask_user", "arguments": {"question": "Which?"}}]}},
//	  {"match": {"afterTool": "ask_user", "lastTool": "blue"}, "reply": {"text": "You chose blue."}},
//	  {"reply": {"status": 500, "body": "upstream exploded", "times": 2}},
//	  {"repeat": true, "match": {"lastUser": "ping"}, "reply": {"text": "pong"}}
//	]}
//
// See Turn, Match and Reply for every field.
package modeltest
