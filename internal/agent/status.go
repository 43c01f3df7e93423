package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"waymark/internal/access"
	"waymark/internal/content"
	"waymark/internal/run"
	"waymark/internal/tool"
)

// Status is the RunStatus of API.md §3, as one viewer sees it.
type Status struct {
	UUID              string     `json:"uuid"`
	Status            run.Status `json:"status"`
	TerminationReason run.Reason `json:"terminationReason,omitempty"`
	ErrorClass        string     `json:"errorClass,omitempty"`
	Error             string     `json:"error,omitempty"`
	Configuration     int64      `json:"configuration"`
	Initiator         int64      `json:"initiator"`
	// Refusal is the case of a refused invocation or continuation (ADR-228 item 2).
	Refusal            string `json:"refusal,omitempty"`
	PredecessorRunUUID string `json:"predecessorRunUuid,omitempty"`
	// HoldsProcess is read from the lineage: null when it cannot be read.
	HoldsProcess *bool          `json:"holdsProcess"`
	ProcessSkill string         `json:"processSkill,omitempty"`
	Notices      []Notice       `json:"notices"`
	Progress     map[string]any `json:"progress,omitempty"`
	Highlight    map[string]any `json:"highlight,omitempty"`
	Pending      *Pending       `json:"pending,omitempty"`
	Answer       string         `json:"answer,omitempty"`
	Usage        UsageView      `json:"usage"`
	Iterations   int            `json:"iterations"`
	RequeueCount int            `json:"requeueCount"`
	CreatedAt    time.Time      `json:"createdAt"`
	FinishedAt   *time.Time     `json:"finishedAt,omitempty"`
}

// Notice tells the client about something the runtime decided, e.g. a dropped source.
type Notice struct {
	Kind   string `json:"kind"`
	Reason string `json:"reason"`
	UID    int64  `json:"uid"`
}

// UsageView is a run's token usage.
type UsageView struct {
	PromptTokens     int64 `json:"promptTokens"`
	CompletionTokens int64 `json:"completionTokens"`
}

// offersReasons reports whether a waiting turn's card offers the denial
// reasons (variant, skip, keep): a process run's one pending call that
// declares a write. Every other card is approve or deny, and a reason sent
// for it is a plain denial (P.R5).
func offersReasons(s suspended) bool {
	return s.State.Process != nil && s.Input == nil && len(s.Calls) == 1 && s.Calls[0].DeclaresWrite
}

// Pending is the decision a waiting run asks for.
type Pending struct {
	Kind       string `json:"kind"` // approval | input
	TurnDigest string `json:"turnDigest"`
	// Answers names the answer set of the card: "approval" (approve or deny),
	// "process" (approve, or deny with a reason: variant, skip, keep) or "input".
	Answers string `json:"answers"`
	// ApproveBlocked is "second_approver" when this viewer cannot release the run.
	ApproveBlocked string     `json:"approveBlocked"`
	Calls          []CallView `json:"calls"`
	Question       string     `json:"question,omitempty"`
	Schema         any        `json:"schema,omitempty"`
}

// CallView is one pending call on the card.
type CallView struct {
	ID            string             `json:"id"`
	Tool          string             `json:"tool"`
	DeclaresWrite bool               `json:"declaresWrite"`
	Target        *tool.Target       `json:"target,omitempty"`
	Heading       string             `json:"heading,omitempty"`
	Preview       []tool.PreviewItem `json:"preview,omitempty"`
	PreviewError  string             `json:"previewError,omitempty"`
	// Landing is where the write will land (live or a draft workspace),
	// when the site's CMS decides it.
	Landing *content.Landing `json:"landing,omitempty"`
}

// Status returns run id as actor sees it; unknown and invisible runs are ErrNotFound.
func (rt *Reader) Status(ctx context.Context, actor int64, id string) (Status, error) {
	ctx, end := rt.db.ReadScope(ctx) // the status is read from one snapshot
	defer end()
	r, a, v, err := rt.visibleRunRead(ctx, actor, id, func(ctx context.Context, id string) (run.Run, error) {
		return rt.runs.GetWithEvents(ctx, id, rt.statusEventKinds()...) // the view's events come with the run
	})
	if err != nil {
		return Status{}, err
	}
	return rt.view(ctx, a, r, v), nil
}

