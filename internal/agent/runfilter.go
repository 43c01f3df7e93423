package agent

import (
	"net/url"
	"strconv"
	"time"

	"waymark/internal/run"
)

// ParseRunFilter reads the filter of List from query parameters — status,
// configuration, initiator (uids), from and to (RFC 3339 times or dates
// YYYY-MM-DD in UTC; a date as to includes that whole day), after and limit
// — as GET /api/admin/runs and the administration's runs screen take them. An
// empty parameter does not filter; a malformed one is ErrInvalid naming it.
func ParseRunFilter(q url.Values) (RunFilter, error) {
	f := RunFilter{Status: run.Status(q.Get("status")), After: q.Get("after")}
	var err error
	if f.Configuration, err = positiveParam(q.Get("configuration"), "configuration"); err != nil {
		return RunFilter{}, err
	}
	if f.Initiator, err = positiveParam(q.Get("initiator"), "initiator"); err != nil {
		return RunFilter{}, err
	}
	if f.From, err = timeParam(q.Get("from"), "from", false); err != nil {
		return RunFilter{}, err
	}
	if f.To, err = timeParam(q.Get("to"), "to", true); err != nil {
		return RunFilter{}, err
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return RunFilter{}, invalidf("limit: want 1 to %d, got %q", MaxRunListLimit, v)
		}
		f.Limit = n
	}
	if f.Status != "" && !f.Status.Valid() {
		return RunFilter{}, invalidf("status: unknown run status %q", f.Status)
	}
	return f, nil
}

func positiveParam(v, name string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n <= 0 {
		return 0, invalidf("%s: want a positive integer, got %q", name, v)
	}
	return n, nil
}

// timeParam reads an RFC 3339 time or a date; a date as an upper bound
// (endOfDay) means the start of the next day.
func timeParam(v, name string, endOfDay bool) (time.Time, error) {
	if v == "" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	d, err := time.Parse(time.DateOnly, v)
	if err != nil {
		return time.Time{}, invalidf("%s: want an RFC 3339 time or a date YYYY-MM-DD, got %q", name, v)
	}
	if endOfDay {
		d = d.AddDate(0, 0, 1)
	}
	return d, nil
}
