package process

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"waymark/internal/content"
	"waymark/internal/fault"
	"waymark/internal/run"
	"waymark/internal/skill"
	"waymark/internal/store"
)

// Lineage is what a run started with, stored as an event of kind lineage
// (ADR-228 item 4). It holds ids and a digest only, so it is stored at every
// privacy level; the latest lineage event of a run counts.
type Lineage struct {
	Configuration int64        `json:"configuration"`
	Pin           *skill.Pin   `json:"pin"`          // the process pin; nil: no process
	Subject       *content.Ref `json:"subject"`      // the subject record; nil: none
	ProcessSkill  string       `json:"processSkill"` // the process skill's identifier at start
	Origin        string       `json:"origin"`       // the run that started the process
	Released      bool         `json:"released"`     // the process was let go: ended (item 7), or its pin withdrawn (then Pin is nil)
	Predecessor   string       `json:"predecessor"`  // the run this one continued ("" for a start)
	CarriedFrom   string       `json:"carriedFrom"`  // a refused continuation: the run whose lineage it would have carried
}

// Holds reports whether the lineage itself names a process it has not let go.
func (l Lineage) Holds() bool { return l.Pin != nil && !l.Released }

// ErrUnreadable is wrapped by Latest (and so by Preparer.Holds) when a
// stored lineage cannot be decoded: callers fail closed and refuse the
// continuation as lineage_unreadable rather than retrying it.
var ErrUnreadable = fault.New(fault.Conflict, "lineage_unreadable", "the process lineage of this run cannot be read")

// Store reads and writes lineages: the latest lineage event of a run counts.
type Store struct {
	runs *run.Store
}

// NewStore returns a lineage store over the run store.
func NewStore(runs *run.Store) *Store { return &Store{runs: runs} }

// Latest returns the run's latest lineage; ok is false when it has none (an
// unknown run has none). A lineage that cannot be decoded is an error
// wrapping ErrUnreadable; a failed read is any other error (callers fail
// closed either way).
func (s *Store) Latest(ctx context.Context, runUUID string) (Lineage, bool, error) {
	ev, ok, err := s.runs.LatestEvent(ctx, runUUID, run.EventLineage)
	if err != nil || !ok {
		return Lineage{}, false, err
	}
	l, err := decodeLineage(ev.Payload)
	if err != nil {
		return Lineage{}, false, fmt.Errorf("lineage of run %s: %w: %w", runUUID, ErrUnreadable, err)
	}
	return l, true, nil
}

// decodeLineage reads a stored lineage strictly, so that every shape of
// unreadable — not JSON, not one object, an unknown or wrongly typed field,
// a pin that names no skill, digest or origin — is an error and never reads
// as a lineage that holds nothing (L7.13).
func decodeLineage(b []byte) (Lineage, error) {
	var l Lineage
	b = bytes.TrimSpace(b)
	if len(b) == 0 || b[0] != '{' {
		return Lineage{}, errors.New("not a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&l); err != nil {
		return Lineage{}, err
	}
	if dec.More() {
		return Lineage{}, errors.New("data after the object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return Lineage{}, errors.New("data after the object")
	}
	switch {
	case l.Configuration <= 0:
		return Lineage{}, errors.New("no configuration")
	case l.Pin != nil && (l.Pin.Skill <= 0 || l.Pin.Digest == "" || l.Origin == ""):
		return Lineage{}, errors.New("a pin without skill, digest or origin")
	}
	return l, nil
}

// Append records a lineage for the run (stored whole at every privacy level).
func (s *Store) Append(ctx context.Context, runUUID string, l Lineage) error {
	_, err := s.runs.AppendEvent(ctx, runUUID, run.EventLineage, l, run.PrivacyMetadata)
	return err
}

// AppendTx is Append inside tx.
func (s *Store) AppendTx(ctx context.Context, tx *store.Tx, runUUID string, l Lineage) error {
	_, err := s.runs.AppendEventTx(ctx, tx, runUUID, run.NewEvent{Kind: run.EventLineage, Payload: l}, run.PrivacyMetadata)
	return err
}