// WaitsFor reports whether run id, as actor may see it, still waits for the
// decision of the turn with digest — what Status's Pending would say, read
// from the run's row alone, without the status view's events and previews
// (a waiting conversation checks it at every read: chat's reconcile).
// Unknown and invisible runs are ErrNotFound; a state that cannot be decoded
// waits for no decision, as it shows no Pending.
func (rt *Reader) WaitsFor(ctx context.Context, actor int64, id, digest string) (bool, error) {
	r, _, _, err := rt.visibleRun(ctx, actor, id)
	if err != nil {
		return false, err
	}
	if !r.Status.Waiting() {
		return false, nil
	}
	d, err := suspendedDigest(r.Suspended)
	return err == nil && d == digest, nil
}

// view is run r as actor a sees it: an approver (approverViewer) gets the
// status and the card, not the answer or error text of the transcript.
func (rt *Reader) view(ctx context.Context, a *access.Actor, r run.Run, v viewer) Status {
	s := Status{UUID: r.UUID, Status: r.Status, TerminationReason: r.Reason, ErrorClass: r.ErrorClass, Error: r.ErrorMessage,
		Configuration: r.Configuration, Initiator: r.Initiator, Answer: r.Answer, Iterations: r.Usage.Iterations,
		Usage:        UsageView{PromptTokens: r.Usage.PromptTokens, CompletionTokens: r.Usage.CompletionTokens},
		RequeueCount: r.RequeueCount, CreatedAt: r.CreatedAt}
	if v != ownerViewer {
		s.Answer, s.Error = "", ""
	}
	if !r.FinishedAt.IsZero() {
		f := r.FinishedAt
		s.FinishedAt = &f
	}
	rt.processView(ctx, &s, r)
	if r.Status.Waiting() {
		if sus, err := decodeSuspendedView(r.Suspended); err == nil {
			s.Pending = rt.pendingView(ctx, a, r, sus)
			if offersReasons(sus) {
				s.Pending.Answers = "process"
			}
		}
	}
	return s
}

// statusEventKinds are the kinds of the events the status view reads
// besides the opening request event: progress, highlight and notices, and,
// without a preparer that reads lineages, the lineage events.
func (rt *Reader) statusEventKinds() []run.Kind {
	kinds := []run.Kind{run.EventProgress, run.EventHighlight, run.EventNotice}
	if _, viewer := rt.preparer.(LineageViewer); !viewer {
		kinds = append(kinds, run.EventLineage)
	}
	return kinds
}

// processView fills what the event stream says about the run's process:
// lineage (holdsProcess, processSkill), predecessor, refusal, notices,
// progress and highlight — the latest of each counts. The events it needs
// (statusEventKinds, the opening request event and, without a preparer that
// reads lineages, the lineage events) are one read, or came with the run
// (run.Store.GetWithEvents).
func (rt *Reader) processView(ctx context.Context, s *Status, r run.Run) {
	s.Notices = []Notice{}
	f := false
	s.HoldsProcess = &f
	lv, viewer := rt.preparer.(LineageViewer)
	evs, err := r.Events, error(nil)
	if evs == nil {
		evs, err = rt.runs.EventsOfKindsAndFirst(ctx, s.UUID, rt.statusEventKinds()...)
	}
	if err != nil {
		s.HoldsProcess = nil
	}
	lineage := false // a lineage event was read (without a lineage viewer)
	for _, e := range evs {
		if e.Kind == run.EventLineage {
			lineage = true
		}
		var p map[string]any
		if e.Kind != run.EventProgress && e.Kind != run.EventHighlight && e.Kind != run.EventNotice ||
			json.Unmarshal(e.Payload, &p) != nil {
			continue
		}
		switch e.Kind {
		case run.EventProgress:
			s.Progress = p
		case run.EventHighlight:
			s.Highlight = p
		case run.EventNotice:
			switch p["kind"] {
			case "refusal":
				s.Refusal, _ = p["refusal"].(string)
			case "dropped_source":
				n := Notice{Kind: "dropped_source"}
				n.Reason, _ = p["reason"].(string)
				if u, ok := p["uid"].(float64); ok {
					n.UID = int64(u)
				}
				s.Notices = append(s.Notices, n)
			}
		}
	}
	var v ProcessView
	switch {
	case viewer:
		v, err = lv.ProcessOf(ctx, s.UUID)
	case err == nil && lineage:
		// Without a preparer no runtime wrote a lineage; one found anyway
		// cannot be read here.
		err = fmt.Errorf("lineage of %s cannot be read without a preparer", s.UUID)
	}
	switch {
	case err != nil:
		s.HoldsProcess = nil
	default:
		s.ProcessSkill, s.PredecessorRunUUID = v.Skill, v.Predecessor
		if s.HoldsProcess != nil { // nil: the notices could not be read
			s.HoldsProcess = &v.Holds
		}
	}
	if s.PredecessorRunUUID == "" {
		// No lineage names it (or none can be read): the request does —
		// the stored one of a queued run, else the opening request event.
		s.PredecessorRunUUID = requestedPredecessor(r, evs)
	}
}

