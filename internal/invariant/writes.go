package invariant

import (
	"fmt"

	"waymark/internal/run"
)

// checkWrites checks WriteOnce and ApprovedWrite from each run's events and
// the content history rows that name it.
func checkWrites(s *snapshot) []Violation {
	type target = historyRow // one field of one record written by one run
	written := map[target]int{}
	for _, h := range s.history {
		written[h]++
	}
	approvals := map[string]int{}
	var out []Violation
	for _, id := range s.order {
		r := s.runs[id]
		calls := map[string]int{}
		suspension := "" // the turn digest of the latest suspension for approval
		approved := map[string]bool{}
		for _, e := range r.events {
			switch e.kind {
			case run.EventApproval:
				if e.str("status") == string(run.StatusWaitingForApproval) {
					suspension = e.str("turnDigest")
					continue
				}
				if ok, has := e.flag("approved"); has && ok {
					approvals[id]++
					approved[e.str("turnDigest")] = true
				}
			case run.EventTool:
				if _, write := e.payload["completeness"]; write {
					calls[e.str("callId")]++
				}
			case run.EventToolWrite:
				if suspension == "" || !approved[suspension] {
					out = append(out, Violation{ApprovedWrite, runSubject(id),
						fmt.Sprintf("write event %d (%s:%v) without an approval of its turn %q", e.seq, e.str("table"), e.payload["uid"], suspension)})
				}
			}
		}
		for call, n := range calls {
			if n > 1 {
				out = append(out, Violation{WriteOnce, runSubject(id), fmt.Sprintf("call %q wrote %d times", call, n)})
			}
		}
	}
	for t, n := range written {
		switch a := approvals[t.run]; {
		case a == 0:
			out = append(out, Violation{ApprovedWrite, runSubject(t.run),
				fmt.Sprintf("%s:%d field %q written %d times with no approval in the run", t.table, t.uid, t.field, n)})
		case n > a:
			out = append(out, Violation{WriteOnce, runSubject(t.run),
				fmt.Sprintf("%s:%d field %q written %d times for %d approvals", t.table, t.uid, t.field, n, a)})
		}
	}
	return out
}
