package agent

import "errors"

// Errors a caller can act on. Each front end maps them to its own errors
// (rpc to its protocol codes).
var (
	ErrUnknownRun      = errors.New("unknown run")
	ErrUnknownRequest  = errors.New("unknown request")
	ErrAlreadyResolved = errors.New("already resolved")
	ErrWrongKind       = errors.New("wrong kind")
	ErrExpired         = errors.New("expired")
	ErrSessionBusy     = errors.New("session busy")
	ErrUnknownSession  = errors.New("unknown session")
	ErrNoModel         = errors.New("no model configured")
	ErrRunNotPaused    = errors.New("run not paused")
	// ErrRunFinished: the run is over (or ending); a steer goes in a new
	// run instead.
	ErrRunFinished = errors.New("run finished")
	ErrInvalid     = errors.New("invalid params")
	// ErrNotSaved is a change the state directory could not take (disk
	// full, read-only, permission denied); the error names the file and
	// the cause. Nothing was applied: the request stays open, the run
	// stays where its last checkpoint left it.
	ErrNotSaved = errors.New("state not saved")
)

// ErrUnknownCheckpoint: no such checkpoint in the session, or it expired
// (undo.go).
var ErrUnknownCheckpoint = errors.New("unknown checkpoint")
