package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"waymark/internal/agent"
	"waymark/internal/content"
	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/run"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	"waymark/internal/tool"
)

// The standard shape: read, propose a write, finish.
func cycleReplies() []llmtest.Reply {
	return []llmtest.Reply{
		call("c1", "read_page", `{"page": 1}`),
		call("c2", "update_page_metadata", `{"page": 1, "fields": {"description": "`+description+`"}}`),
		text("Done: the description is set."),
	}
}

func TestRunReadsSuspendsOnWriteApprovedWritesOnceAndCompletes(t *testing.T) {
	for _, stream := range []bool{false, true} {
		name := map[bool]string{false: "plain", true: "streaming"}[stream]
		t.Run(name, func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				ctx := context.Background()
				e := setup(t, db, stream, cycleReplies()...)
				commits0 := db.Commits()
				res, err := e.rt.Run(ctx, erika, agent.Request{Configuration: cfgPlain, Messages: user("Improve page 1")})
				if err != nil {
					t.Fatal(err)
				}
				s := e.status(t, erika, res.UUID)
				if s.Status != run.StatusWaitingForApproval || s.Pending == nil || len(s.Pending.Calls) != 1 {
					t.Fatalf("after start: %+v", s)
				}
				c := s.Pending.Calls[0]
				if c.Tool != "update_page_metadata" || !c.DeclaresWrite || c.Target == nil || c.Target.UID != 1 || len(c.Preview) != 1 {
					t.Fatalf("pending call = %+v", c)
				}
				if p := c.Preview[0]; p.Field != "description" || p.Current != "" || p.Proposed != description || p.Measure == nil || p.Measure.Min != 140 {
					t.Fatalf("preview = %+v", p)
				}
				if got := e.field(t, "pages", 1, "description"); got != "" {
					t.Fatalf("written before approval: %q", got)
				}
				// The read ran before the suspend: the second model call saw its result.
				reqs := e.srv.Requests()
				if len(reqs) != 2 || !strings.Contains(reqs[1].Messages[len(reqs[1].Messages)-1].Content, `"Home"`) {
					t.Fatalf("second model request did not carry the read result: %+v", reqs)
				}
				if reqs[0].Stream != stream {
					t.Errorf("stream = %v, want %v", reqs[0].Stream, stream)
				}

				digest := s.Pending.TurnDigest
				res2, err := e.rt.Approve(ctx, erika, res.UUID, agent.Decision{Approve: true, TurnDigest: digest})
				if err != nil {
					t.Fatal(err)
				}
				// The whole cycle (start, read, suspend, approve, write, complete) commits at most 6 times.
				if n := db.Commits() - commits0; n > 6 {
					t.Errorf("the cycle committed %d times, want at most 6", n)
				}
				if res2.Answer != "Done: the description is set." {
					t.Errorf("answer = %q", res2.Answer)
				}
				s = e.status(t, erika, res.UUID)
				if s.Status != run.StatusCompleted || s.TerminationReason != run.ReasonCompleted || s.Iterations != 3 {
					t.Fatalf("after approval: %+v", s)
				}
				if got := e.field(t, "pages", 1, "description"); got != description {
					t.Fatalf("description = %q", got)
				}
				hist, err := content.History(ctx, db, "pages", 1)
				if err != nil || len(hist) != 1 || hist[0].User != erika || hist[0].Run != res.UUID {
					t.Fatalf("history = %+v, %v; want exactly one change by erika in this run", hist, err)
				}
				if k := e.kinds(t, res.UUID); k[run.EventToolWrite] != 1 || k[run.EventApproval] != 2 || k[run.EventLLM] != 3 {
					t.Errorf("event kinds = %v", k)
				}
				// A second approval of the same turn is refused and writes nothing more.
				if _, err := e.rt.Approve(ctx, erika, res.UUID, agent.Decision{Approve: true, TurnDigest: digest}); !errors.Is(err, agent.ErrNotWaiting) {
					t.Errorf("second approval = %v, want ErrNotWaiting", err)
				}
				if hist, _ := content.History(ctx, db, "pages", 1); len(hist) != 1 {
					t.Errorf("history after second approval: %d rows", len(hist))
				}
			})
		})
	}
}

