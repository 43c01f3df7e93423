package run

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"time"

	"waymark/internal/store"
)

// Kind is the kind of a run event (API §3).
type Kind string

// The event kinds.
const (
	EventRequest   Kind = "request"    // outbound half of a model round
	EventLLM       Kind = "llm"        // the model's response
	EventTool      Kind = "tool"       // one executed tool call
	EventToolWrite Kind = "tool_write" // the record a write produced, its completeness
	EventApproval  Kind = "approval"   // a decision: approved, decidedBy, reason
	EventInput     Kind = "input"      // input submitted: submittedBy, never the values
	EventProgress  Kind = "progress"   // current, total, completed
	EventHighlight Kind = "highlight"  // table and uid
	EventNotice    Kind = "notice"     // e.g. a dropped source with its reason
	EventContext   Kind = "context"    // per-round context window accounting
	EventStatus    Kind = "status"     // a status change
	EventLineage   Kind = "lineage"    // the run's lineage: ids and a digest only
)

// Kinds lists every event kind.
func Kinds() []Kind {
	return []Kind{EventRequest, EventLLM, EventTool, EventToolWrite, EventApproval, EventInput,
		EventProgress, EventHighlight, EventNotice, EventContext, EventStatus, EventLineage}
}

// Valid reports whether k is one of the kinds.
func (k Kind) Valid() bool {
	for _, v := range Kinds() {
		if k == v {
			return true
		}
	}
	return false
}

// alwaysStored reports whether k is stored even at PrivacyNone. A notice
// (a refusal, a dropped source) is a decision of the runtime told in codes
// and uids, like a status change: the run status must show it at every
// level (ADR-228 item 4).
func (k Kind) alwaysStored() bool {
	return k == EventLineage || k == EventStatus || k == EventToolWrite || k == EventApproval || k == EventNotice
}

// Event is one stored event of a run's stream.
type Event struct {
	Sequence  int64 // per run, strictly increasing from 1
	Kind      Kind
	Payload   json.RawMessage // a JSON object, as filtered at append
	CreatedAt time.Time
}

// AppendEvent appends an event to the run's stream. payload must marshal to
// a JSON object (or be nil, stored as {}); it passes through Filter at
// privacy before anything is written. The sequence is the run's counter
// incremented in the same transaction, so concurrent appenders never
// collide. A run that does not exist is ErrNotFound; bad input is ErrInvalid.
func (s *Store) AppendEvent(ctx context.Context, id string, kind Kind, payload any, privacy Privacy) (Event, error) {
	body, err := eventPayload(id, kind, payload, privacy)
	if err != nil {
		return Event{}, err
	}
	var ev Event
	err = s.db.InTx(ctx, func(tx *store.Tx) error {
		ev, err = s.appendEvent(ctx, tx, id, kind, body)
		return err
	})
	return ev, err
}

// AppendEventTx is AppendEvent of e inside tx, so the event commits with
// the transition it records. It locks the run row until tx ends.
func (s *Store) AppendEventTx(ctx context.Context, tx *store.Tx, id string, e NewEvent, privacy Privacy) (Event, error) {
	body, err := eventPayload(id, e.Kind, e.Payload, privacy)
	if err != nil {
		return Event{}, err
	}
	return s.appendEvent(ctx, tx, id, e.Kind, body)
}

// eventPayload validates and filters a payload into the JSON to store.
func eventPayload(id string, kind Kind, payload any, privacy Privacy) ([]byte, error) {
	if !kind.Valid() {
		return nil, invalid("event of", id, "unknown event kind %q", kind)
	}
	if !privacy.Valid() {
		return nil, invalid("event of", id, "unknown privacy level %q", privacy)
	}
	if m, ok := payload.(map[string]any); ok && kind != EventLineage && kind != EventProgress && kind != EventHighlight {
		// Spare the round trip below what the level drops anyway.
		switch privacy {
		case PrivacyFull:
			if m == nil {
				return []byte("{}"), nil
			}
			body, err := json.Marshal(m)
			if err != nil {
				return nil, invalid("event of", id, "payload does not marshal: %v", err)
			}
			return body, nil
		case PrivacyNone, PrivacyMetadata:
			if privacy == PrivacyNone && !kind.alwaysStored() {
				return []byte("{}"), nil
			}
			if b, ok := appendMetadataJSON(make([]byte, 0, 256), m); ok {
				return b, nil
			}
			// The metadata filter drops content keys with all they hold:
			// never convert them.
			payload = withoutContentKeys(m)
		}
	}
	m := map[string]any{}
	if payload != nil {
		v, err := generic(payload)
		if err != nil {
			return nil, invalid("event of", id, "payload does not marshal: %v", err)
		}
		switch v := v.(type) {
		case nil:
		case map[string]any:
			m = v
		default:
			return nil, invalid("event of", id, "payload is not a JSON object")
		}
	}
	body, err := json.Marshal(Filter(privacy, kind, m))
	if err != nil {
		return nil, fmt.Errorf("event of run %s: %w", id, err)
	}
	return body, nil
}

