package waymarktest

import (
	"encoding/json"
	"fmt"
	"net/url"
	"testing"
	"time"
)

// The typed client: requests and answers of docs/API.md §3 (runs,
// conversations, skills) as Go structs of this package, so that scenario
// tests read fields instead of asserting on untyped maps. The structs mirror
// the documented wire format and import no production type: a change of the
// wire shows here. Each call returns the decoded answer (the zero value when
// the status is not 2xx) and the raw Response for status and error checks.

// Message is one chat message of a run request.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Subject names the record a process skill works on.
type Subject struct {
	Table    string `json:"table"`
	UID      int64  `json:"uid"`
	Language int64  `json:"language"`
}

// Invocation starts a run with a process skill.
type Invocation struct {
	Skill   int64    `json:"skill"`
	Subject *Subject `json:"subject,omitempty"`
}

// StartRun is the body of POST /api/runs.
type StartRun struct {
	Configuration      int64       `json:"configuration"`
	Messages           []Message   `json:"messages"`
	Invocation         *Invocation `json:"invocation,omitempty"`
	PredecessorRunUUID string      `json:"predecessorRunUuid,omitempty"`
	Queued             bool        `json:"queued,omitempty"`
}

// Target is the record and fields a pending write names.
type Target struct {
	Table  string   `json:"table"`
	UID    int64    `json:"uid"`
	Fields []string `json:"fields"`
}

// Measure is the length rule of a proposed value.
type Measure struct {
	Count int `json:"count"`
	Min   int `json:"min"`
	Max   int `json:"max"`
}

// PreviewItem is one field of a pending write's preview.
type PreviewItem struct {
	Field    string   `json:"field"`
	Label    string   `json:"label"`
	Current  string   `json:"current"`
	Proposed string   `json:"proposed"`
	Measure  *Measure `json:"measure,omitempty"`
}

// Call is one tool call of a card.
type Call struct {
	ID            string        `json:"id"`
	Tool          string        `json:"tool"`
	DeclaresWrite bool          `json:"declaresWrite"`
	Target        *Target       `json:"target,omitempty"`
	Heading       string        `json:"heading,omitempty"`
	Preview       []PreviewItem `json:"preview,omitempty"`
	PreviewError  string        `json:"previewError,omitempty"`
}

// Pending is what a suspended run waits for: an approval (a card) or an input.
type Pending struct {
	Kind           string          `json:"kind"`
	TurnDigest     string          `json:"turnDigest"`
	Answers        string          `json:"answers"`
	ApproveBlocked string          `json:"approveBlocked"`
	Calls          []Call          `json:"calls"`
	Question       string          `json:"question,omitempty"`
	Schema         json.RawMessage `json:"schema,omitempty"`
}

// Notice is a notice of a run (a dropped source, say).
type Notice struct {
	Kind   string `json:"kind"`
	Reason string `json:"reason"`
	UID    int64  `json:"uid"`
}

// Usage is a run's token count.
type Usage struct {
	PromptTokens     int64 `json:"promptTokens"`
	CompletionTokens int64 `json:"completionTokens"`
}

// RunStatus is the RunStatus of docs/API.md.
type RunStatus struct {
	UUID               string          `json:"uuid"`
	Status             string          `json:"status"`
	TerminationReason  string          `json:"terminationReason,omitempty"`
	Refusal            string          `json:"refusal,omitempty"`
	ErrorClass         string          `json:"errorClass,omitempty"`
	Error              string          `json:"error,omitempty"`
	Configuration      int64           `json:"configuration"`
	Initiator          int64           `json:"initiator"`
	PredecessorRunUUID string          `json:"predecessorRunUuid,omitempty"`
	HoldsProcess       *bool           `json:"holdsProcess"`
	ProcessSkill       string          `json:"processSkill,omitempty"`
	Notices            []Notice        `json:"notices"`
	Progress           json.RawMessage `json:"progress,omitempty"`
	Highlight          json.RawMessage `json:"highlight,omitempty"`
	Pending            *Pending        `json:"pending,omitempty"`
	Answer             string          `json:"answer,omitempty"`
	Usage              Usage           `json:"usage"`
	Iterations         int             `json:"iterations"`
	RequeueCount       int             `json:"requeueCount"`
	CreatedAt          time.Time       `json:"createdAt"`
	FinishedAt         *time.Time      `json:"finishedAt,omitempty"`
}

