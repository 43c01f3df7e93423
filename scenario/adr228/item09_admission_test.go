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
		st := e.As(wt.Erika).Must("POST", "/api/runs", map[string]any{"configuration": 1,
			"messages":   []map[string]string{{"role": "user", "content": strings.Repeat("lang ", 40)}},
			"invocation": map[string]any{"skill": seoSkill}}, 201).Map(t)
		if st["status"] != "failed" || st["terminationReason"] != "context_truncated" {
			t.Fatalf("run = %v", st)
		}
		if n := len(e.LLM.Requests()); n != 0 {
			t.Errorf("the provider was called %d times", n)
		}
	})
}