// A run without a process offers approve or deny: a denial with any reason
// reaches the model as the plain denial token (P.R5) and writes nothing.
func TestDenialOfAPlainRunReachesTheModelWithoutReasonAndWritesNothing(t *testing.T) {
	for _, reason := range []agent.DenyReason{"", agent.DenyVariant, agent.DenySkip, agent.DenyKeep} {
		t.Run("reason="+string(reason), func(t *testing.T) {
			storetest.Each(t, func(t *testing.T, db *store.DB) {
				ctx := context.Background()
				e := setup(t, db, false, cycleReplies()...)
				res, err := e.rt.Run(ctx, erika, agent.Request{Configuration: cfgPlain, Messages: user("Improve page 1")})
				if err != nil {
					t.Fatal(err)
				}
				s := e.status(t, erika, res.UUID)
				if _, err := e.rt.Approve(ctx, erika, res.UUID, agent.Decision{TurnDigest: s.Pending.TurnDigest, Reason: reason}); err != nil {
					t.Fatal(err)
				}
				if s := e.status(t, erika, res.UUID); s.Status != run.StatusCompleted {
					t.Fatalf("after denial: %+v", s)
				}
				reqs := e.srv.Requests()
				last := reqs[len(reqs)-1].Messages
				got := last[len(last)-1].Content
				want := `"error":"approval_denied"`
				if !strings.Contains(got, want) || !strings.Contains(got, `"decided_by":"run_owner"`) {
					t.Errorf("model got %q, want the denial token", got)
				}
				if strings.Contains(got, "reason") {
					t.Errorf("the denial of a plain run carries a reason: %q", got)
				}
				if d := e.field(t, "pages", 1, "description"); d != "" {
					t.Errorf("denied write happened: %q", d)
				}
			})
		})
	}
}

func TestStaleDigestIsRefusedAndTheRunKeepsWaiting(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := setup(t, db, false, cycleReplies()...)
		res, _ := e.rt.Run(ctx, erika, agent.Request{Configuration: cfgPlain, Messages: user("Improve page 1")})
		for _, d := range []string{"v1:0000", "nonsense"} {
			_, err := e.rt.Approve(ctx, erika, res.UUID, agent.Decision{Approve: true, TurnDigest: d})
			if !errors.Is(err, agent.ErrStaleTurn) {
				t.Errorf("Approve(digest %q) = %v, want ErrStaleTurn", d, err)
			}
		}
		if _, err := e.rt.Approve(ctx, erika, res.UUID, agent.Decision{Approve: true}); !errors.Is(err, agent.ErrInvalid) {
			t.Errorf("Approve without digest = %v, want ErrInvalid", err)
		}
		if _, err := e.rt.Approve(ctx, erika, res.UUID, agent.Decision{Approve: true, TurnDigest: "x", Reason: agent.DenySkip}); !errors.Is(err, agent.ErrInvalid) {
			t.Errorf("approval with a reason = %v, want ErrInvalid", err)
		}
		if s := e.status(t, erika, res.UUID); s.Status != run.StatusWaitingForApproval {
			t.Fatalf("status = %s, want waiting", s.Status)
		}
		if d := e.field(t, "pages", 1, "description"); d != "" {
			t.Errorf("written: %q", d)
		}
	})
}

func TestPreviewThatChangedWhileWaitingIsRefused(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := setup(t, db, false, cycleReplies()...)
		res, _ := e.rt.Run(ctx, erika, agent.Request{Configuration: cfgPlain, Messages: user("Improve page 1")})
		digest := e.status(t, erika, res.UUID).Pending.TurnDigest
		// Someone edits the description while the card waits.
		if _, err := db.Exec(ctx, `UPDATE records SET fields = ? WHERE tbl = 'pages' AND uid = 1`, `{"title":"Home","description":"Edited meanwhile"}`); err != nil {
			t.Fatal(err)
		}
		if _, err := e.rt.Approve(ctx, erika, res.UUID, agent.Decision{Approve: true, TurnDigest: digest}); !errors.Is(err, agent.ErrPreviewChanged) {
			t.Fatalf("Approve = %v, want ErrPreviewChanged", err)
		}
		s := e.status(t, erika, res.UUID)
		if s.Status != run.StatusWaitingForApproval || s.Pending.Calls[0].Preview[0].Current != "Edited meanwhile" {
			t.Fatalf("after refusal: %+v", s.Pending)
		}
		if d := e.field(t, "pages", 1, "description"); d != "Edited meanwhile" {
			t.Fatalf("description = %q", d)
		}
		// The approver has now seen the current preview: the release goes through.
		if _, err := e.rt.Approve(ctx, erika, res.UUID, agent.Decision{Approve: true, TurnDigest: s.Pending.TurnDigest}); err != nil {
			t.Fatal(err)
		}
		if d := e.field(t, "pages", 1, "description"); d != description {
			t.Fatalf("description = %q", d)
		}
	})
}