// requestedPredecessor is the predecessor the run's request named, lineage
// or not: from its stored request (a queued run), else from its opening
// request event, the first of evs when it is the run's first event ("" when
// neither names one).
func requestedPredecessor(r run.Run, evs []run.Event) string {
	if len(r.Request) > 0 {
		if s, err := decodeRequest(r.Request); err == nil {
			return s.Request.Predecessor
		}
	}
	if len(evs) == 0 {
		return ""
	}
	return predecessorOf(evs[0])
}

func (rt *Reader) pendingView(ctx context.Context, a *access.Actor, r run.Run, s suspended) *Pending {
	p := &Pending{Kind: "approval", TurnDigest: s.Digest, Answers: "approval", Calls: make([]CallView, len(s.Calls))}
	if s.Input != nil {
		p.Kind, p.Answers, p.Question = "input", "input", s.Input.Question
		var schema any
		_ = json.Unmarshal(s.Input.Schema, &schema)
		p.Schema = schema
	}
	for i, c := range s.Calls {
		v := CallView{ID: c.ID, Tool: c.Tool, DeclaresWrite: c.DeclaresWrite, Target: c.Target, PreviewError: c.PreviewError}
		if c.Preview != nil {
			v.Heading, v.Preview, v.Landing = c.Preview.Heading, c.Preview.Items, c.Preview.Landing
		}
		p.Calls[i] = v
	}
	if r.Status == run.StatusWaitingForApproval {
		if cfg, err := rt.configs.Get(ctx, r.Configuration); err == nil && cfg.RequireSecondApprover &&
			(a.UID == r.Initiator || !a.HasGrant(access.GrantApprove)) {
			p.ApproveBlocked = "second_approver"
		}
	}
	return p
}

// Event is one event of a run's stream as the API shows it.
type Event struct {
	Sequence  int64           `json:"sequence"`
	Kind      run.Kind        `json:"kind"`
	Payload   json.RawMessage `json:"payload"`
	CreatedAt time.Time       `json:"createdAt"`
}

// Events returns up to limit events of run id after sequence after: the
// transcript, for the initiator and administrators only (anyone else,
// approvers included, gets ErrNotFound). A stored payload that is not valid
// JSON (a damaged row) reads null, so the stream still answers.
func (rt *Reader) Events(ctx context.Context, actor int64, id string, after int64, limit int) ([]Event, error) {
	if _, _, err := rt.ownRun(ctx, actor, id); err != nil {
		return nil, err
	}
	evs, err := rt.runs.Events(ctx, id, after, limit)
	if err != nil {
		return nil, err
	}
	out := make([]Event, len(evs))
	for i, e := range evs {
		payload := e.Payload
		if !json.Valid(payload) {
			payload = json.RawMessage("null")
		}
		out[i] = Event{Sequence: e.Sequence, Kind: e.Kind, Payload: payload, CreatedAt: e.CreatedAt}
	}
	return out, nil
}
