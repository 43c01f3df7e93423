package chat

import (
	"context"
	"encoding/json"
	"time"

	"waymark/internal/content"
	"waymark/internal/cost"
	"waymark/internal/skill"
	"waymark/internal/store"
)

// View is a Conversation of API.md §3 (chat).
type View struct {
	ID            int64           `json:"id"`
	Status        Status          `json:"status"`
	Page          int64           `json:"page"`
	Language      int64           `json:"language"`
	Skill         *SkillRef       `json:"skill"`
	Tour          *Tour           `json:"tour"`
	Progress      json.RawMessage `json:"progress"`
	Highlight     json.RawMessage `json:"highlight"`
	Messages      []Message       `json:"messages"`
	Card          *Card           `json:"card"`
	Question      *Question       `json:"question"`
	Outcomes      []Outcome       `json:"outcomes"`
	Summary       *Summary        `json:"summary"`
	LastRun       string          `json:"lastRunUuid"`
	Error         string          `json:"error,omitempty"`
	UpdatedAt     time.Time       `json:"updatedAt"`
	Configuration int64           `json:"configuration"`
	PendingRun    string          `json:"pendingRunUuid,omitempty"` // the run a turn or decision waits on
	// Cost is what the model calls of this conversation's turns cost (a tour's cost).
	Cost *cost.Total `json:"cost,omitempty"`
	// Draft is the model's reply as it streams in while a turn runs (a run
	// driven by this process, with streaming on); it becomes the answer.
	Draft string `json:"draft,omitempty"`
}

// SkillRef names the conversation's skill.
type SkillRef struct {
	UID        int64  `json:"uid"`
	Identifier string `json:"identifier"`
	Name       string `json:"name"`
	Process    bool   `json:"process"`
}

// Tour is the header of a guided process: page and language.
type Tour struct {
	PageTitle    string `json:"pageTitle"`
	LanguageName string `json:"languageName"`
}

// Summary groups the outcomes once the process reports completion.
type Summary struct {
	Applied    int `json:"applied"`
	Check      int `json:"check"`
	Skipped    int `json:"skipped"`
	NotApplied int `json:"notApplied"`
	Kept       int `json:"kept"`
}

// Get returns a conversation of the actor after handing back a card that was
// decided elsewhere (reconcile). Its reads share one snapshot (a read scope:
// a client polls this during every turn); a hand-back's write
// ends the scope's use, so the view reads what it wrote.
func (s *Service) Get(ctx context.Context, actor, id int64) (View, error) {
	ctx, end := s.db.ReadScope(ctx)
	defer end()
	r, err := owned(ctx, s.db, actor, id)
	if err != nil {
		return View{}, err
	}
	if r, err = s.recovery.reconcile(ctx, r); err != nil {
		return View{}, err
	}
	return s.reads.view(ctx, r)
}

// List returns the actor's conversations, newest first.
func (s *Service) List(ctx context.Context, actor int64) ([]View, error) {
	return s.reads.list(ctx, actor)
}

// reads renders conversations for their readers — views, inbox items,
// the reader's words for targets — and changes none: a read that may
// change a conversation (reconcile) is the Service's, before it.
type reads struct {
	db      *store.DB
	src     content.Source
	rt      liveRuns
	skills  *skill.Store
	labeler LabelFunc // may be nil
}

// liveRuns is what a read needs of the runtime: a running turn's reply so
// far and its live progress.
type liveRuns interface {
	Draft(id string) string
	Live(ctx context.Context, actor int64, id string) (progress, highlight map[string]any, err error)
}

func newReads(db *store.DB, src content.Source, rt liveRuns, skills *skill.Store, labeler LabelFunc) *reads {
	return &reads{db: db, src: src, rt: rt, skills: skills, labeler: labeler}
}

// list is actor's conversations as stored, newest first, each as its view.
func (s *reads) list(ctx context.Context, actor int64) ([]View, error) {
	list, err := store.Collect(ctx, s.db, scanRow, "SELECT "+convColumns+" FROM conversations WHERE owner_uid = ? ORDER BY updated_at DESC, id DESC LIMIT 200", actor)
	if err != nil {
		return nil, err
	}
	out := []View{}
	for _, r := range list {
		v, err := s.view(ctx, r)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func (s *reads) view(ctx context.Context, r row) (View, error) {
	v := View{ID: r.ID, Status: r.Status, Page: r.Page, Language: r.Language, Progress: r.Progress, Highlight: r.Highlight,
		Card: r.Card, Question: r.Question, LastRun: r.LastRun, PendingRun: r.PendingRun, Error: r.Error, UpdatedAt: r.UpdatedAt, Configuration: r.Configuration}
	if r.Status == Processing && r.PendingRun != "" {
		// Progress and highlight as they are reported, not only at pauses.
		v.Draft = s.rt.Draft(r.PendingRun)
		if progress, highlight, err := s.rt.Live(ctx, r.Owner, r.PendingRun); err == nil {
			if p := jsonOf(progress); p != nil {
				v.Progress = *p
			}
			if h := jsonOf(highlight); h != nil {
				v.Highlight = *h
			}
		}
	}
	var err error
	if v.Messages, err = messages(ctx, s.db, r.ID); err != nil {
		return View{}, err
	}
	if v.Outcomes, err = outcomes(ctx, s.db, r.ID); err != nil {
		return View{}, err
	}
	if v.Card != nil {
		c := *v.Card
		v.Card = &c
	}
	s.label(ctx, r.Owner, v.Outcomes, v.Card)
	s.searchPreviews(ctx, v.Card)
	if v.Card != nil {
		s.costs(ctx, &v, v.Card.RunUUID)
	} else {
		s.costs(ctx, &v, "")
	}
	if r.Skill != 0 {
		if n, err := s.skills.NamesOf(ctx, r.Skill); err == nil {
			v.Skill = &SkillRef{UID: r.Skill, Identifier: n.Identifier, Name: n.Name, Process: r.Process}
		}
	}
	if r.Process {
		v.Tour = s.tour(ctx, r)
	}
	if done, _ := progressCompleted(r.Progress); done {
		v.Summary = summarize(v.Outcomes)
	}
	return v, nil
}

func (s *reads) tour(ctx context.Context, r row) *Tour {
	t := &Tour{}
	if p, err := s.src.Get(ctx, s.db, "pages", r.Page); err == nil {
		t.PageTitle = p.Fields["title"]
		if r.Language > 0 {
			if tr, err := s.src.Translation(ctx, s.db, "pages", r.Page, r.Language); err == nil && tr.Fields["title"] != "" {
				t.PageTitle = tr.Fields["title"]
			}
		}
	}
	t.LanguageName, _, _ = content.LanguageTitle(ctx, s.src, s.db, r.Language)
	return t
}

func progressCompleted(p json.RawMessage) (bool, error) {
	if len(p) == 0 {
		return false, nil
	}
	var v struct {
		Completed bool `json:"completed"`
	}
	err := json.Unmarshal(p, &v)
	return v.Completed, err
}

func summarize(os []Outcome) *Summary {
	s := &Summary{}
	for _, o := range os {
		switch o.Outcome {
		case OutcomeApplied:
			s.Applied++
		case OutcomeCheck:
			s.Check++
		case OutcomeSkipped:
			s.Skipped++
		case OutcomeNotApplied:
			s.NotApplied++
		case OutcomeKept:
			s.Kept++
		}
	}
	return s
}
