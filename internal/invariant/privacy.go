package invariant

import (
	"bytes"
	"encoding/json"
	"fmt"

	"waymark/internal/run"
)

// checkPrivacy checks Privacy: at the levels metadata and none (a run's
// configuration's level) every stored event payload is what the filter of
// its level keeps of it, and the run stores no answer.
func checkPrivacy(s *snapshot) []Violation {
	var out []Violation
	for _, id := range s.order {
		r := s.runs[id]
		p := run.Privacy(r.privacy)
		if p != run.PrivacyMetadata && p != run.PrivacyNone {
			continue
		}
		if r.answer != "" {
			out = append(out, Violation{Privacy, runSubject(id), fmt.Sprintf("stores its answer at privacy %s", p)})
		}
		for _, e := range r.events {
			if e.kind == run.EventLineage {
				continue
			}
			kept, err := json.Marshal(run.Filter(p, e.kind, e.payload))
			stored, err2 := json.Marshal(e.payload)
			if e.bad || err != nil || err2 != nil || !bytes.Equal(kept, stored) {
				out = append(out, Violation{Privacy, runSubject(id),
					fmt.Sprintf("%s event %d holds more than privacy %s keeps: %s (keeps %s)", e.kind, e.seq, p, e.raw, kept)})
			}
		}
	}
	return out
}
