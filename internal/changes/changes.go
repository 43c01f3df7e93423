// Package changes exports every applied change — the record an agency hands
// its client: each field a write changed with its old and new value, the
// page and language it is on, the model and configuration that proposed
// it, the process skill and its approved version digest (the run's
// lineage pin), who answered the card and who released it under four eyes,
// and when. It reads the write history Waymark keeps of the changes it
// writes into its own records (record_history) and into the CMS beside it
// (cms_changes: TYPO3, through the extension or directly), joined with the
// run that made them.
package changes

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"waymark/internal/fault"
	"waymark/internal/store"
)

// Change is one changed field.
type Change struct {
	At            time.Time `json:"at"`
	Page          int64     `json:"page"` // the default-language page the record is (on)
	Language      int64     `json:"language"`
	Table         string    `json:"table"`
	UID           int64     `json:"uid"`
	Field         string    `json:"field"`
	Old           string    `json:"oldValue"`
	New           string    `json:"newValue"`
	Run           string    `json:"run"` // "" for a change made outside a run
	Model         string    `json:"model"`
	Configuration int64     `json:"configuration"`
	ConfigName    string    `json:"configurationIdentifier"`
	Skill         int64     `json:"skill"` // 0: no process skill
	SkillName     string    `json:"skillIdentifier"`
	SkillDigest   string    `json:"skillDigest"` // the approved version the run was pinned to
	AnsweredBy    string    `json:"answeredBy"`  // who applied it (username)
	ReleasedBy    string    `json:"releasedBy"`  // the second person under four eyes; "" none
}

// Filter narrows the export. Zero values filter nothing.
type Filter struct {
	Page     int64     // the changes on this page (its own fields and its records')
	Pages    []int64   // the changes on these pages (a site: its pages); nil: all
	From, To time.Time // From inclusive, To exclusive
	Actor    int64     // the changes this user answered or released; 0: everyone's
}

// The bad-input errors of an export, each a 400 with its code.
var (
	ErrBadFormat = fault.New(fault.Invalid, "bad_format", "format: want csv or json")
	ErrBadTime   = fault.New(fault.Invalid, "bad_time", "time: want RFC 3339 or YYYY-MM-DD")
	ErrBadPage   = fault.New(fault.Invalid, "bad_page", "page: want a positive page uid")
)

// ParseTime reads an RFC 3339 time or a date (midnight UTC); "" is zero.
func ParseTime(name, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse("2006-01-02", s); err == nil {
		return t, nil
	}
	return time.Time{}, ErrBadTime.With("%s: want RFC 3339 (2026-12-01T00:00:00Z) or YYYY-MM-DD, got %q", name, s)
}

// maxRows bounds one export.
const maxRows = 100000