// HoldsProcessIs reports whether the answer carries holdsProcess and it is want.
func (s RunStatus) HoldsProcessIs(want bool) bool {
	return s.HoldsProcess != nil && *s.HoldsProcess == want
}

// RunNulls is the holdsProcess of a RunStatus answer as it stands on the
// wire, where a test tells present-and-null from absent: nil when the
// answer has no holdsProcess, "null" when it reads null (docs/API.md:
// holdsProcess is null when the lineage cannot be read). Decode it from the
// same Response as the RunStatus.
type RunNulls struct {
	HoldsProcess json.RawMessage `json:"holdsProcess"`
}

// HoldsProcessNull reports whether holdsProcess is present and null.
func (n RunNulls) HoldsProcessNull() bool { return string(n.HoldsProcess) == "null" }

// Approve is the body of POST /api/runs/{uuid}/approval.
type Approve struct {
	Approve    bool   `json:"approve"`
	TurnDigest string `json:"turnDigest"`
	Reason     string `json:"reason,omitempty"`
}

// Event is one event of a run's transcript.
type Event struct {
	Sequence  int64           `json:"sequence"`
	Kind      string          `json:"kind"`
	Payload   json.RawMessage `json:"payload"`
	CreatedAt time.Time       `json:"createdAt"`
}

// ApprovalPayload is the payload of an approval event as tests read it.
// Approved is nil when the payload has none (or null): a decision carries it.
type ApprovalPayload struct {
	TurnDigest string `json:"turnDigest"`
	Approved   *bool  `json:"approved"`
}

// ToolPayload is the payload of a tool event as tests read it. IsError is
// nil when the payload has none (or null), so a test can require it false.
type ToolPayload struct {
	CallID  string `json:"callId"`
	Tool    string `json:"tool"`
	IsError *bool  `json:"isError"`
}

// Payload decodes an event's payload into a T (ApprovalPayload,
// ToolPayload, Lineage…), failing the test when it does not decode; a null
// payload is the zero T.
func Payload[T any](t testing.TB, ev Event) T {
	t.Helper()
	var v T
	if err := json.Unmarshal(ev.Payload, &v); err != nil {
		t.Fatalf("%s payload %s: %v", ev.Kind, ev.Payload, err)
	}
	return v
}

// Inbox is one page of GET /api/inbox.
type Inbox struct {
	Runs []RunStatus `json:"runs"`
	Next string      `json:"next"`
}

// decode decodes a 2xx answer into v and returns r.
func decode[T any](c *Client, r Response) (T, Response) {
	c.env.T.Helper()
	var v T
	if r.Status >= 200 && r.Status < 300 && len(r.Body) > 0 {
		r.JSON(c.env.T, &v)
	}
	return v, r
}

// StartRun sends POST /api/runs.
func (c *Client) StartRun(req StartRun) (RunStatus, Response) {
	c.env.T.Helper()
	return decode[RunStatus](c, c.Do("POST", "/api/runs", req))
}

// Run sends GET /api/runs/{uuid}.
func (c *Client) Run(uuid string) (RunStatus, Response) {
	c.env.T.Helper()
	return decode[RunStatus](c, c.Do("GET", "/api/runs/"+url.PathEscape(uuid), nil))
}

