package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"waymark/internal/llm"
	"waymark/internal/run"
	"waymark/internal/store"
)

// Request is what a caller asks the runtime to run.
type Request struct {
	Configuration int64         `json:"configuration"`
	Messages      []llm.Message `json:"messages"`
	// AllowedTools narrows the tools offered to the model; nil means every
	// tool the configuration grants.
	AllowedTools []string `json:"allowedTools,omitempty"`
	// MaxIterations caps the model rounds; 0 takes the configuration's value,
	// a larger value is clamped to it.
	MaxIterations int `json:"maxIterations,omitempty"`
	// Language is the content language tools work in (0 = default).
	Language int64 `json:"language,omitempty"`
	// Invocation starts a process skill (ADR-228 item 1); Predecessor names
	// the run this one continues. Neither carries a pin.
	Invocation  *Invocation `json:"invocation,omitempty"`
	Predecessor string      `json:"predecessorRunUuid,omitempty"`
	// Context is text an internal caller (the chat) adds to the system
	// message after the configuration prompt and the skills, e.g. the open
	// points of the page. The HTTP API does not take it.
	Context string `json:"context,omitempty"`
	// OnStart, when set, is called with the run's uuid once its row exists
	// (an interactive caller learns which run to follow live).
	OnStart func(uuid string) `json:"-"`
	// StartTx, when set, runs inside the transaction that creates the run
	// of an interactive start, with its uuid: the caller records the run in
	// the same commit (the chat: the conversation's pending run). An error
	// rolls the run back; Run returns it and makes no run.
	StartTx func(ctx context.Context, tx *store.Tx, uuid string) error `json:"-"`
	// Requeueable, for an interactive start that runs on a queue worker (a
	// chat turn's job), stores the request with the run and leases it as a
	// worker's: when the process stops mid-segment, the reaper requeues the
	// run by the retry rules of queued runs (a segment inside a
	// non-idempotent write is still dead-lettered) instead of failing it as
	// not rebuildable.
	Requeueable bool `json:"-"`
}

// isProcess reports a request the preparer must check.
func (r Request) isProcess() bool { return r.Invocation != nil || r.Predecessor != "" }

// storedRequest is the queue codec: the request and its acting user, versioned.
type storedRequest struct {
	V         int     `json:"v"`
	Initiator int64   `json:"initiator"`
	Request   Request `json:"request"`
}

const codecVersion = 1

func encodeRequest(initiator int64, req Request) ([]byte, error) {
	return json.Marshal(storedRequest{V: codecVersion, Initiator: initiator, Request: req})
}

// decodeRequest reads a stored request strictly: a value that cannot be read
// refuses the run instead of running something else.
func decodeRequest(b []byte) (storedRequest, error) {
	var s storedRequest
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return storedRequest{}, fmt.Errorf("stored request: %w", err)
	}
	if s.V != codecVersion {
		return storedRequest{}, fmt.Errorf("stored request: unknown version %d", s.V)
	}
	return s, nil
}

// validate checks a request before anything is stored.
func (r Request) validate() error {
	if r.Configuration <= 0 {
		return invalidf("configuration: want a configuration uid")
	}
	if len(r.Messages) == 0 {
		return invalidf("messages: want at least one message")
	}
	for i, m := range r.Messages {
		switch m.Role {
		case llm.RoleUser, llm.RoleAssistant:
		default:
			return invalidf("messages[%d].role: want user or assistant, got %q", i, m.Role)
		}
		if strings.TrimSpace(m.Content) == "" {
			return invalidf("messages[%d].content: empty", i)
		}
		if len(m.ToolCalls) > 0 || m.ToolCallID != "" {
			return invalidf("messages[%d]: tool calls cannot be sent by a caller", i)
		}
	}
	if r.Messages[len(r.Messages)-1].Role != llm.RoleUser {
		return invalidf("messages: the last message must be the user's")
	}
	if r.MaxIterations < 0 {
		return invalidf("maxIterations: must not be negative")
	}
	if r.Language < 0 {
		return invalidf("language: must be 0 or a language uid")
	}
	if inv := r.Invocation; inv != nil {
		if inv.Skill <= 0 {
			return invalidf("invocation.skill: want a skill uid")
		}
		if s := inv.Subject; s != nil && (s.Table == "" || s.UID <= 0 || s.Language < -1) {
			return invalidf("invocation.subject: want {table, uid, language}")
		}
	}
	if len(r.Predecessor) > 64 {
		return invalidf("predecessorRunUuid: too long")
	}
	return nil
}

// AskedForProcess reports whether run r was asked with an invocation or a
// predecessor (ADR-228 item 1), so that its process is decided only when
// its preparation runs (at pickup for a queued run). It reads the stored
// request of a queued run, else the run's opening request event (opening:
// the payload of its first event). known is false when neither tells: a
// stored request that cannot be decoded, or no readable opening event.
func AskedForProcess(r run.Run, opening []byte) (asked, known bool) {
	if len(r.Request) > 0 {
		s, err := decodeRequest(r.Request)
		if err != nil {
			return false, false
		}
		return s.Request.isProcess(), true
	}
	var p struct {
		MessageCount *int   `json:"messageCount"`
		Skill        *int64 `json:"skill"`
		Predecessor  string `json:"predecessor"`
	}
	if json.Unmarshal(opening, &p) != nil || p.MessageCount == nil {
		return false, false
	}
	return p.Skill != nil || p.Predecessor != "", true
}
