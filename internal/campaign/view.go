package campaign

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"waymark/internal/access"
	"waymark/internal/cost"
	"waymark/internal/store"
)

// View is a campaign as the API shows it.
type View struct {
	ID            int64           `json:"id"`
	Owner         int64           `json:"owner"`
	Process       int64           `json:"process"`
	Configuration int64           `json:"configuration"`
	RootPage      int64           `json:"rootPage"`
	Depth         int             `json:"depth"`
	Filter        string          `json:"filter"`
	Languages     []int64         `json:"languages"`
	Budget        json.RawMessage `json:"budget"` // a number, or null
	Concurrency   int             `json:"concurrency"`
	State         State           `json:"state"`
	Counts        Counts          `json:"counts"`
	// EstimatedSecondsLeft is the time the pages not yet worked would take
	// at the mean time of the pages worked so far, at the campaign's
	// concurrency; null until one page was worked or when none is left.
	EstimatedSecondsLeft *int64 `json:"estimatedSecondsLeft"`
	// Spent is what the campaign's tours cost so far (their recorded model
	// usage, in the configuration's currency), to set against Budget.
	Spent cost.Total `json:"spent"`
	// WaitsForAnswers: a running campaign with pages left starts none now
	// because the owner's tours waiting at their cards fill her open runs
	// (Config.MaxOpenRuns); answering cards lets it go on.
	WaitsForAnswers bool      `json:"waitsForAnswers"`
	CreatedAt       time.Time `json:"createdAt"`
	UpdatedAt       time.Time `json:"updatedAt"`
}

// Counts are a campaign's items by state.
type Counts struct {
	Total     int `json:"total"`
	Pending   int `json:"pending"`
	Running   int `json:"running"`
	Proposals int `json:"proposals"` // pages whose tour waits for an answer
	Skipped   int `json:"skipped"`
	Failed    int `json:"failed"`
	Done      int `json:"done"`
}

// row is a campaign row.
type row struct {
	View
	languages string
	budget    string
}

const campaignColumns = `id, owner_uid, skill_uid, configuration_uid, root_page, depth, filter, languages, budget, concurrency, state, created_at, updated_at`

func scanCampaign(sc store.Scanner) (row, error) {
	var r row
	var created, updated int64
	var state string
	err := sc.Scan(&r.ID, &r.Owner, &r.Process, &r.Configuration, &r.RootPage, &r.Depth, &r.Filter, &r.languages, &r.budget,
		&r.Concurrency, &state, &created, &updated)
	if err != nil {
		return row{}, err
	}
	r.State, r.CreatedAt, r.UpdatedAt = State(state), store.Time(created), store.Time(updated)
	_ = json.Unmarshal([]byte(r.languages), &r.Languages)
	if r.budget != "" {
		r.Budget = json.RawMessage(r.budget)
	} else {
		r.Budget = json.RawMessage("null")
	}
	return r, nil
}

func getRow(ctx context.Context, q store.Querier, id int64) (row, error) {
	r, err := scanCampaign(q.QueryRow(ctx, "SELECT "+campaignColumns+" FROM campaigns WHERE id = ?", id))
	if errors.Is(err, sql.ErrNoRows) {
		return row{}, ErrNotFound
	}
	return r, err
}

// visible loads campaign id for a: its owner's and administrators'; any
// other caller gets ErrNotFound, as for an unknown campaign.
func (s *Service) visible(ctx context.Context, a *access.Actor, id int64) (row, error) {
	if id <= 0 {
		return row{}, ErrNotFound
	}
	r, err := getRow(ctx, s.d.DB, id)
	if err != nil {
		return row{}, err
	}
	if r.Owner != a.UID && !a.IsAdmin() {
		return row{}, ErrNotFound
	}
	return r, nil
}

// Get returns campaign id with its counts, for its owner or an administrator.
func (s *Service) Get(ctx context.Context, a *access.Actor, id int64) (View, error) {
	r, err := s.visible(ctx, a, id)
	if err != nil {
		return View{}, err
	}
	// The tours of pages with proposals go on as their cards are answered:
	// what they became is read from their conversations.
	if err := s.settleWaiting(ctx, r); err != nil {
		return View{}, err
	}
	return s.view(ctx, r)
}