// MustRun is Run that fails the test unless the answer is 200.
func (c *Client) MustRun(uuid string) RunStatus {
	c.env.T.Helper()
	st, r := c.Run(uuid)
	if r.Status != 200 {
		c.env.T.Fatalf("GET /api/runs/%s = %d, want 200: %s", uuid, r.Status, r.Body)
	}
	return st
}

// Decide sends POST /api/runs/{uuid}/approval.
func (c *Client) Decide(uuid string, a Approve) (RunStatus, Response) {
	c.env.T.Helper()
	return decode[RunStatus](c, c.Do("POST", "/api/runs/"+url.PathEscape(uuid)+"/approval", a))
}

// CancelRun sends POST /api/runs/{uuid}/cancel.
func (c *Client) CancelRun(uuid string) (RunStatus, Response) {
	c.env.T.Helper()
	return decode[RunStatus](c, c.Do("POST", "/api/runs/"+url.PathEscape(uuid)+"/cancel", nil))
}

// Events sends GET /api/runs/{uuid}/events?after=N.
func (c *Client) Events(uuid string, after int64) ([]Event, Response) {
	c.env.T.Helper()
	v, r := decode[struct {
		Events []Event `json:"events"`
	}](c, c.Do("GET", fmt.Sprintf("/api/runs/%s/events?after=%d", url.PathEscape(uuid), after), nil))
	return v.Events, r
}

// Pin is a lineage's process pin.
type Pin struct {
	Skill  int64  `json:"skill"`
	Source int64  `json:"source"`
	Digest string `json:"digest"`
}

// Lineage is the payload of a lineage event (docs/API.md §3, ADR-228 item
// 4): ids and a digest only.
type Lineage struct {
	Configuration int64    `json:"configuration"`
	Pin           *Pin     `json:"pin"`     // nil: no process (null or absent)
	Subject       *Subject `json:"subject"` // nil: none
	ProcessSkill  string   `json:"processSkill"`
	Origin        string   `json:"origin"`
	Released      bool     `json:"released"`
	Predecessor   string   `json:"predecessor"`
	CarriedFrom   string   `json:"carriedFrom"`
}

// Lineage returns the payload of the run's latest lineage event: nil when
// the run has none or that payload reads null (an unreadable one). It fails
// the test unless the events answer 200 and the payload decodes.
func (c *Client) Lineage(uuid string) *Lineage {
	c.env.T.Helper()
	evs, r := c.Events(uuid, 0)
	if r.Status != 200 {
		c.env.T.Fatalf("GET /api/runs/%s/events = %d, want 200: %s", uuid, r.Status, r.Body)
	}
	var last *Lineage
	for _, ev := range evs {
		if ev.Kind == "lineage" {
			last = nil
			if err := json.Unmarshal(ev.Payload, &last); err != nil {
				c.env.T.Fatalf("lineage payload %s: %v", ev.Payload, err)
			}
		}
	}
	return last
}

// CancelIfWaiting is the answer of POST /api/runs/{uuid}/cancel-if-waiting.
type CancelIfWaiting struct {
	Won    bool   `json:"won"`
	Status string `json:"status"`
}

// Input is the body of POST /api/runs/{uuid}/input.
type Input struct {
	TurnDigest string         `json:"turnDigest"`
	Values     map[string]any `json:"values"`
}

// Events is the answer of GET /api/runs/{uuid}/events (JSON).
type Events struct {
	Events []Event `json:"events"`
}

// OpenPoint is an open point as a reader sees it.
type OpenPoint struct {
	Page            int64     `json:"page"`
	Language        int64     `json:"language"`
	Skill           int64     `json:"skill"`
	SkillIdentifier string    `json:"skillIdentifier"`
	Table           string    `json:"table"`
	UID             int64     `json:"uid"`
	Field           string    `json:"field"`
	CreatedAt       time.Time `json:"createdAt"`
	Summary         string    `json:"summary"`
}

// OpenPoints is the answer of GET /api/pages/{uid}/open-points and GET
// /api/open-points.
type OpenPoints struct {
	OpenPoints []OpenPoint `json:"openPoints"`
}

