package adr228_test

import (
	"strings"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// L9.1: a process this run starts is admitted against the window before the
// first provider call; one that does not fit ends the run before any call.
func TestL9_1_ProcessThatDoesNotFitIsNotStarted(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db, nil)
		exec(t, db, `UPDATE configurations SET context_window = 1100, max_output_tokens = 1000 WHERE uid = 1`)
		st := started(t, e.As(wt.Erika), wt.StartRun{Configuration: 1,
			Messages:   []wt.Message{{Role: "user", Content: strings.Repeat("lang ", 40)}},
			Invocation: &wt.Invocation{Skill: seoSkill}})
		if st.Status != "failed" || st.TerminationReason != "context_truncated" {
			t.Fatalf("run = %+v", st)
		}
		if n := len(e.LLM.Requests()); n != 0 {
			t.Errorf("the provider was called %d times", n)
		}
	})
}