// A change that lands after Approve compared the previews and before its
// write is caught inside the write's transaction: nothing is written over,
// nothing is claimed, the card shows the record as it is now, and a release
// of that card goes through.
func TestPreviewThatChangedDuringTheApprovalIsRefusedInsideTheWrite(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := setup(t, db, false, cycleReplies()...)
		res, _ := e.rt.Run(ctx, erika, agent.Request{Configuration: cfgPlain, Messages: user("Improve page 1")})
		digest := e.status(t, erika, res.UUID).Pending.TurnDigest
		events0 := e.kinds(t, res.UUID)
		edits := 0
		e.beforeWrite = func() {
			edits++
			if _, err := db.Exec(ctx, `UPDATE records SET fields = ? WHERE tbl = 'pages' AND uid = 1`,
				`{"title":"Home","description":"Edited during the approval"}`); err != nil {
				t.Error(err)
			}
		}
		if _, err := e.rt.Approve(ctx, erika, res.UUID, agent.Decision{Approve: true, TurnDigest: digest}); !errors.Is(err, agent.ErrPreviewChanged) {
			t.Fatalf("Approve = %v, want ErrPreviewChanged", err)
		}
		if edits != 1 {
			t.Fatalf("the edit ran %d times, want once between the check and the write", edits)
		}
		if d := e.field(t, "pages", 1, "description"); d != "Edited during the approval" {
			t.Fatalf("description = %q, want the concurrent edit kept", d)
		}
		if hist, _ := content.History(ctx, db, "pages", 1); len(hist) != 0 {
			t.Fatalf("history = %+v, want no write", hist)
		}
		s := e.status(t, erika, res.UUID)
		if s.Status != run.StatusWaitingForApproval || s.Pending.Calls[0].Preview[0].Current != "Edited during the approval" {
			t.Fatalf("after refusal: %s %+v", s.Status, s.Pending)
		}
		k := e.kinds(t, res.UUID)
		if k[run.EventToolWrite] != 0 || k[run.EventApproval] != events0[run.EventApproval]+1 {
			t.Errorf("events %v (before %v): want no tool_write and only the previewChanged approval event", k, events0)
		}
		e.beforeWrite = nil
		if _, err := e.rt.Approve(ctx, erika, res.UUID, agent.Decision{Approve: true, TurnDigest: s.Pending.TurnDigest}); err != nil {
			t.Fatal(err)
		}
		if d := e.field(t, "pages", 1, "description"); d != description {
			t.Fatalf("description = %q, want the released proposal", d)
		}
		if s := e.status(t, erika, res.UUID); s.Status != run.StatusCompleted {
			t.Fatalf("status = %s", s.Status)
		}
	})
}

// In a turn of two approved writes, a change that lands on the second
// call's record after the approval (the first call already ran with the
// claim) is not written over either: the model gets the fixed error result,
// the first write stays, the write fence is released and the turn goes on.
func TestLaterWriteWhoseRecordChangedDuringTheApprovalWritesNothingAndTellsTheModel(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		two := llmtest.Reply{ToolCalls: []llm.ToolCall{
			{ID: "c1", Name: "update_page_metadata", Arguments: `{"page": 1, "fields": {"description": "` + description + `"}}`},
			{ID: "c2", Name: "update_page_metadata", Arguments: `{"page": 1, "fields": {"seoTitle": "Fresh title"}}`},
		}}
		e := setup(t, db, false, two, text("The title was changed meanwhile; the description is set."))
		res, _ := e.rt.Run(ctx, erika, agent.Request{Configuration: cfgPlain, Messages: user("Improve page 1")})
		s := e.status(t, erika, res.UUID)
		if s.Pending == nil || len(s.Pending.Calls) != 2 {
			t.Fatalf("pending = %+v, want two calls", s.Pending)
		}
		writes := 0
		e.beforeWrite = func() {
			writes++
			if writes == 2 { // after the first write, before the second
				if _, err := db.Exec(ctx, `UPDATE records SET fields = ? WHERE tbl = 'pages' AND uid = 1`,
					`{"title":"Home","description":"`+description+`","seoTitle":"Edited meanwhile"}`); err != nil {
					t.Error(err)
				}
			}
		}
		out, err := e.rt.Approve(ctx, erika, res.UUID, agent.Decision{Approve: true, TurnDigest: s.Pending.TurnDigest})
		if err != nil {
			t.Fatal(err)
		}
		if writes != 2 {
			t.Fatalf("approved writes = %d, want 2", writes)
		}
		if out.Status == nil || out.Status.Status != run.StatusCompleted {
			t.Fatalf("after the approval: %+v, want completed", out.Status)
		}
		if d, st := e.field(t, "pages", 1, "description"), e.field(t, "pages", 1, "seoTitle"); d != description || st != "Edited meanwhile" {
			t.Fatalf("description %q, seoTitle %q: want the first write and the concurrent edit", d, st)
		}
		hist, _ := content.History(ctx, db, "pages", 1)
		if len(hist) != 1 || hist[0].Field != "description" {
			t.Fatalf("history = %+v, want the description write only", hist)
		}
		reqs := e.srv.Requests()
		last := reqs[len(reqs)-1].Messages
		var c2 string
		for _, m := range last {
			if m.Role == llm.RoleTool && m.ToolCallID == "c2" {
				c2 = m.Content
			}
		}
		if !strings.Contains(c2, "preview_changed") {
			t.Errorf("the model got %q for c2, want the preview_changed result", c2)
		}
		r, err := e.runs.Get(ctx, res.UUID)
		if err != nil || len(r.PendingEffect) != 0 {
			t.Errorf("pending effect %q, %v: want the fence released", r.PendingEffect, err)
		}
	})
}

