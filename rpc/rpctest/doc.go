// Package rpctest is the headless editor harness: a fake editor that speaks
// the wire protocol to a real daemon, records every message, answers input
// requests through per-kind responders, and waits for expected notifications
// with a deadline instead of sleeping. Each scenario runs against the daemon
// in process (over pipes) and as the built agentd binary (over its stdio);
// the model is the scripted OpenAI-compatible server of agent/modeltest. On
// failure the whole wire transcript and the daemon's log are printed.
//
// The golden transcripts (golden_test.go, testdata/golden) pin the wire: each
// call with its answer and each run notification, normalised, for the
// lifecycle, the errors and a whole run.
//
// It imports rpc (for the server and the client end of the wire), rpc/wire,
// agent and tools (for their words and the configuration) and
// agent/modeltest; nothing imports it but tests.
package rpctest
