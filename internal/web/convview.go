package web

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"

	"waymark/internal/chat"
	"waymark/internal/content"
	"waymark/internal/site"
	"waymark/internal/tool"
)

// convView is a conversation as the chat screen shows it: the chat API's
// view plus the words the screen needs, looked up, never re-decided.
type convView struct {
	chat.View
	PageTitle    string
	LanguageName string
	Locale       string
	Busy         bool // a turn or decision runs
	Ended        bool // the editor ended the tour and nothing was said since (tour_ended)
	Progress     *progress
	Highlight    string // "table:uid" of the highlighted record, "" for none
	Items        []item
	Card         *cardView
	Ask          *questionView // the question (choose) waiting for an answer
	Summary      []summaryLine
	ErrorText    string
	SkillChip    string // the chosen process's name
	MayChange    bool   // skill and messages may change (idle or failed)
	State        string // the tour header's state: a catalogue key of what is true now
	Done         bool   // the tour completed and nothing waits or runs: Fertig, no ×
	Next         *nextPage
	Retry        string // after a failed turn: the editor's last message, to send again
	CostText     string // what the tour's model calls cost, in the reader's words ("" none yet)
}

// nextPage is the next page worth improving, offered when a tour is done.
type nextPage struct {
	Title, Language, Href string
	OpenPoints            bool // it has open points (else SEO gaps only)
}

type progress struct {
	Current   int    `json:"current"`
	Total     int    `json:"total"`
	Completed bool   `json:"completed"`
	Label     string `json:"label"`
}

// item is one line of the transcript: a message or the status line of a decided card.
type item struct {
	Role    string // "user", "assistant", "outcome"
	Kind    string // an outcome's kind (applied, skipped, …): its colour
	Content string // Markdown (messages)
	Notice  string // a catalogue text
	Outcome string // a catalogue text
	Target  *site.Target
	Wish    string // a variant's instruction, as the editor's answer carried it
}

type summaryLine struct {
	Key   string
	Count int
}

// cardView is a decision card: of a conversation (answers of the chat) or of
// the inbox (approve and the reasons the run's pending turn offers).
type cardView struct {
	Digest  string
	Answers []string
	Blocked bool // a second person must release it
	Calls   []callView
	Action  string // URL the answer form posts to
	Target  string // element the answer's partial replaces
	Heading string
	Cost    string // what the run that proposed the card cost, in the reader's words ("" none)
}

type callView struct {
	ID       string
	Tool     string
	Heading  string
	Target   *site.Target
	Items    []itemView
	Error    string
	Argument string
	Landing  string    // where the write will land, in the reader's words ("" not said)
	Draft    bool      // Landing is a draft workspace
	EditURL  string    // the record in TYPO3's editor (beside TYPO3 with the bridge; "" otherwise)
	Search   *serpView // the page's search result with the proposal (a title or description changed)
}

type itemView struct {
	Label    string
	Current  []segment
	Proposed []segment
	Empty    bool // the current value is empty
	Count    int
	Min, Max int
	Measured bool
	Outside  bool
}

// languageOf returns the name and locale of a language uid.
func (u *UI) languageOf(ctx context.Context, me *user, lang int64) (string, string) {
	langs, err := u.Site.Languages(ctx, me.A)
	if err == nil {
		for _, l := range langs {
			if l.UID == lang {
				return l.Title, l.Locale
			}
		}
	}
	return strconv.FormatInt(lang, 10), ""
}