// List returns the caller's campaigns, newest first (an administrator's:
// every campaign).
func (s *Service) List(ctx context.Context, a *access.Actor) ([]View, error) {
	q, args := "SELECT "+campaignColumns+" FROM campaigns WHERE owner_uid = ? ORDER BY id DESC LIMIT 200", []any{a.UID}
	if a.IsAdmin() {
		q, args = "SELECT "+campaignColumns+" FROM campaigns ORDER BY id DESC LIMIT 200", nil
	}
	rows, err := store.Collect(ctx, s.d.DB, scanCampaign, q, args...)
	if err != nil {
		return nil, err
	}
	out := make([]View, 0, len(rows))
	for _, r := range rows {
		v, err := s.view(ctx, r)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// view adds the counts and the estimate to r.
func (s *Service) view(ctx context.Context, r row) (View, error) {
	v := r.View
	rows, err := s.d.DB.Query(ctx, `SELECT state, COUNT(*), SUM(CASE WHEN finished_at > 0 AND started_at > 0 THEN finished_at - started_at ELSE 0 END),
		SUM(CASE WHEN finished_at > 0 AND started_at > 0 THEN 1 ELSE 0 END) FROM campaign_items WHERE campaign_id = ? GROUP BY state`, r.ID)
	if err != nil {
		return View{}, err
	}
	defer rows.Close()
	var took, timed int64
	for rows.Next() {
		var state string
		var n int
		var sum, cnt sql.NullInt64
		if err := rows.Scan(&state, &n, &sum, &cnt); err != nil {
			return View{}, err
		}
		took, timed = took+sum.Int64, timed+cnt.Int64
		v.Counts.Total += n
		switch ItemState(state) {
		case ItemPending:
			v.Counts.Pending = n
		case ItemRunning:
			v.Counts.Running = n
		case ItemProposals:
			v.Counts.Proposals = n
		case ItemSkipped:
			v.Counts.Skipped = n
		case ItemFailed:
			v.Counts.Failed = n
		case ItemDone:
			v.Counts.Done = n
		}
	}
	if err := rows.Err(); err != nil {
		return View{}, err
	}
	if v.Spent, err = spent(ctx, s.d.DB, r.ID); err != nil {
		return View{}, err
	}
	if v.State == Running && v.Counts.Pending > 0 {
		room, err := s.runRoom(ctx, r.Owner)
		if err != nil {
			return View{}, err
		}
		v.WaitsForAnswers = room <= 0
	}
	if left := v.Counts.Pending + v.Counts.Running; timed > 0 && left > 0 && (v.State == Running || v.State == Paused) {
		mean := took / timed // microseconds a page's tour took to its first card
		est := mean * int64(left) / int64(max(v.Concurrency, 1)) / 1e6
		v.EstimatedSecondsLeft = &est
	}
	return v, nil
}

// ItemView is one page of a campaign in one language, with its state and
// the reason it was skipped or failed.
type ItemView struct {
	Page         int64     `json:"page"`
	Language     int64     `json:"language"`
	Conversation int64     `json:"conversation"`
	State        ItemState `json:"state"`
	Reason       string    `json:"reason"`
}

// Items lists up to limit items of campaign id in state st, in page-tree
// order, for its owner or an administrator (the web page's skipped pages
// and their reasons).
func (s *Service) Items(ctx context.Context, a *access.Actor, id int64, st ItemState, limit int) ([]ItemView, error) {
	r, err := s.visible(ctx, a, id)
	if err != nil {
		return nil, err
	}
	items, err := store.Collect(ctx, s.d.DB, scanItem, "SELECT "+itemColumns+" FROM campaign_items WHERE campaign_id = ? AND state = ? ORDER BY position LIMIT ?",
		r.ID, string(st), limit)
	if err != nil {
		return nil, err
	}
	out := make([]ItemView, 0, len(items))
	for _, it := range items {
		out = append(out, ItemView{Page: it.Page, Language: it.Language, Conversation: it.Conversation, State: it.State, Reason: it.Reason})
	}
	return out, nil
}
