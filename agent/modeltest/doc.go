// Package modeltest is the stand-in for the model in agentd's tests.
//
// No model runs where agentd is tested, so every test talks to a scripted
// OpenAI-compatible HTTP server instead. The server speaks the wire format of
// POST /v1/chat/completions (streaming server-sent events and plain JSON,
// tool calls, reasoning deltas and cached-token usage included) as OpenAI
// and the servers that copy it send it; its own tests read it with an
// independent client (github.com/sashabaranov/go-openai), and agentd runs
// its real client against it.
//
// A Script is a list of turns. Each request takes the first unconsumed turn,
// in order, whose Match holds, and answers with its Reply: text and
// reasoning (streamed in chunks), tool calls (arguments streamed in deltas,
// several calls at once being parallel tool calls), an HTTP error with its
// headers (a 429 with Retry-After), a garbled body, or one of the faults a
// real endpoint produces: a stream that stalls after its headers, one that
// trickles keep-alive bytes forever, one cut without a finish reason or
// [DONE], a hostile tool-call index, a delay. A request that no turn matches
// gets an HTTP 500 naming the last message, so a test fails on the spot
// rather than hanging. Chaos fails requests at random (500, 429, cuts,
// stalls) without taking turns, for soak tests.
//
// Every request is recorded (Server.Requests) and the turns never played are
// listed (Server.Unused), so tests can check both what agentd sent and that
// the script was played out. The same data is served over HTTP for the
// editor tests that run cmd/fakemodel as a process:
//
//	GET  /_requests   the recorded requests, as JSON
//	GET  /_unused     the turns not yet consumed, as a JSON array of names
//	POST /_turns      append turns (a JSON array of turns)
//	GET  /v1/models   the model names seen so far, or Endpoint.Models
//
// and, when the script's Endpoint says so, what llama.cpp (GET /props) and
// Ollama (GET /api/ps, POST /api/show) tell of the model's context window.
//
// The script format, in JSON:
//
//	{"turns": [
//	  {"name": "greet", "match": {"lastUser": "hello"}, "reply": {"text": "Hi!", "chunks": 4}},
//	  {"reply": {"toolCalls": [{"id": "call_1", "name": "ask_user", "arguments": {"question": "Which?"}}]}},
//	  {"match": {"afterTool": "ask_user", "lastTool": "blue"}, "reply": {"text": "You chose blue."}},
//	  {"reply": {"status": 500, "body": "upstream exploded", "times": 2}},
//	  {"repeat": true, "match": {"lastUser": "ping"}, "reply": {"text": "pong"}},
//	  {"reply": {"status": 429, "headers": {"Retry-After": "2"}}},
//	  {"reply": {"stall": true}}, {"reply": {"trickleMs": 50}}, {"reply": {"text": "half", "cut": true}},
//	  {"reply": {"reasoning": "Let me think.", "text": "Done.", "usage": {"prompt_tokens": 90, "completion_tokens": 3, "cached_tokens": 64}}}
//	],
//	 "endpoint": {"propsNCtx": 8192},
//	 "chaos": {"status500": 0.05, "status429": 0.05, "retryAfter": "1", "cut": 0.05, "stall": 0.02}}
//
// See Turn, Match and Reply for every field.
package modeltest