func (u *UI) convView(ctx context.Context, me *user, v chat.View) *convView {
	cv := &convView{View: v}
	cv.PageTitle = u.Site.Title(ctx, me.A, v.Page, v.Language)
	if v.Tour != nil && v.Tour.PageTitle != "" {
		cv.PageTitle = v.Tour.PageTitle
	}
	cv.LanguageName, cv.Locale = u.languageOf(ctx, me, v.Language)
	if v.Tour != nil && v.Tour.LanguageName != "" {
		cv.LanguageName = v.Tour.LanguageName
	}
	cv.Busy = v.Status == chat.Processing
	cv.MayChange = v.Status == chat.Idle || v.Status == chat.Failed
	if len(v.Progress) > 0 {
		var p progress
		if json.Unmarshal(v.Progress, &p) == nil {
			cv.Progress = &p
		}
	}
	if len(v.Highlight) > 0 {
		var h struct {
			Table string `json:"table"`
			UID   int64  `json:"uid"`
		}
		if json.Unmarshal(v.Highlight, &h) == nil && h.Table != "" {
			cv.Highlight = fmt.Sprintf("%s:%d", h.Table, h.UID)
		}
	}
	if v.Skill != nil {
		cv.SkillChip = u.skillName(ctx, me, v.Skill.UID, v.Skill.Name)
	}
	// Messages with the status line of each decided card after the message it followed.
	byAfter := map[int64][]chat.Outcome{}
	for _, o := range v.Outcomes {
		byAfter[o.After] = append(byAfter[o.After], o)
	}
	addOutcomes := func(n int64) {
		for _, o := range byAfter[n] {
			it := item{Role: "outcome", Kind: o.Outcome, Outcome: me.T.Get("outcome." + o.Outcome)}
			if o.Outcome == chat.OutcomeVariant && n > 0 && int(n) <= len(v.Messages) {
				// The answer reads "<label>: <wish>" (chat.AnswerWith); no
				// answer's label holds ": ".
				_, it.Wish, _ = strings.Cut(v.Messages[n-1].Content, ": ")
			}
			if l := o.Labels; l != nil {
				it.Target = &site.Target{Table: o.Table, UID: o.UID, TableLabel: l.Table, RecordTitle: l.Record, FieldLabels: l.Fields}
			}
			cv.Items = append(cv.Items, it)
		}
	}
	addOutcomes(0)
	for i, m := range v.Messages {
		if m.Role == "user" && m.Notice == "" && len(byAfter[int64(i+1)]) > 0 {
			// The editor's answer to a card is shown once: as the card's
			// status line that follows it, not also as her bubble.
			addOutcomes(int64(i + 1))
			continue
		}
		it := item{Role: m.Role, Content: m.Content}
		if m.Notice != "" {
			it.Notice = u.notice(ctx, me, m.Notice)
		}
		cv.Items = append(cv.Items, it)
		addOutcomes(int64(i + 1))
	}
	cv.Ended = tourEnded(v)
	if v.Card != nil && v.Status == chat.AwaitingApproval {
		cv.Card = u.chatCard(ctx, me, v)
	}
	if v.Status == chat.AwaitingInput {
		cv.Ask = questionOf(v)
	}
	if v.Summary != nil {
		s := v.Summary
		for _, l := range []summaryLine{{"summary.applied", s.Applied}, {"summary.check", s.Check}, {"summary.skipped", s.Skipped},
			{"summary.notApplied", s.NotApplied}, {"summary.kept", s.Kept}} {
			if l.Count > 0 {
				cv.Summary = append(cv.Summary, l)
			}
		}
	}
	if v.Error != "" && v.Status == chat.Failed {
		cv.ErrorText = u.errorText(me, v.Error)
		if n := len(cv.Items); n > 0 && cv.Items[n-1].Notice == cv.ErrorText && cv.Items[n-1].Content == "" {
			// The failure's notice closes the transcript; the alert with
			// the retry says it once, in its place. The notice stays in
			// the transcript once the conversation goes on.
			cv.Items = cv.Items[:n-1]
		}
		for i := len(v.Messages) - 1; i >= 0; i-- {
			if m := v.Messages[i]; m.Role == "user" && strings.TrimSpace(m.Content) != "" {
				cv.Retry = m.Content
				break
			}
		}
	}
	cv.CostText = costText(me, "cost.tour", v.Cost)
	cv.State = tourState(cv)
	if cv.Done = cv.Progress != nil && cv.Progress.Completed && !cv.Busy && cv.Card == nil && cv.Ask == nil; cv.Done {
		cv.Highlight = "" // nothing is being worked on any more
		cv.Next = u.nextPage(ctx, me, v)
	}
	return cv
}

// tourEnded: the editor ended the tour and nothing was said since; the
// header and the conversation list say so until the chat goes on.
func tourEnded(v chat.View) bool {
	n := len(v.Messages)
	return n > 0 && v.Tour == nil && v.Messages[n-1].Notice == chat.NoticeTourEnded
}

// tourState is what the tour header says: the progress the process
// reported, else what is true now — a turn runs (analysing), a decision
// waits, the last turn failed, or nothing runs yet (ready).
func tourState(cv *convView) string {
	switch {
	case cv.Progress != nil && cv.Progress.Completed:
		return "tour.completed"
	case cv.Progress != nil:
		return "tour.progress"
	case cv.Busy:
		return "tour.analysing"
	case cv.Card != nil || cv.Ask != nil:
		return "tour.waiting"
	case cv.Status == chat.Failed:
		return "tour.failed"
	}
	return "tour.ready"
}

// nextPage is the dashboard's first suggestion other than the page (in
// the language) the tour was on — the same ranking (rankedPages) — as a
// link that starts its process there.
func (u *UI) nextPage(ctx context.Context, me *user, v chat.View) *nextPage {
	if u.OpenPoints == nil {
		return nil
	}
	_, pages, err := u.rankedPages(ctx, me)
	if err != nil {
		return nil
	}
	for _, p := range pages {
		if p.Page == v.Page && p.Language == v.Language {
			continue
		}
		href := fmt.Sprintf("/chat?page=%d&language=%d", p.Page, p.Language)
		if p.Skill != 0 {
			href += fmt.Sprintf("&skill=%d", p.Skill)
		}
		return &nextPage{Title: p.Title, Language: p.LanguageName, Href: href, OpenPoints: p.OpenPoints}
	}
	return nil
}