// Two approved writes of the same field in one turn: the second was shown
// the value before the first, so the first write does not refuse it — the
// turn writes both, in order, as released.
func TestSecondWriteOfAFieldTheTurnWroteIsNotRefusedByThatWrite(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		two := llmtest.Reply{ToolCalls: []llm.ToolCall{
			{ID: "c1", Name: "update_page_metadata", Arguments: `{"page": 1, "fields": {"description": "First wording"}}`},
			{ID: "c2", Name: "update_page_metadata", Arguments: `{"page": 1, "fields": {"description": "` + description + `", "seoTitle": "Fresh title"}}`},
		}}
		e := setup(t, db, false, two, text("Done."))
		res, _ := e.rt.Run(ctx, erika, agent.Request{Configuration: cfgPlain, Messages: user("Improve page 1")})
		s := e.status(t, erika, res.UUID)
		out, err := e.rt.Approve(ctx, erika, res.UUID, agent.Decision{Approve: true, TurnDigest: s.Pending.TurnDigest})
		if err != nil || out.Status == nil || out.Status.Status != run.StatusCompleted {
			t.Fatalf("Approve = %+v, %v; want completed", out.Status, err)
		}
		if d, st := e.field(t, "pages", 1, "description"), e.field(t, "pages", 1, "seoTitle"); d != description || st != "Fresh title" {
			t.Fatalf("description %q, seoTitle %q: want the second write's values", d, st)
		}
		if hist, _ := content.History(ctx, db, "pages", 1); len(hist) != 3 {
			t.Fatalf("history = %+v, want three field changes", hist)
		}
	})
}

func TestFourEyesRefusesSelfApprovalAndAcceptsASecondApprover(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := setup(t, db, false, cycleReplies()...)
		res, err := e.rt.Run(ctx, erika, agent.Request{Configuration: cfgFour, Messages: user("Improve page 1")})
		if err != nil {
			t.Fatal(err)
		}
		s := e.status(t, erika, res.UUID)
		if s.Pending.ApproveBlocked != "second_approver" {
			t.Errorf("initiator's card approveBlocked = %q", s.Pending.ApproveBlocked)
		}
		if _, err := e.rt.Approve(ctx, erika, res.UUID, agent.Decision{Approve: true, TurnDigest: s.Pending.TurnDigest}); !errors.Is(err, agent.ErrSelfApproval) {
			t.Fatalf("self approval = %v, want ErrSelfApproval", err)
		}
		// otto has no grant: the run is not even visible to him.
		if _, err := e.rt.Approve(ctx, otto, res.UUID, agent.Decision{Approve: true, TurnDigest: s.Pending.TurnDigest}); !errors.Is(err, agent.ErrNotFound) {
			t.Fatalf("approval by otto = %v, want ErrNotFound", err)
		}
		inbox, err := e.rt.Inbox(ctx, paula)
		if err != nil || len(inbox) != 1 || inbox[0].UUID != res.UUID {
			t.Fatalf("paula's inbox = %+v, %v", inbox, err)
		}
		if inbox, _ := e.rt.Inbox(ctx, erika); len(inbox) != 0 {
			t.Errorf("erika's inbox lists her own four-eyes run")
		}
		if _, err := e.rt.Approve(ctx, paula, res.UUID, agent.Decision{Approve: true, TurnDigest: s.Pending.TurnDigest}); err != nil {
			t.Fatalf("second approver: %v", err)
		}
		if s := e.status(t, erika, res.UUID); s.Status != run.StatusCompleted {
			t.Fatalf("status = %s", s.Status)
		}
		hist, _ := content.History(ctx, db, "pages", 1)
		if len(hist) != 1 || hist[0].User != erika {
			t.Fatalf("the write ran as %+v, want the initiator", hist)
		}
	})
}

