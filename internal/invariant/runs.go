package invariant

import (
	"fmt"
	"strconv"

	"waymark/internal/run"
)

// live reports whether something will move run id on: running under a
// lease not yet expired, or queued with a job.
func (s *snapshot) live(id string) bool {
	r := s.runs[id]
	if r == nil {
		return false
	}
	switch run.Status(r.status) {
	case run.StatusRunning:
		return r.leaseOwner != "" && r.leaseExpires > s.now.UnixMicro()
	case run.StatusQueued:
		return s.runJobs[id]
	}
	return false
}

// checkRuns checks RunState and RunLease.
func checkRuns(s *snapshot) []Violation {
	var out []Violation
	for _, id := range s.order {
		r := s.runs[id]
		st := run.Status(r.status)
		switch {
		case st.Terminal():
		case st.Waiting():
			if r.suspended == "" {
				out = append(out, Violation{RunState, runSubject(id), r.status + " with no suspended turn stored"})
			}
		case st == run.StatusRunning:
			if !s.live(id) {
				out = append(out, Violation{RunLease, runSubject(id),
					fmt.Sprintf("running with no live lease (owner %q, expiring at %d)", r.leaseOwner, r.leaseExpires)})
			}
		case st == run.StatusQueued:
			if !s.live(id) {
				out = append(out, Violation{RunState, runSubject(id), "queued with no job to work it"})
			}
		default:
			out = append(out, Violation{RunState, runSubject(id), "unknown status " + strconv.Quote(r.status)})
		}
	}
	return out
}

// checkConversations checks ConversationStuck: a processing conversation
// needs a chat job not finished, or a pending run that is live.
func checkConversations(s *snapshot) []Violation {
	var out []Violation
	for _, c := range s.convs {
		if c.status != "processing" || s.chatJobs[c.id] || (c.pendingRun != "" && s.live(c.pendingRun)) {
			continue
		}
		detail := "processing with no chat job"
		if c.pendingRun != "" {
			status := "missing"
			if r := s.runs[c.pendingRun]; r != nil {
				status = r.status
			}
			detail += fmt.Sprintf(" and its run %s %s", c.pendingRun, status)
		}
		out = append(out, Violation{ConversationStuck, "conversation " + strconv.FormatInt(c.id, 10), detail})
	}
	return out
}