// withoutContentKeys is m without its top-level content keys, sharing the
// other values.
func withoutContentKeys(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if !contentKey(k) {
			out[k] = v
		}
	}
	return out
}

// generic turns v into the values encoding/json decodes into (maps, slices,
// strings, booleans, numbers, nil), as a JSON round trip with UseNumber
// would: plain maps, slices and scalars are converted directly, anything
// else (structs, types with their own MarshalJSON) goes through JSON. The
// result never shares a map or slice with v.
func generic(v any) (any, error) {
	switch v := v.(type) {
	case nil, string, bool, json.Number, int, int64, int32, uint, uint64, uint32:
		return v, nil
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			break // let encoding/json report it
		}
		return v, nil
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			g, err := generic(e)
			if err != nil {
				return nil, err
			}
			out[k] = g
		}
		return out, nil
	case []any:
		return genericSlice(v)
	case []map[string]any:
		return genericSlice(v)
	case []string:
		return genericSlice(v)
	case Status, Reason, Kind:
		return reflect.ValueOf(v).String(), nil
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		return nil, err
	}
	return out, nil
}

func genericSlice[E any](v []E) (any, error) {
	if v == nil {
		return nil, nil
	}
	out := make([]any, len(v))
	for i, e := range v {
		g, err := generic(e)
		if err != nil {
			return nil, err
		}
		out[i] = g
	}
	return out, nil
}

// NewEvent is one event to append with AppendEventsTx.
type NewEvent struct {
	Kind    Kind
	Payload any
	// Body, when set, is the payload already filtered and encoded by Encode
	// (so a caller can do that work before its transaction); Payload is then ignored.
	Body []byte
}

// Encode filters and encodes e's payload for privacy ahead of an append.
func Encode(id string, e NewEvent, privacy Privacy) (NewEvent, error) {
	if e.Body != nil {
		return e, nil
	}
	b, err := eventPayload(id, e.Kind, e.Payload, privacy)
	if err != nil {
		return NewEvent{}, err
	}
	return NewEvent{Kind: e.Kind, Body: b}, nil
}

// AppendEventsTx appends events in order inside tx, with one counter update
// and one insert: the batch form of AppendEventTx (same filtering and rules).
func (s *Store) AppendEventsTx(ctx context.Context, tx *store.Tx, id string, evs []NewEvent, privacy Privacy) error {
	return s.FlushTx(ctx, tx, id, Flush{Events: evs, Privacy: privacy})
}

// FlushTx commits f's events and adds its usage to the run's counters, in
// the same UPDATE that advances the event sequence (AppendEventsTx with
// usage). It does not check the lease: the caller's transaction carries the
// guarded transition (which can carry the flush itself).
func (s *Store) FlushTx(ctx context.Context, tx *store.Tx, id string, f Flush) error {
	if len(f.Events) == 0 && f.Usage == (Usage{}) {
		return nil
	}
	won, err := s.guarded(ctx, tx, id, update{op: "events of", set: "updated_at = updated_at", where: "TRUE", args: nil}, f)
	if err != nil {
		return err
	}
	if !won {
		return fmt.Errorf("events of run %s: %w", id, ErrNotFound)
	}
	return nil
}

