package invariant

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"waymark/internal/clock"
	"waymark/internal/run"
	"waymark/internal/store"
)

// The checks, as Violation.Check names them.
const (
	// WriteOnce: a write call ran at most once — one tool event with a write
	// step per call id, and no more history rows of a run for a field than
	// the run has approvals (§6 invariant 2).
	WriteOnce = "write_once"
	// ApprovedWrite: every write of a run follows an approval of the turn it
	// belongs to (§6 invariant 1).
	ApprovedWrite = "approved_write"
	// RunState: every run is terminal, waiting with its suspended turn
	// stored, running, or queued with a job that will work it (§6
	// invariant 3).
	RunState = "run_state"
	// RunLease: no run is running without a live lease.
	RunLease = "run_lease"
	// ConversationStuck: no conversation is processing without a chat job
	// or a live run that will move it on.
	ConversationStuck = "conversation_stuck"
	// OpenPoint: every accepted skip has its open points unless a later
	// applied write or keep on the same field closed them (§6 invariant 9,
	// ADR-022 P.R2, P.C1, P.K1), and every skip the runtime accepted in a
	// conversation's process run has its outcome recorded.
	OpenPoint = "open_point"
	// Privacy: at the levels metadata and none, stored events hold only what
	// the metadata filter keeps, and no run keeps its answer (§6 invariant 10).
	Privacy = "privacy"
)

// Violation is one broken invariant found in the stored rows.
type Violation struct {
	Check   string // one of the check names above
	Subject string // what broke it: "run <uuid>", "conversation <id>"
	Detail  string
}

func (v Violation) String() string { return v.Check + ": " + v.Subject + ": " + v.Detail }

// Config tunes a Checker. The zero value is the default.
type Config struct {
	// Clock decides whether a lease is live (default: the real clock).
	Clock clock.Clock
}

// Checker audits one database.
type Checker struct {
	db  *store.DB
	clk clock.Clock
}

// New returns a checker of db.
func New(db *store.DB, cfg *Config) *Checker {
	var c Config
	if cfg != nil {
		c = *cfg
	}
	return &Checker{db: db, clk: cmp.Or[clock.Clock](c.Clock, clock.Real{})}
}

// Check reads the database once and returns every violation found, sorted
// by check and subject; an error only when the rows cannot be read.
func (c *Checker) Check(ctx context.Context) ([]Violation, error) {
	s, err := c.load(ctx)
	if err != nil {
		return nil, fmt.Errorf("invariant: %w", err)
	}
	var out []Violation
	for _, check := range []func(*snapshot) []Violation{checkWrites, checkRuns, checkConversations, checkOpenPoints, checkPrivacy} {
		out = append(out, check(s)...)
	}
	slices.SortStableFunc(out, func(a, b Violation) int {
		return cmp.Or(strings.Compare(a.Check, b.Check), strings.Compare(a.Subject, b.Subject))
	})
	return out, nil
}

// Describe is the violations one per line, for a test failure message.
func Describe(vs []Violation) string {
	var b strings.Builder
	for _, v := range vs {
		b.WriteString("\n  ")
		b.WriteString(v.String())
	}
	return b.String()
}

// snapshot is what the checks read.
type snapshot struct {
	now      time.Time
	runs     map[string]*runRow
	order    []string // run uuids, sorted
	history  []historyRow
	convs    []convRow
	outcomes []outcomeRow
	points   map[pointKey]bool
	// jobs are the river_job rows not finished: run uuids and conversation ids.
	runJobs  map[string]bool
	chatJobs map[int64]bool
}

type runRow struct {
	uuid, status, leaseOwner, suspended, answer, privacy string
	leaseExpires                                         int64
	events                                               []event
}

type event struct {
	seq     int64
	kind    run.Kind
	raw     []byte
	payload map[string]any
	bad     bool // the payload is not a JSON object
}

type historyRow struct {
	run, table, field string
	uid               int64
}

type convRow struct {
	id, skill, page    int64
	process            bool
	status, pendingRun string
	lastRun            string
}

type outcomeRow struct {
	id, conv, uid int64
	run, outcome  string
	table         string
	fields        []string
}

type pointKey struct {
	skill, page int64
	table       string
	uid         int64
	field       string
}