// notice turns a stored notice code ("released_elsewhere: …") into a text.
// A decision someone else took ("denied_elsewhere@3") names the decider.
func (u *UI) notice(ctx context.Context, me *user, code string) string {
	key, _, _ := strings.Cut(code, ":")
	key, by, ok := strings.Cut(key, "@")
	if uid, err := strconv.ParseInt(by, 10, 64); ok && err == nil && hasKey("error."+key+"_by") {
		name, err := u.userName(ctx, uid)
		if err != nil {
			name = me.T.Get("inbox.userNumber", uid)
		}
		return me.T.Get("error."+key+"_by", name)
	}
	return u.errorText(me, key)
}

// errorText is the catalogue text of an API error or notice code.
func (u *UI) errorText(me *user, code string) string {
	if k := "error." + code; hasKey(k) {
		return me.T.Get(k)
	}
	return me.T.Get("error.generic", code)
}

func (u *UI) chatCard(ctx context.Context, me *user, v chat.View) *cardView {
	c := v.Card
	cv := &cardView{Digest: c.TurnDigest, Answers: c.Answers, Blocked: c.ApproveBlocked != "",
		Action: fmt.Sprintf("/chat/%d/answer", v.ID), Target: "#conversation"}
	for _, call := range c.Calls {
		k := u.callView(ctx, me, callParts{ID: call.ID, Tool: call.Tool, Heading: call.Heading, Preview: call.Preview, Landing: call.Landing})
		if call.PreviewError != "" {
			k.Error = me.T.Get("card.cannotApply", call.PreviewError)
		}
		if t, l := call.Target, call.Labels; t != nil && l != nil {
			k.Target = &site.Target{Table: t.Table, UID: t.UID, TableLabel: l.Table, RecordTitle: l.Record, FieldLabels: l.Fields}
		}
		if t := call.Target; t != nil {
			k.EditURL = u.editURL(t.Table, t.UID)
		}
		k.Search = searchView(me, call.SearchPreview)
		cv.Calls = append(cv.Calls, k)
	}
	cv.Heading = headingOf(me, cv.Calls)
	cv.Cost = costText(me, "cost.card", c.Cost)
	return cv
}

func headingOf(me *user, calls []callView) string {
	if len(calls) == 1 && calls[0].Heading != "" {
		return calls[0].Heading
	}
	return me.T.Get("card.titleGeneric")
}

// callParts is what a card shows of one pending call: from a run's pending
// approval (the inbox) or a conversation's card (the chat).
type callParts struct {
	ID, Tool, Heading string
	Target            *tool.Target // nil: the call names no record (or the chat labels it itself)
	Preview           []tool.PreviewItem
	PreviewError      string
	Landing           *content.Landing // where the write will land; nil: not said (live)
}

func (u *UI) callView(ctx context.Context, me *user, c callParts) callView {
	id, toolName, heading, target, preview, previewErr := c.ID, c.Tool, c.Heading, c.Target, c.Preview, c.PreviewError
	cv := callView{ID: id, Tool: toolName, Heading: heading}
	labels := map[string]string{} // field → label in the viewer's language
	if target != nil {
		if t, err := u.Site.Describe(ctx, me.A, target.Table, target.UID, target.Fields, me.T.Lang()); err == nil {
			cv.Target = &t
			// The preview was made in the initiator's language; an approver
			// reads the table and field names in their own (the record's
			// title stays as the preview had it).
			if _, title, ok := strings.Cut(heading, ": "); ok {
				cv.Heading = t.TableLabel + ": " + title
			}
			for i, f := range target.Fields {
				if i < len(t.FieldLabels) {
					labels[f] = t.FieldLabels[i]
				}
			}
		}
	}
	if target != nil {
		cv.EditURL = u.editURL(target.Table, target.UID)
	}
	for _, p := range preview {
		iv := itemView{Label: cmp.Or(labels[p.Field], p.Label), Empty: p.Current == ""}
		iv.Current, iv.Proposed = wordDiff(p.Current, p.Proposed)
		if m := p.Measure; m != nil {
			iv.Measured, iv.Count, iv.Min, iv.Max = true, m.Count, m.Min, m.Max
			iv.Outside = (m.Min > 0 && m.Count < m.Min) || (m.Max > 0 && m.Count > m.Max)
		}
		cv.Items = append(cv.Items, iv)
	}
	if previewErr != "" {
		cv.Error = u.errorText(me, previewErr)
	}
	if l := c.Landing; l != nil {
		cv.Draft = l.Workspace != 0
		cv.Landing = me.T.Get("card.landsLive")
		if cv.Draft {
			cv.Landing = me.T.Get("card.landsDraft", l.Title)
		}
	}
	return cv
}

// editURL is record uid of table in TYPO3's editor (FormEngine's route
// record_edit) beside TYPO3 with the bridge, whose backend Waymark knows;
// "" otherwise. Beside TYPO3 the records' tables and uids are TYPO3's.
func (u *UI) editURL(table string, uid int64) string {
	if u.typo3Backend == "" {
		return ""
	}
	return u.typo3Backend + "record/edit?" + url.QueryEscape(fmt.Sprintf("edit[%s][%d]", table, uid)) + "=edit"
}