// List returns the applied changes that pass f, oldest first.
func List(ctx context.Context, db *store.DB, f Filter) ([]Change, error) {
	where, args := "1 = 1", []any{}
	if !f.From.IsZero() {
		where, args = where+" AND h.created_at >= ?", append(args, store.Micros(f.From))
	}
	if !f.To.IsZero() {
		where, args = where+" AND h.created_at < ?", append(args, store.Micros(f.To))
	}
	type row struct {
		Change
		user, initiator    int64
		lineage, approvals string
		userName           string
	}
	// The changes Waymark wrote into its own records (record_history, the
	// page and language read from the record) and those it wrote into the
	// CMS beside it (cms_changes, with the page and language the record was
	// on at the write: the record is the CMS's), in the order they were made.
	branch := func(from, page, language string) string {
		return `SELECT h.created_at, h.id, h.tbl, h.uid, h.field, h.old_value, h.new_value, h.user_uid, h.run_uuid, ` + page + `, ` + language + `,
			COALESCE(r.configuration, 0), COALESCE(c.identifier, ''), COALESCE(c.model, ''),
			COALESCE((SELECT e.payload FROM run_events e WHERE e.run_uuid = h.run_uuid AND e.kind = 'lineage' ORDER BY e.sequence DESC LIMIT 1), ''),
			COALESCE((SELECT e.payload FROM run_events e WHERE e.run_uuid = h.run_uuid AND e.kind = 'approval' ORDER BY e.sequence DESC LIMIT 1), ''),
			COALESCE(u.username, ''), COALESCE(r.initiator, 0)
		FROM ` + from + `
		LEFT JOIN runs r ON r.uuid = h.run_uuid
		LEFT JOIN configurations c ON c.uid = r.configuration
		LEFT JOIN be_users u ON u.uid = h.user_uid
		WHERE ` + where
	}
	rows, err := store.Collect(ctx, db, func(sc store.Scanner) (row, error) {
		var r row
		var at, id int64
		err := sc.Scan(&at, &id, &r.Table, &r.UID, &r.Field, &r.Old, &r.New, &r.user, &r.Run, &r.Page, &r.Language,
			&r.Configuration, &r.ConfigName, &r.Model, &r.lineage, &r.approvals, &r.userName, &r.initiator)
		r.At = store.Time(at).UTC()
		return r, err
	}, branch("record_history h LEFT JOIN records rec ON rec.tbl = h.tbl AND rec.uid = h.uid",
		"COALESCE(CASE WHEN rec.tbl = 'pages' THEN (CASE WHEN rec.l10n_parent > 0 THEN rec.l10n_parent ELSE rec.uid END) ELSE rec.pid END, 0)",
		"COALESCE(rec.language, 0)")+`
		UNION ALL `+branch("cms_changes h", "h.page_uid", "h.language")+`
		ORDER BY 1, 2 LIMIT `+fmt.Sprint(maxRows), append(args, args...)...)
	if err != nil {
		return nil, fmt.Errorf("changes: %w", err)
	}
	var pages map[int64]bool
	if f.Pages != nil {
		pages = map[int64]bool{}
		for _, p := range f.Pages {
			pages[p] = true
		}
	}
	names := map[int64]string{}
	out := []Change{}
	for _, r := range rows {
		if (f.Page > 0 && r.Page != f.Page) || (pages != nil && !pages[r.Page]) {
			continue
		}
		c := r.Change
		c.AnsweredBy = r.userName
		var lin struct {
			Pin *struct {
				Skill  int64  `json:"skill"`
				Digest string `json:"digest"`
			} `json:"pin"`
			ProcessSkill string `json:"processSkill"`
		}
		if json.Unmarshal([]byte(r.lineage), &lin) == nil && lin.Pin != nil {
			c.Skill, c.SkillDigest, c.SkillName = lin.Pin.Skill, lin.Pin.Digest, lin.ProcessSkill
		}
		// The run's decision: approved by someone other than the one who
		// asked is a release under four eyes.
		var ap struct {
			Approved  bool  `json:"approved"`
			DecidedBy int64 `json:"decidedBy"`
		}
		released := int64(0)
		if json.Unmarshal([]byte(r.approvals), &ap) == nil && ap.Approved && ap.DecidedBy > 0 && ap.DecidedBy != r.initiator {
			released = ap.DecidedBy
			if c.ReleasedBy, err = userName(ctx, db, names, released); err != nil {
				return nil, err
			}
		}
		if f.Actor > 0 && r.user != f.Actor && released != f.Actor {
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

func userName(ctx context.Context, db *store.DB, cache map[int64]string, uid int64) (string, error) {
	if n, ok := cache[uid]; ok {
		return n, nil
	}
	var n string
	err := db.QueryRow(ctx, "SELECT COALESCE(MAX(username), '') FROM be_users WHERE uid = ?", uid).Scan(&n)
	if err != nil {
		return "", fmt.Errorf("user %d: %w", uid, err)
	}
	if n == "" {
		n = fmt.Sprint(uid)
	}
	cache[uid] = n
	return n, nil
}
