// Package cost answers what the model calls cost: the usage rows the run
// store records at each flush of a run's tokens (run_usage, priced with the
// configuration's prices per million input and output tokens when they are
// recorded), summed per run (a card), per conversation (a tour) and per
// month and configuration (the administrators' report).
package cost

import (
	"context"
	"fmt"
	"time"

	"waymark/internal/fault"
	"waymark/internal/store"
)

// Total is the tokens in and out of some model calls and their price.
type Total struct {
	PromptTokens     int64   `json:"promptTokens"`
	CompletionTokens int64   `json:"completionTokens"`
	Cost             float64 `json:"cost"` // in the configuration's currency; 0 when not priced
}

// Reader reads the recorded usage.
type Reader struct{ db *store.DB }

// New returns the reader of db's usage rows.
func New(db *store.DB) *Reader { return &Reader{db: db} }

func (r *Reader) sum(ctx context.Context, where string, arg any) (Total, error) {
	var t Total
	err := r.db.QueryRow(ctx, `SELECT COALESCE(SUM(prompt_tokens), 0), COALESCE(SUM(completion_tokens), 0), COALESCE(SUM(cost), 0)
		FROM run_usage WHERE `+where, arg).Scan(&t.PromptTokens, &t.CompletionTokens, &t.Cost)
	if err != nil {
		return Total{}, fmt.Errorf("usage: %w", err)
	}
	t.Cost = round(t.Cost)
	return t, nil
}

// OfRun is what run uuid's model calls cost so far: a card's cost is its run's.
func (r *Reader) OfRun(ctx context.Context, uuid string) (Total, error) {
	return r.sum(ctx, "run_uuid = ?", uuid)
}

// OfConversation is what the model calls of conversation id's turns cost:
// a tour's cost.
func (r *Reader) OfConversation(ctx context.Context, id int64) (Total, error) {
	return r.sum(ctx, "conversation_id = ?", id)
}

// Line is a month's usage of one configuration.
type Line struct {
	Configuration int64  `json:"configuration"`
	Identifier    string `json:"identifier"` // "" when the configuration is gone
	Name          string `json:"name"`
	Model         string `json:"model"` // the model of the latest call
	Calls         int64  `json:"calls"` // recorded usages (one per run segment)
	Total
}

// Report is a month's usage per configuration, in UTC.
type Report struct {
	Month         string `json:"month"` // YYYY-MM
	From          string `json:"from"`  // RFC 3339, inclusive
	To            string `json:"to"`    // RFC 3339, exclusive
	Configuration []Line `json:"configurations"`
	Total         Total  `json:"total"`
}

// ErrBadMonth answers a month that is not YYYY-MM.
var ErrBadMonth = fault.New(fault.Invalid, "bad_month", "month: want YYYY-MM")

// ParseMonth reads "YYYY-MM" ("" is the month of now, in UTC).
func ParseMonth(s string, now time.Time) (time.Time, error) {
	if s == "" {
		n := now.UTC()
		return time.Date(n.Year(), n.Month(), 1, 0, 0, 0, 0, time.UTC), nil
	}
	t, err := time.Parse("2006-01", s)
	if err != nil || t.Year() < 2000 || t.Year() > 9999 {
		return time.Time{}, ErrBadMonth.With("month: want YYYY-MM, got %q", s)
	}
	return t, nil
}

// Month is the usage of the month starting at from, per configuration by uid.
func (r *Reader) Month(ctx context.Context, from time.Time) (Report, error) {
	to := from.AddDate(0, 1, 0)
	rep := Report{Month: from.Format("2006-01"), From: from.Format(time.RFC3339), To: to.Format(time.RFC3339), Configuration: []Line{}}
	lines, err := store.Collect(ctx, r.db, func(sc store.Scanner) (Line, error) {
		var l Line
		err := sc.Scan(&l.Configuration, &l.Identifier, &l.Name, &l.Model, &l.Calls, &l.PromptTokens, &l.CompletionTokens, &l.Cost)
		l.Cost = round(l.Cost)
		return l, err
	}, `SELECT u.configuration, COALESCE(c.identifier, ''), COALESCE(c.name, ''),
			COALESCE((SELECT l.model FROM run_usage l WHERE l.configuration = u.configuration ORDER BY l.id DESC LIMIT 1), ''),
			COUNT(*), SUM(u.prompt_tokens), SUM(u.completion_tokens), SUM(u.cost)
		FROM run_usage u LEFT JOIN configurations c ON c.uid = u.configuration
		WHERE u.created_at >= ? AND u.created_at < ?
		GROUP BY u.configuration, c.identifier, c.name ORDER BY u.configuration`, store.Micros(from), store.Micros(to))
	if err != nil {
		return Report{}, fmt.Errorf("usage of %s: %w", rep.Month, err)
	}
	for _, l := range lines {
		rep.Configuration = append(rep.Configuration, l)
		rep.Total.PromptTokens += l.PromptTokens
		rep.Total.CompletionTokens += l.CompletionTokens
		rep.Total.Cost += l.Cost
	}
	rep.Total.Cost = round(rep.Total.Cost)
	return rep, nil
}

// round keeps a cost to a millionth of the currency (sums of floats).
func round(c float64) float64 { return float64(int64(c*1e6+0.5)) / 1e6 }
