package run_test

import (
	"errors"
	"testing"

	"waymark/internal/run"
)

func TestStatusTerminalAndWaiting(t *testing.T) {
	t.Parallel()
	cases := []struct {
		s                 run.Status
		terminal, waiting bool
	}{
		{run.StatusQueued, false, false},
		{run.StatusRunning, false, false},
		{run.StatusWaitingForApproval, false, true},
		{run.StatusWaitingForInput, false, true},
		{run.StatusCompleted, true, false},
		{run.StatusFailed, true, false},
		{run.StatusCancelled, true, false},
	}
	if len(cases) != len(run.Statuses()) {
		t.Fatalf("table covers %d statuses, want %d", len(cases), len(run.Statuses()))
	}
	for _, c := range cases {
		if c.s.Terminal() != c.terminal || c.s.Waiting() != c.waiting {
			t.Errorf("%s: Terminal=%v Waiting=%v, want %v %v", c.s, c.s.Terminal(), c.s.Waiting(), c.terminal, c.waiting)
		}
		if got, err := run.ParseStatus(string(c.s)); err != nil || got != c.s {
			t.Errorf("ParseStatus(%s) = %v, %v", c.s, got, err)
		}
	}
}

func TestParseRejectsUnknownNames(t *testing.T) {
	t.Parallel()
	if _, err := run.ParseStatus("suspended"); !errors.Is(err, run.ErrInvalid) {
		t.Errorf("ParseStatus(suspended) = %v, want ErrInvalid", err)
	}
	if _, err := run.ParseReason(""); !errors.Is(err, run.ErrInvalid) {
		t.Errorf("ParseReason(\"\") = %v, want ErrInvalid", err)
	}
	if _, err := run.ParsePrivacy("secret"); !errors.Is(err, run.ErrInvalid) {
		t.Errorf("ParsePrivacy(secret) = %v, want ErrInvalid", err)
	}
	if p, err := run.ParsePrivacy(""); err != nil || p != run.PrivacyMetadata {
		t.Errorf("ParsePrivacy(\"\") = %v, %v; want the default metadata", p, err)
	}
	for _, r := range run.Reasons() {
		if got, err := run.ParseReason(string(r)); err != nil || got != r {
			t.Errorf("ParseReason(%s) = %v, %v", r, got, err)
		}
	}
	if !run.ReasonProviderFailed.Retryable() || run.ReasonNotRetryable.Retryable() {
		t.Error("only provider_failed is retryable")
	}
}

func TestStoredAnswerKeepsContentOnlyAtFull(t *testing.T) {
	t.Parallel()
	for _, p := range []run.Privacy{run.PrivacyNone, run.PrivacyMetadata, run.PrivacyRedacted} {
		if got := run.StoredAnswer(p, "the answer"); got != "" {
			t.Errorf("StoredAnswer(%s) = %q, want empty", p, got)
		}
	}
	if got := run.StoredAnswer(run.PrivacyFull, "the answer"); got != "the answer" {
		t.Errorf("StoredAnswer(full) = %q", got)
	}
}