// RunPage is the answer of GET /api/admin/runs: a page of runs, newest
// first, and the cursor of the next ("" at the end).
type RunPage struct {
	Runs []RunStatus `json:"runs"`
	Next string      `json:"next"`
}

// Ended is the answer of POST /api/runs/{uuid}/end-process.
type Ended struct {
	Ended  bool   `json:"ended"`
	Status string `json:"status"`
}

// EndProcess sends POST /api/runs/{uuid}/end-process.
func (c *Client) EndProcess(uuid string) (Ended, Response) {
	c.env.T.Helper()
	return decode[Ended](c, c.Do("POST", "/api/runs/"+url.PathEscape(uuid)+"/end-process", nil))
}

// ProcessSkill is an entry of a configuration's process catalogue.
type ProcessSkill struct {
	UID         int64  `json:"uid"`
	Identifier  string `json:"identifier"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// ProcessCatalogue is the answer of GET /api/configurations/{cfg}/process-skills
// and, with the user it is for, of GET /api/admin/configurations/{cfg}/process-skills?user=.
type ProcessCatalogue struct {
	Configuration int64          `json:"configuration"`
	User          int64          `json:"user"`
	Usable        bool           `json:"usable"`
	Skills        []ProcessSkill `json:"skills"`
}

// ProcessSkills sends GET /api/configurations/{cfg}/process-skills.
func (c *Client) ProcessSkills(cfg int64) ([]ProcessSkill, Response) {
	c.env.T.Helper()
	v, r := decode[struct {
		Skills []ProcessSkill `json:"skills"`
	}](c, c.Do("GET", fmt.Sprintf("/api/configurations/%d/process-skills", cfg), nil))
	return v.Skills, r
}

// Inbox sends GET /api/inbox?after=&limit= (limit 0: the default).
func (c *Client) Inbox(after string, limit int) (Inbox, Response) {
	c.env.T.Helper()
	q := url.Values{}
	if after != "" {
		q.Set("after", after)
	}
	if limit != 0 {
		q.Set("limit", fmt.Sprint(limit))
	}
	path := "/api/inbox"
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	return decode[Inbox](c, c.Do("GET", path, nil))
}

// SkillRef is a conversation's skill.
type SkillRef struct {
	UID        int64  `json:"uid"`
	Identifier string `json:"identifier"`
	Name       string `json:"name"`
	Process    bool   `json:"process"`
}

// Tour is what a conversation's process tour shows.
type Tour struct {
	PageTitle    string `json:"pageTitle"`
	LanguageName string `json:"languageName"`
}

// ChatMessage is one message of a conversation.
type ChatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
	Notice  string `json:"notice,omitempty"`
}

// Card is a conversation's waiting card.
type Card struct {
	TurnDigest     string   `json:"turnDigest"`
	Answers        []string `json:"answers"`
	ApproveBlocked string   `json:"approveBlocked"`
	Calls          []Call   `json:"calls"`
}

// Question is a conversation's waiting question.
type Question struct {
	TurnDigest string          `json:"turnDigest"`
	Question   string          `json:"question"`
	Options    []string        `json:"options"`
	FreeText   bool            `json:"freeText"`
	Schema     json.RawMessage `json:"schema,omitempty"`
}

// Outcome is a decided card's outcome.
type Outcome struct {
	Outcome string   `json:"outcome"`
	After   int64    `json:"after"`
	Table   string   `json:"table"`
	UID     int64    `json:"uid"`
	Fields  []string `json:"fields"`
}

// Summary counts a tour's outcomes.
type Summary struct {
	Applied    int `json:"applied"`
	Check      int `json:"check"`
	Skipped    int `json:"skipped"`
	NotApplied int `json:"notApplied"`
	Kept       int `json:"kept"`
}

// Conversation is the Conversation of docs/API.md.
type Conversation struct {
	ID            int64           `json:"id"`
	Status        string          `json:"status"`
	Page          int64           `json:"page"`
	Language      int64           `json:"language"`
	Configuration int64           `json:"configuration"`
	Skill         *SkillRef       `json:"skill"`
	Tour          *Tour           `json:"tour"`
	Progress      json.RawMessage `json:"progress"`
	Highlight     json.RawMessage `json:"highlight"`
	Messages      []ChatMessage   `json:"messages"`
	Card          *Card           `json:"card"`
	Question      *Question       `json:"question"`
	Outcomes      []Outcome       `json:"outcomes"`
	Summary       *Summary        `json:"summary"`
	LastRunUUID   string          `json:"lastRunUuid"`
	Error         string          `json:"error,omitempty"`
	UpdatedAt     time.Time       `json:"updatedAt"`
}

// ConversationStamp is a conversation as a poller reads it: its status,
// its card and its updatedAt as the wire string — sent back as after= of a
// waiting read (GET /api/conversations/{id}?wait=&after=) and compared
// byte for byte, which a time.Time would not keep.
type ConversationStamp struct {
	ID        int64           `json:"id"`
	Status    string          `json:"status"`
	UpdatedAt string          `json:"updatedAt"`
	Card      *Card           `json:"card"`
	Progress  json.RawMessage `json:"progress"`
}

// NullOrAbsent reports whether a raw field is absent (nil) or JSON null:
// the one case an untyped map read returned nil for.
func NullOrAbsent(raw json.RawMessage) bool { return len(raw) == 0 || string(raw) == "null" }

// StartConversation is the body of POST /api/conversations.
type StartConversation struct {
	Page          int64 `json:"page"`
	Language      int64 `json:"language"`
	Skill         int64 `json:"skill,omitempty"`
	Configuration int64 `json:"configuration,omitempty"`
}

// Answer is the body of POST /api/conversations/{id}/answer: a card's
// answer, or a question's option or text.
type Answer struct {
	TurnDigest string `json:"turnDigest"`
	Answer     string `json:"answer,omitempty"`
	Option     string `json:"option,omitempty"`
	Text       string `json:"text,omitempty"`
	// Instruction goes with a variant: the editor's wish for it.
	Instruction string `json:"instruction,omitempty"`
}

// StartConversation sends POST /api/conversations.
func (c *Client) StartConversation(req StartConversation) (Conversation, Response) {
	c.env.T.Helper()
	return decode[Conversation](c, c.Do("POST", "/api/conversations", req))
}

// Conversation sends GET /api/conversations/{id}.
func (c *Client) Conversation(id int64) (Conversation, Response) {
	c.env.T.Helper()
	return decode[Conversation](c, c.Do("GET", fmt.Sprintf("/api/conversations/%d", id), nil))
}

// SendMessage sends POST /api/conversations/{id}/messages.
func (c *Client) SendMessage(id int64, content string) Response {
	c.env.T.Helper()
	return c.Do("POST", fmt.Sprintf("/api/conversations/%d/messages", id), map[string]string{"content": content})
}

// AnswerConversation sends POST /api/conversations/{id}/answer.
func (c *Client) AnswerConversation(id int64, a Answer) Response {
	c.env.T.Helper()
	return c.Do("POST", fmt.Sprintf("/api/conversations/%d/answer", id), a)
}

// EndTour sends POST /api/conversations/{id}/end-tour.
func (c *Client) EndTour(id int64) (Conversation, Response) {
	c.env.T.Helper()
	return decode[Conversation](c, c.Do("POST", fmt.Sprintf("/api/conversations/%d/end-tour", id), nil))
}

// SkillVersion is a skill's version.
type SkillVersion struct {
	Name         string   `json:"name"`
	Description  string   `json:"description"`
	Body         string   `json:"body"`
	Support      string   `json:"support"`
	AllowedTools []string `json:"allowedTools"`
	Process      bool     `json:"process"`
}

// SkillItem is the SkillItem of docs/API.md.
type SkillItem struct {
	UID          int64    `json:"uid"`
	Source       int64    `json:"source"`
	Identifier   string   `json:"identifier"`
	Name         string   `json:"name"`
	Description  string   `json:"description"`
	Process      bool     `json:"process"`
	Enabled      bool     `json:"enabled"`
	Orphaned     bool     `json:"orphaned"`
	Digest       string   `json:"digest"`
	Instructs    bool     `json:"instructs"`
	AllowedTools []string `json:"allowedTools"`
}

// SkillSource is the Source of docs/API.md.
type SkillSource struct {
	UID       int64     `json:"uid"`
	Type      string    `json:"type"`
	Title     string    `json:"title"`
	Path      string    `json:"path,omitempty"`
	Trust     string    `json:"trust"`
	Enabled   bool      `json:"enabled"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// SkillApproval is the Approval of docs/API.md.
type SkillApproval struct {
	ID         int64        `json:"id"`
	Skill      int64        `json:"skill"`
	Source     int64        `json:"source"`
	Digest     string       `json:"digest"`
	Version    SkillVersion `json:"version"`
	Trust      string       `json:"trust"`
	ApprovedBy int64        `json:"approvedBy"`
	ApprovedAt time.Time    `json:"approvedAt"`
	RevokedBy  int64        `json:"revokedBy,omitempty"`
	RevokedAt  *time.Time   `json:"revokedAt,omitempty"`
}

// DiffLine is one line of a SkillDetail's diff.
type DiffLine struct {
	Op   string `json:"op"`
	Text string `json:"text"`
}

// SkillHistory is one version of a skill's history.
type SkillHistory struct {
	ID      int64        `json:"id"`
	Skill   int64        `json:"skill"`
	User    int64        `json:"user"`
	Version SkillVersion `json:"version"`
	Digest  string       `json:"digest"`
	At      time.Time    `json:"at"`
}

// SkillAudit is one entry of a skill's audit trail.
type SkillAudit struct {
	ID     int64     `json:"id"`
	Event  string    `json:"event"`
	Skill  int64     `json:"skill,omitempty"`
	Source int64     `json:"source,omitempty"`
	Digest string    `json:"digest,omitempty"`
	Actor  int64     `json:"actor"`
	Detail string    `json:"detail,omitempty"`
	At     time.Time `json:"at"`
}

// SkillDetail is the SkillDetail of docs/API.md.
type SkillDetail struct {
	UID            int64           `json:"uid"`
	Identifier     string          `json:"identifier"`
	Version        SkillVersion    `json:"version"`
	Digest         string          `json:"digest"`
	RawFrontMatter string          `json:"rawFrontMatter"`
	Enabled        bool            `json:"enabled"`
	Orphaned       bool            `json:"orphaned"`
	Instructs      bool            `json:"instructs"`
	UpdatedAt      time.Time       `json:"updatedAt"`
	Source         SkillSource     `json:"source"`
	Approvals      []SkillApproval `json:"approvals"`
	LastApproved   *SkillApproval  `json:"lastApproved"`
	Diff           []DiffLine      `json:"diff"`
	History        []SkillHistory  `json:"history"`
	Audit          []SkillAudit    `json:"audit"`
}

// SkillSources is the answer of GET /api/skill-sources.
type SkillSources struct {
	Sources []SkillSource `json:"sources"`
}

// SkillList is the answer of GET /api/skills.
type SkillList struct {
	Skills []SkillItem `json:"skills"`
}

// Attachment is the answer of POST /api/configurations/{uid}/skills.
type Attachment struct {
	Configuration int64  `json:"configuration"`
	Skill         int64  `json:"skill"`
	Mode          string `json:"mode"`
}

// CatalogueEntry is one skill of GET /api/configurations/{uid}/skills.
type CatalogueEntry struct {
	UID         int64  `json:"uid"`
	Source      int64  `json:"source"`
	Identifier  string `json:"identifier"`
	Name        string `json:"name"`
	Description string `json:"description"`
	Mode        string `json:"mode"`
	Instructs   bool   `json:"instructs"`
	Process     bool   `json:"process"`
	Digest      string `json:"digest"`
}

// Catalogue is the answer of GET /api/configurations/{uid}/skills.
type Catalogue struct {
	Skills []CatalogueEntry `json:"skills"`
}

// SyncReport is the SyncReport of docs/API.md (POST
// /api/skill-sources/{uid}/sync). A list that reads null or is absent is a
// nil slice, one that reads [] an empty non-nil slice: List tells them apart.
type SyncReport struct {
	Source    int64    `json:"source"`
	Added     []string `json:"added"`
	Changed   []string `json:"changed"`
	Disabled  []string `json:"disabled"`
	Orphaned  []string `json:"orphaned"`
	Restored  []string `json:"restored"`
	Unchanged []string `json:"unchanged"`
}

// List formats one of the report's lists as the test reads it: "[a b]",
// "[]" for an empty list, "<nil>" for a null or missing one.
func List(l []string) string {
	if l == nil {
		return "<nil>"
	}
	return fmt.Sprint(l)
}

// CreateSkill is the body of POST /api/skills.
type CreateSkill struct {
	Source     int64  `json:"source"`
	Identifier string `json:"identifier"`
	Markdown   string `json:"markdown"`
}

// Skills sends GET /api/skills.
func (c *Client) Skills() ([]SkillItem, Response) {
	c.env.T.Helper()
	v, r := decode[struct {
		Skills []SkillItem `json:"skills"`
	}](c, c.Do("GET", "/api/skills", nil))
	return v.Skills, r
}

// Skill sends GET /api/skills/{uid}.
func (c *Client) Skill(uid int64) (SkillDetail, Response) {
	c.env.T.Helper()
	return decode[SkillDetail](c, c.Do("GET", fmt.Sprintf("/api/skills/%d", uid), nil))
}

// CreateSkill sends POST /api/skills.
func (c *Client) CreateSkill(req CreateSkill) (SkillDetail, Response) {
	c.env.T.Helper()
	return decode[SkillDetail](c, c.Do("POST", "/api/skills", req))
}

// EditSkill sends PUT /api/skills/{uid} with a new SKILL.md.
func (c *Client) EditSkill(uid int64, markdown string) (SkillDetail, Response) {
	c.env.T.Helper()
	return decode[SkillDetail](c, c.Do("PUT", fmt.Sprintf("/api/skills/%d", uid), map[string]string{"markdown": markdown}))
}

// ApproveSkill sends POST /api/skills/{uid}/approve with the digest shown.
func (c *Client) ApproveSkill(uid int64, digest string) (SkillApproval, Response) {
	c.env.T.Helper()
	return decode[SkillApproval](c, c.Do("POST", fmt.Sprintf("/api/skills/%d/approve", uid), map[string]string{"digest": digest}))
}

// SetSkillEnabled sends POST /api/skills/{uid}/enable or /disable.
func (c *Client) SetSkillEnabled(uid int64, enabled bool) (SkillItem, Response) {
	c.env.T.Helper()
	op := "disable"
	if enabled {
		op = "enable"
	}
	return decode[SkillItem](c, c.Do("POST", fmt.Sprintf("/api/skills/%d/%s", uid, op), nil))
}

// Me is the answer of GET /api/me.
type Me struct {
	UID             int64    `json:"uid"`
	Username        string   `json:"username"`
	Admin           bool     `json:"admin"`
	ServiceAccount  bool     `json:"serviceAccount"`
	Groups          []int64  `json:"groups"`
	Languages       []int64  `json:"languages"`
	AllLanguages    bool     `json:"allLanguages"`
	Mounts          []int64  `json:"mounts"`
	Grants          []string `json:"grants"`
	BackendLanguage string   `json:"backendLanguage"`
}

// Account is a user of the administration (GET /api/admin/users/{uid}).
type Account struct {
	UID             int64    `json:"uid"`
	Username        string   `json:"username"`
	Active          bool     `json:"active"`
	Admin           bool     `json:"admin"`
	ServiceAccount  bool     `json:"serviceAccount"`
	BackendLanguage string   `json:"backendLanguage"`
	Groups          []int64  `json:"groups"`
	Languages       []int64  `json:"languages"`
	Mounts          []int64  `json:"mounts"`
	Grants          []string `json:"grants"`
	HasPassword     bool     `json:"hasPassword"`
	Tokens          int      `json:"tokens"`
}

// Accounts is the answer of GET /api/admin/users.
type Accounts struct {
	Users []Account `json:"users"`
}

// Group is the Group of docs/API.md (GET /api/admin/groups/{uid}). A list
// that reads null is a nil slice, one that reads [] an empty non-nil one.
type Group struct {
	UID              int64    `json:"uid"`
	Title            string   `json:"title"`
	TablesSelect     []string `json:"tablesSelect"`
	TablesModify     []string `json:"tablesModify"`
	NonExcludeFields []string `json:"nonExcludeFields"`
	Languages        []int64  `json:"languages"`
	Mounts           []int64  `json:"mounts"`
	Subgroups        []int64  `json:"subgroups"`
	Grants           []string `json:"grants"`
}

// Groups is the answer of GET /api/admin/groups.
type Groups struct {
	Groups []Group `json:"groups"`
}

// IssuedToken is the answer of POST /api/admin/users/{uid}/tokens: the
// token, shown this once.
type IssuedToken struct {
	Token     string    `json:"token"`
	User      int64     `json:"user"`
	Label     string    `json:"label"`
	CreatedAt time.Time `json:"createdAt"`
}

// AdminConfiguration is a configuration of the administration (GET
// /api/admin/configurations/{uid}): never its key, only whether one is stored.
type AdminConfiguration struct {
	UID                   int64           `json:"uid"`
	Identifier            string          `json:"identifier"`
	Name                  string          `json:"name"`
	Active                bool            `json:"active"`
	ProviderType          string          `json:"providerType"`
	BaseURL               string          `json:"baseUrl"`
	HasAPIKey             bool            `json:"hasApiKey"`
	Model                 string          `json:"model"`
	Script                json.RawMessage `json:"script,omitempty"`
	ContextWindow         int64           `json:"contextWindow"`
	MaxOutputTokens       int64           `json:"maxOutputTokens"`
	RequireSecondApprover bool            `json:"requireSecondApprover"`
	Privacy               string          `json:"privacy"`
	SystemPrompt          string          `json:"systemPrompt"`
	AllowedGroups         []int64         `json:"allowedGroups"`
	ToolGroups            []string        `json:"toolGroups"`
	MaxIterations         int             `json:"maxIterations"`
	TokenBudget           int64           `json:"tokenBudget"`
	UpdatedAt             time.Time       `json:"updatedAt"`
}

// AdminConfigurations is the answer of GET /api/admin/configurations.
type AdminConfigurations struct {
	Configurations []AdminConfiguration `json:"configurations"`
}

// ProbeError is the classified failure of a connection test.
type ProbeError struct {
	Kind    string `json:"kind"`
	Status  int    `json:"status,omitempty"`
	Message string `json:"message"`
}

// ConnectionTest is the answer of POST /api/admin/configurations/{uid}/test.
type ConnectionTest struct {
	OK         bool        `json:"ok"`
	Model      string      `json:"model"`
	Reply      string      `json:"reply,omitempty"`
	Usage      Usage       `json:"usage"`
	DurationMS int64       `json:"durationMs"`
	Error      *ProbeError `json:"error,omitempty"`
}