func TestMetadataPrivacyStoresNoContent(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := setup(t, db, false, cycleReplies()...)
		res, _ := e.rt.Run(ctx, erika, agent.Request{Configuration: cfgPlain, Messages: user("Improve page 1 please")})
		s := e.status(t, erika, res.UUID)
		if _, err := e.rt.Approve(ctx, erika, res.UUID, agent.Decision{Approve: true, TurnDigest: s.Pending.TurnDigest}); err != nil {
			t.Fatal(err)
		}
		rows, err := db.Query(ctx, "SELECT kind, payload FROM run_events WHERE run_uuid = ?", res.UUID)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			var kind, payload string
			if err := rows.Scan(&kind, &payload); err != nil {
				t.Fatal(err)
			}
			n++
			for _, secret := range []string{"Nordlicht", "Improve page 1", "Welcome", "Hello there", "Done: the description", "Home"} {
				if strings.Contains(payload, secret) {
					t.Errorf("%s event stores %q: %s", kind, secret, payload)
				}
			}
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		if n < 8 {
			t.Errorf("only %d events stored", n)
		}
		var answer, request, suspended string
		if err := db.QueryRow(ctx, "SELECT answer, request, suspended FROM runs WHERE uuid = ?", res.UUID).Scan(&answer, &request, &suspended); err != nil {
			t.Fatal(err)
		}
		if answer != "" || request != "" || suspended != "" {
			t.Errorf("finished run row keeps content: answer=%q request=%q suspended=%q", answer, request, suspended)
		}
	})
}

// An approved content write that fails in the runtime (not a tool error
// result) changes nothing of the content and ends the run failed, as any
// internal fault does; the approval and the status change are on record.
func TestAnApprovedWriteThatFailsEndsTheRunAndWritesNothing(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		e := setup(t, db, false, call("c1", "broken_write", `{"page":1}`), text("never"))
		var runs atomic.Int32
		broken := tool.NewFuncTool(tool.Def{Name: "broken_write", Description: "writes and fails", Schema: json.RawMessage(`{"type":"object"}`),
			Effect: tool.EffectWrite, Group: "content", DefaultEnabled: true},
			func(ctx context.Context, c tool.Call) (tool.Result, error) {
				runs.Add(1)
				if c.Tx == nil {
					return tool.Result{}, errors.New("no transaction")
				}
				if _, err := c.Tx.Exec(ctx, "UPDATE records SET fields = '{}' WHERE tbl = 'pages' AND uid = 1"); err != nil {
					return tool.Result{}, err
				}
				return tool.Result{}, errors.New("disk on fire")
			})
		if err := e.tools.Register(broken); err != nil {
			t.Fatal(err)
		}
		before := e.field(t, "pages", 1, "title")
		res, err := e.rt.Run(ctx, erika, agent.Request{Configuration: cfgPlain, Messages: user("break it")})
		if err != nil {
			t.Fatal(err)
		}
		s := e.status(t, erika, res.UUID)
		if s.Pending == nil {
			t.Fatalf("not waiting: %+v", s)
		}
		if _, err := e.rt.Approve(ctx, erika, res.UUID, agent.Decision{Approve: true, TurnDigest: s.Pending.TurnDigest}); err != nil {
			t.Fatal(err)
		}
		s = e.status(t, erika, res.UUID)
		if s.Status != run.StatusFailed || s.ErrorClass != "internal" {
			t.Fatalf("run = %s/%s/%s, want failed/internal", s.Status, s.TerminationReason, s.ErrorClass)
		}
		if got := e.field(t, "pages", 1, "title"); got != before {
			t.Errorf("title = %q after a failed write, want %q", got, before)
		}
		if k := e.kinds(t, res.UUID); k[run.EventApproval] != 2 || k[run.EventToolWrite] != 0 {
			t.Errorf("event kinds = %v", k)
		}
		if n := runs.Load(); n < 1 {
			t.Errorf("the tool ran %d times", n)
		}
	})
}