// encodeAll filters and encodes the payloads of evs.
func encodeAll(id string, evs []NewEvent, privacy Privacy) ([][]byte, error) {
	bodies := make([][]byte, len(evs))
	for i, e := range evs {
		enc, err := Encode(id, e, privacy)
		if err != nil {
			return nil, err
		}
		bodies[i] = enc.Body
	}
	return bodies, nil
}

// insertEvents inserts evs (encoded as bodies) with the sequences that end at last, in one statement.
func (s *Store) insertEvents(ctx context.Context, q store.Querier, id string, last int64, evs []NewEvent, bodies [][]byte) error {
	now := store.Micros(s.clk.Now())
	var b strings.Builder
	b.WriteString("INSERT INTO run_events (run_uuid, sequence, kind, payload, created_at) VALUES ")
	args := make([]any, 0, 5*len(evs))
	first := last - int64(len(evs)) + 1
	for i, e := range evs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString("(?, ?, ?, ?, ?)")
		args = append(args, id, first+int64(i), string(e.Kind), string(bodies[i]), now)
	}
	if _, err := q.Exec(ctx, b.String(), args...); err != nil {
		return fmt.Errorf("events of run %s: %w", id, err)
	}
	return nil
}

func (s *Store) appendEvent(ctx context.Context, tx *store.Tx, id string, kind Kind, body []byte) (Event, error) {
	var seq int64
	err := tx.QueryRow(ctx, `UPDATE runs SET event_sequence = event_sequence + 1 WHERE uuid = ?
		RETURNING event_sequence`, id).Scan(&seq)
	if errors.Is(err, sql.ErrNoRows) {
		return Event{}, fmt.Errorf("event of run %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return Event{}, fmt.Errorf("event of run %s: %w", id, err)
	}
	now := s.clk.Now()
	if _, err := tx.Exec(ctx, `INSERT INTO run_events (run_uuid, sequence, kind, payload, created_at)
		VALUES (?, ?, ?, ?, ?)`, id, seq, string(kind), string(body), store.Micros(now)); err != nil {
		return Event{}, fmt.Errorf("event of run %s: %w", id, err)
	}
	return Event{Sequence: seq, Kind: kind, Payload: body, CreatedAt: store.Time(store.Micros(now))}, nil
}

// Events returns the run's events with a sequence above after, in order, at
// most limit of them (limit <= 0: all). An unknown run has no events.
func (s *Store) Events(ctx context.Context, id string, after int64, limit int) ([]Event, error) {
	q := `SELECT sequence, kind, payload, created_at FROM run_events WHERE run_uuid = ? AND sequence > ?
		ORDER BY sequence`
	args := []any{id, after}
	if limit > 0 {
		q += ` LIMIT ?`
		args = append(args, limit)
	}
	out, err := store.Collect(ctx, s.db, scanEvent, q, args...)
	if err != nil {
		return nil, fmt.Errorf("events of run %s: %w", id, err)
	}
	return out, nil
}

// EventsOfKinds returns the run's events of the given kinds, in order.
func (s *Store) EventsOfKinds(ctx context.Context, id string, kinds ...Kind) ([]Event, error) {
	if len(kinds) == 0 {
		return nil, nil
	}
	q := `SELECT sequence, kind, payload, created_at FROM run_events WHERE run_uuid = ? AND kind IN (`
	args := []any{id}
	for i, k := range kinds {
		if i > 0 {
			q += ", "
		}
		q += "?"
		args = append(args, string(k))
	}
	out, err := store.Collect(ctx, s.db, scanEvent, q+`) ORDER BY sequence`, args...)
	if err != nil {
		return nil, fmt.Errorf("events of run %s: %w", id, err)
	}
	return out, nil
}

// EventsOfKindsAndFirst returns, in order, the run's events of the given
// kinds and its first event whatever its kind — what a status view reads
// (its progress, highlight and notices, and the opening request) — in one
// statement. The first of them is the run's first event when it has any.
func (s *Store) EventsOfKindsAndFirst(ctx context.Context, id string, kinds ...Kind) ([]Event, error) {
	q := `SELECT sequence, kind, payload, created_at FROM run_events WHERE run_uuid = ? AND (sequence =
		(SELECT MIN(sequence) FROM run_events WHERE run_uuid = ?)`
	args := []any{id, id}
	if len(kinds) > 0 {
		q += ` OR kind IN (` + strings.TrimSuffix(strings.Repeat("?, ", len(kinds)), ", ") + `)`
		for _, k := range kinds {
			args = append(args, string(k))
		}
	}
	out, err := store.Collect(ctx, s.db, scanEvent, q+`) ORDER BY sequence`, args...)
	if err != nil {
		return nil, fmt.Errorf("events of run %s: %w", id, err)
	}
	return out, nil
}

// blankRunColumns stand in for runColumns in the event rows of GetWithEvents.
const blankRunColumns = `'', 0, 0, '', '', '', '', 0, 0, 0, '', 0, 0, '', '', '', 'null', '', 0, 0, 0`

// GetWithEvents is Get with the events EventsOfKindsAndFirst reads (in
// Run.Events), in one statement: the run's row, then its first event and
// its events of kinds, oldest first. ErrNotFound when there is no run.
func (s *Store) GetWithEvents(ctx context.Context, id string, kinds ...Kind) (Run, error) {
	q := `SELECT 0, ` + runColumns + `, 0, '', '', 0 FROM runs WHERE uuid = ?
		UNION ALL
		SELECT 1, ` + blankRunColumns + `, sequence, kind, payload, created_at FROM run_events WHERE run_uuid = ? AND (sequence =
		(SELECT MIN(sequence) FROM run_events WHERE run_uuid = ?)`
	args := []any{id, id, id}
	if len(kinds) > 0 {
		q += ` OR kind IN (` + strings.TrimSuffix(strings.Repeat("?, ", len(kinds)), ", ") + `)`
		for _, k := range kinds {
			args = append(args, string(k))
		}
	}
	rows, err := s.db.Query(ctx, q+`) ORDER BY 1, 23`, args...)
	if err != nil {
		return Run{}, fmt.Errorf("run %s: %w", id, err)
	}
	defer rows.Close()
	var (
		r     Run
		found bool
	)
	events := []Event{}
	for rows.Next() {
		var (
			part          int
			ev            Event
			kind, payload string
			created       int64
		)
		row, err := scanRun(withColumns{rows, []any{&part}, []any{&ev.Sequence, &kind, &payload, &created}})
		if err != nil {
			return Run{}, fmt.Errorf("run %s: %w", id, err)
		}
		if part == 0 {
			r, found = row, true
			continue
		}
		ev.Kind, ev.Payload, ev.CreatedAt = Kind(kind), json.RawMessage(payload), store.Time(created)
		events = append(events, ev)
	}
	if err := rows.Err(); err != nil {
		return Run{}, fmt.Errorf("run %s: %w", id, err)
	}
	if !found {
		return Run{}, fmt.Errorf("run %s: %w", id, ErrNotFound)
	}
	r.Events = events
	return r, nil
}

// withColumns scans a row with columns before and after those its
// destinations take.
type withColumns struct {
	sc            scanner
	before, after []any
}

func (w withColumns) Scan(dest ...any) error {
	all := make([]any, 0, len(w.before)+len(dest)+len(w.after))
	all = append(append(append(all, w.before...), dest...), w.after...)
	return w.sc.Scan(all...)
}

// LatestEvent returns the run's newest event of kind; ok is false when it
// has none.
func (s *Store) LatestEvent(ctx context.Context, id string, kind Kind) (ev Event, ok bool, err error) {
	ev, err = scanEvent(s.db.QueryRow(ctx, `SELECT sequence, kind, payload, created_at FROM run_events
		WHERE run_uuid = ? AND kind = ? ORDER BY sequence DESC LIMIT 1`, id, string(kind)))
	if errors.Is(err, sql.ErrNoRows) {
		return Event{}, false, nil
	}
	if err != nil {
		return Event{}, false, fmt.Errorf("latest %s event of run %s: %w", kind, id, err)
	}
	return ev, true, nil
}

func scanEvent(sc scanner) (Event, error) {
	var (
		ev            Event
		kind, payload string
		created       int64
	)
	if err := sc.Scan(&ev.Sequence, &kind, &payload, &created); err != nil {
		return Event{}, err
	}
	ev.Kind, ev.Payload, ev.CreatedAt = Kind(kind), json.RawMessage(payload), store.Time(created)
	return ev, nil
}
