package invariant

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"

	"waymark/internal/run"
)

// fieldKeys are the open point fields of a card's target: its fields, or
// "" for the record as a whole (as package openpoint keys them).
func fieldKeys(fields []string) []string {
	out := slices.Clone(fields)
	slices.Sort(out)
	out = slices.Compact(out)
	if len(out) == 0 {
		return []string{""}
	}
	return out
}

// acceptedSkips reports, for each skip approval of run r in order, whether
// the runtime accepted it: the continuation after it did not end failed or
// cancelled before it paused (ADR-022 P.R4; the chat records nothing then).
func acceptedSkips(r *runRow) []bool {
	var out []bool
	for i, e := range r.events {
		if e.kind != run.EventApproval || e.str("reason") != "skip" {
			continue
		}
		if ok, has := e.flag("approved"); !has || ok {
			continue
		}
		accepted := true
		for _, f := range r.events[i+1:] {
			if f.kind != run.EventStatus || f.str("status") == string(run.StatusRunning) {
				continue
			}
			st := run.Status(f.str("status"))
			accepted = st != run.StatusFailed && st != run.StatusCancelled
			break
		}
		out = append(out, accepted)
	}
	return out
}

// checkOpenPoints checks OpenPoint: a skip the chat recorded as an outcome
// and the runtime accepted, in a process conversation with a skill and a
// page, keeps an open point per field until a later applied or kept
// outcome on that record and field closed it.
func checkOpenPoints(s *snapshot) []Violation {
	convs := map[int64]convRow{}
	for _, c := range s.convs {
		convs[c.id] = c
	}
	skipsSeen := map[string]int{}
	accepted := map[string][]bool{}
	var out []Violation
	for i, o := range s.outcomes {
		if o.outcome != "skipped" {
			continue
		}
		k := skipsSeen[o.run]
		skipsSeen[o.run]++
		r := s.runs[o.run]
		if r == nil {
			continue // purged by retention
		}
		if _, ok := accepted[o.run]; !ok {
			accepted[o.run] = acceptedSkips(r)
		}
		if k >= len(accepted[o.run]) || !accepted[o.run][k] {
			continue
		}
		c, ok := convs[o.conv]
		skill := processSkill(r)
		if !ok || skill == 0 || c.page == 0 || o.table == "" || o.uid <= 0 {
			continue
		}
		for _, f := range fieldKeys(o.fields) {
			if s.points[pointKey{skill, c.page, o.table, o.uid, f}] || closedLater(s.outcomes[i+1:], s.runs, convs, fieldRef{o.table, o.uid, f}) {
				continue
			}
			out = append(out, Violation{OpenPoint, "conversation " + strconv.FormatInt(o.conv, 10),
				fmt.Sprintf("skip of %s:%d field %q in run %s has no open point and nothing closed it", o.table, o.uid, f, o.run)})
		}
	}
	return append(out, unrecordedSkips(s, skipsSeen)...)
}

// unrecordedSkips finds the skips the runtime accepted in a conversation's
// process run (the run a conversation names, or one it recorded an outcome
// of) that the chat recorded no outcome for — and so no open point: a
// decision whose worker died between the runtime's answer and the chat's
// bookkeeping. A skip decided outside the chat (the runs
// API, the inbox) has no outcome either; the proofs decide only in the chat.
func unrecordedSkips(s *snapshot, recorded map[string]int) []Violation {
	owner := map[string]int64{}
	for _, c := range s.convs {
		for _, id := range []string{c.pendingRun, c.lastRun} {
			if id != "" {
				owner[id] = c.id
			}
		}
	}
	for _, o := range s.outcomes {
		owner[o.run] = o.conv
	}
	var out []Violation
	for _, id := range s.order {
		conv, ok := owner[id]
		r := s.runs[id]
		if !ok || processSkill(r) == 0 {
			continue
		}
		accepted := 0
		for _, a := range acceptedSkips(r) {
			if a {
				accepted++
			}
		}
		if accepted > recorded[id] {
			out = append(out, Violation{OpenPoint, "conversation " + strconv.FormatInt(conv, 10),
				fmt.Sprintf("run %s: %d skips accepted by the runtime, %d recorded with an outcome", id, accepted, recorded[id])})
		}
	}
	return out
}

// fieldRef names one field of one record: the target of an open point.
type fieldRef struct {
	table string
	uid   int64
	field string
}

// closedLater reports whether one of later closes the open point on field
// ref: an applied write of it (any conversation, P.C1) or a keep in a
// process run of a conversation about a page (P.K1).
func closedLater(later []outcomeRow, runs map[string]*runRow, convs map[int64]convRow, ref fieldRef) bool {
	table, uid, f := ref.table, ref.uid, ref.field
	for _, o := range later {
		if o.table != table || o.uid != uid || !slices.Contains(fieldKeys(o.fields), f) {
			continue
		}
		if o.outcome == "applied" {
			return true
		}
		if r := runs[o.run]; o.outcome == "kept" && (r == nil || processSkill(r) != 0) && convs[o.conv].page != 0 {
			return true // a purged run's keep counts: the auditor cannot tell
		}
	}
	return false
}

// processSkill is the skill of the process run r belongs to, from its
// latest lineage event (the pin the runtime wrote, ADR-228 item 4); 0 when
// r is no process run. The conversation's own skill is cleared when its
// tour ends, the lineage stays.
func processSkill(r *runRow) int64 {
	for i := len(r.events) - 1; i >= 0; i-- {
		e := r.events[i]
		if e.kind != run.EventLineage {
			continue
		}
		var l struct {
			Pin *struct {
				Skill int64 `json:"skill"`
			} `json:"pin"`
		}
		if json.Unmarshal(e.raw, &l) != nil || l.Pin == nil {
			return 0
		}
		return l.Pin.Skill
	}
	return 0
}