func (c *Checker) load(ctx context.Context) (*snapshot, error) {
	s := &snapshot{now: c.clk.Now(), runs: map[string]*runRow{}, points: map[pointKey]bool{},
		runJobs: map[string]bool{}, chatJobs: map[int64]bool{}}
	runs, err := store.Collect(ctx, c.db, func(sc store.Scanner) (*runRow, error) {
		r := &runRow{}
		return r, sc.Scan(&r.uuid, &r.status, &r.leaseOwner, &r.leaseExpires, &r.suspended, &r.answer, &r.privacy)
	}, `SELECT r.uuid, r.status, r.lease_owner, r.lease_expires_at, r.suspended, r.answer, COALESCE(c.privacy, '')
		FROM runs r LEFT JOIN configurations c ON c.uid = r.configuration ORDER BY r.uuid`)
	if err != nil {
		return nil, fmt.Errorf("runs: %w", err)
	}
	for _, r := range runs {
		s.runs[r.uuid] = r
		s.order = append(s.order, r.uuid)
	}
	type evRow struct {
		run string
		ev  event
	}
	evs, err := store.Collect(ctx, c.db, func(sc store.Scanner) (evRow, error) {
		var e evRow
		var payload string
		if err := sc.Scan(&e.run, &e.ev.seq, &e.ev.kind, &payload); err != nil {
			return e, err
		}
		e.ev.raw = []byte(payload)
		return e, nil
	}, "SELECT run_uuid, sequence, kind, payload FROM run_events ORDER BY run_uuid, sequence")
	if err != nil {
		return nil, fmt.Errorf("run events: %w", err)
	}
	for _, e := range evs {
		d := json.NewDecoder(bytes.NewReader(e.ev.raw))
		d.UseNumber()
		if err := d.Decode(&e.ev.payload); err != nil || e.ev.payload == nil {
			e.ev.payload, e.ev.bad = map[string]any{}, true // Privacy reports it
		}
		if r := s.runs[e.run]; r != nil {
			r.events = append(r.events, e.ev)
		}
	}
	if s.history, err = store.Collect(ctx, c.db, func(sc store.Scanner) (historyRow, error) {
		var h historyRow
		return h, sc.Scan(&h.run, &h.table, &h.uid, &h.field)
	}, "SELECT run_uuid, tbl, uid, field FROM record_history WHERE run_uuid <> '' ORDER BY id"); err != nil {
		return nil, fmt.Errorf("record history: %w", err)
	}
	if s.convs, err = store.Collect(ctx, c.db, func(sc store.Scanner) (convRow, error) {
		var v convRow
		return v, sc.Scan(&v.id, &v.skill, &v.page, &v.process, &v.status, &v.pendingRun, &v.lastRun)
	}, "SELECT id, skill_uid, page_uid, process, status, pending_run_uuid, last_run_uuid FROM conversations ORDER BY id"); err != nil {
		return nil, fmt.Errorf("conversations: %w", err)
	}
	if s.outcomes, err = store.Collect(ctx, c.db, func(sc store.Scanner) (outcomeRow, error) {
		var o outcomeRow
		var fields string
		if err := sc.Scan(&o.id, &o.conv, &o.run, &o.outcome, &o.table, &o.uid, &fields); err != nil {
			return o, err
		}
		if err := json.Unmarshal([]byte(fields), &o.fields); err != nil {
			return o, fmt.Errorf("outcome %d: fields %q: %w", o.id, fields, err)
		}
		return o, nil
	}, "SELECT id, conversation_id, run_uuid, outcome, tbl, uid, fields FROM conversation_outcomes ORDER BY id"); err != nil {
		return nil, fmt.Errorf("outcomes: %w", err)
	}
	points, err := store.Collect(ctx, c.db, func(sc store.Scanner) (pointKey, error) {
		var k pointKey
		return k, sc.Scan(&k.skill, &k.page, &k.table, &k.uid, &k.field)
	}, "SELECT skill_uid, page_uid, tbl, uid, field FROM open_points")
	if err != nil {
		return nil, fmt.Errorf("open points: %w", err)
	}
	for _, k := range points {
		s.points[k] = true
	}
	return s, c.loadJobs(ctx, s)
}

// loadJobs reads River's unfinished jobs, if the queue's tables exist.
func (c *Checker) loadJobs(ctx context.Context, s *snapshot) error {
	exists := "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = 'river_job'"
	if c.db.Dialect() == store.Postgres {
		exists = "SELECT COUNT(*) FROM pg_tables WHERE tablename = 'river_job' AND schemaname = current_schema()"
	}
	var n int
	if err := c.db.QueryRow(ctx, exists).Scan(&n); err != nil {
		return fmt.Errorf("river_job: %w", err)
	}
	if n == 0 {
		return nil
	}
	type job struct{ kind, args string }
	jobs, err := store.Collect(ctx, c.db, func(sc store.Scanner) (job, error) {
		var j job
		return j, sc.Scan(&j.kind, &j.args)
	}, `SELECT kind, CAST(args AS TEXT) FROM river_job
		WHERE state IN ('available', 'scheduled', 'retryable', 'running', 'pending')`)
	if err != nil {
		return fmt.Errorf("river jobs: %w", err)
	}
	for _, j := range jobs {
		var a struct {
			Run string          `json:"run"`
			Job json.RawMessage `json:"job"`
		}
		if json.Unmarshal([]byte(j.args), &a) != nil {
			continue
		}
		switch j.kind {
		case "waymark_run":
			s.runJobs[a.Run] = true
		case "waymark_chat":
			var cj struct {
				Conversation int64 `json:"conversation"`
			}
			if json.Unmarshal(a.Job, &cj) == nil {
				s.chatJobs[cj.Conversation] = true
			}
		}
	}
	return nil
}

// str is a payload's string value of key ("" when missing or not a string).
func (e event) str(key string) string {
	v, _ := e.payload[key].(string)
	return v
}

// flag is a payload's boolean value of key and whether it is there.
func (e event) flag(key string) (bool, bool) {
	v, ok := e.payload[key].(bool)
	return v, ok
}

func runSubject(uuid string) string { return "run " + uuid }
