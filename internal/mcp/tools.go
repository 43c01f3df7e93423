package mcp

import (
	"cmp"
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"waymark/internal/access"
	"waymark/internal/catalog"
	"waymark/internal/chat"
	"waymark/internal/openpoint"
	"waymark/internal/site"
)

// The tools' inputs. Their field descriptions are what a model reads to
// call them; numbers are the uids of the JSON API.
type (
	noInput            struct{}
	listProcessesInput struct {
		Configuration int64 `json:"configuration,omitempty" jsonschema:"uid of the configuration (model setup) whose processes to list; omitted: the one a new tour would use"`
	}
	startTourInput struct {
		Page          int64  `json:"page" jsonschema:"uid of the page to work on (from list_pages)"`
		Language      int64  `json:"language" jsonschema:"uid of the page's language (0 is the default language; see list_pages)"`
		Process       string `json:"process,omitempty" jsonschema:"the process to run: its identifier such as seo-optimieren or its uid (from list_processes); omitted: a plain conversation"`
		Configuration int64  `json:"configuration,omitempty" jsonschema:"uid of the configuration to run on; omitted: the default"`
		Message       string `json:"message,omitempty" jsonschema:"a first message to the assistant; omitted for a process: the tour starts with the usual greeting"`
	}
	answerCardInput struct {
		Conversation int64  `json:"conversation" jsonschema:"id of the conversation"`
		TurnDigest   string `json:"turnDigest" jsonschema:"the turnDigest of the card being answered, as the conversation shows it"`
		Answer       string `json:"answer" jsonschema:"one of the answers the card offers: apply, variant, skip, keep (a process step) or approve, cancel"`
		Instruction  string `json:"instruction,omitempty" jsonschema:"with variant: what the new proposal should do differently (at most 500 characters)"`
	}
	answerQuestionInput struct {
		Conversation int64  `json:"conversation" jsonschema:"id of the conversation"`
		TurnDigest   string `json:"turnDigest" jsonschema:"the turnDigest of the question being answered"`
		Option       string `json:"option,omitempty" jsonschema:"one of the question's options"`
		Text         string `json:"text,omitempty" jsonschema:"an answer in the user's own words, when the question takes free text"`
	}
	sendMessageInput struct {
		Conversation int64  `json:"conversation" jsonschema:"id of the conversation"`
		Content      string `json:"content" jsonschema:"the message to the assistant"`
	}
	conversationInput struct {
		Conversation int64  `json:"conversation" jsonschema:"id of the conversation"`
		After        string `json:"after,omitempty" jsonschema:"the conversation's updatedAt as last read: wait until it changes (at most 30 seconds; a second person's release, the next card) and until the assistant has paused or finished; omitted: read at once"`
	}
	endTourInput struct {
		Conversation int64 `json:"conversation" jsonschema:"id of the conversation"`
	}
	listConversationsInput struct {
		Limit int `json:"limit,omitempty" jsonschema:"how many conversations at most, most recently changed first (1 to 200, default 20)"`
	}
	openPointsInput struct {
		Page  int64 `json:"page,omitempty" jsonschema:"uid of a page: only its open points; omitted: the whole site's, newest first"`
		Limit int   `json:"limit,omitempty" jsonschema:"how many open points at most (site-wide list; 1 to 200, default 20)"`
	}
)

// Tool annotations: what a client may assume of each tool.
var (
	// readOnly tools change nothing.
	readOnly = &sdk.ToolAnnotations{ReadOnlyHint: true, IdempotentHint: true, OpenWorldHint: ptr(false)}
	// answering tools carry out a decision (a card's answer writes to the
	// page); a second identical call is refused as stale, not repeated.
	answering = &sdk.ToolAnnotations{DestructiveHint: ptr(true), OpenWorldHint: ptr(false)}
	// talking tools add to a conversation without writing to the site.
	talking = &sdk.ToolAnnotations{DestructiveHint: ptr(false), OpenWorldHint: ptr(false)}
	// ending a tour withdraws its waiting card; ending it again changes nothing.
	ending = &sdk.ToolAnnotations{DestructiveHint: ptr(true), IdempotentHint: true, OpenWorldHint: ptr(false)}
)

func ptr[T any](v T) *T { return &v }

// addTools registers every tool on srv.
func (s *Server) addTools(srv *sdk.Server, who whoFunc) {
	sdk.AddTool(srv, &sdk.Tool{Name: "list_pages", Title: "List pages", Annotations: readOnly, OutputSchema: pagesSchema,
		Description: "Lists the page tree the user may work on and the languages the user may edit (uids for start_tour)."},
		tool(s, who, func(ctx context.Context, _ *sdk.CallToolRequest, a *access.Actor, _ noInput) (result, error) {
			tree, err := s.d.Site.Tree(ctx, a)
			if err != nil {
				return result{}, err
			}
			langs, err := s.d.Site.Languages(ctx, a)
			if err != nil {
				return result{}, err
			}
			if tree == nil {
				tree = []site.Node{}
			}
			if langs == nil {
				langs = []site.Language{}
			}
			return result{data: map[string]any{"pages": tree, "languages": langs}, text: pagesText(tree, langs)}, nil
		}))
	sdk.AddTool(srv, &sdk.Tool{Name: "list_processes", Title: "List processes", Annotations: readOnly, OutputSchema: processesSchema,
		Description: "Lists the guided processes (such as SEO optimisation) the user may start on a configuration, and the configurations the user may use."},
		tool(s, who, s.listProcesses))
	sdk.AddTool(srv, &sdk.Tool{Name: "start_tour", Title: "Start a guided tour", Annotations: talking, OutputSchema: conversationSchema,
		Description: "Starts a conversation about a page in a language, running a process, and returns it with its first card (a proposed change to answer with answer_card), question (answer_question) or state. " +
			"When the client supports elicitation, each card and question is asked of the user directly until the tour needs nothing more. " +
			"When it fails after the conversation was made, the error names the conversation (error.conversation)."},
		tool(s, who, s.startTour))
	sdk.AddTool(srv, &sdk.Tool{Name: "resume_tour", Title: "Resume a tour", Annotations: talking, OutputSchema: conversationSchema,
		Description: "Goes on with a tour where it stands: when the client supports elicitation, asks the card or question the conversation waits for, card by card, as start_tour does " +
			"(after a form was declined or cancelled, or the call ended while a form was open); otherwise returns the conversation."},
		tool(s, who, func(ctx context.Context, req *sdk.CallToolRequest, a *access.Actor, in endTourInput) (result, error) {
			return s.carryOn(ctx, req, a, in.Conversation)
		}))
	sdk.AddTool(srv, &sdk.Tool{Name: "answer_card", Title: "Answer a card", Annotations: answering, OutputSchema: conversationSchema,
		Description: "Answers the card a conversation waits for: apply (write the proposal), variant (ask for another proposal, optionally with an instruction), skip, keep (leave the field as it is), approve or cancel — only an answer the card offers. Returns the conversation once the answer is carried out."},
		tool(s, who, s.answerCard))
	sdk.AddTool(srv, &sdk.Tool{Name: "answer_question", Title: "Answer a question", Annotations: talking, OutputSchema: conversationSchema,
		Description: "Answers the question a conversation waits for, with one of its options or, when it takes free text, in the user's words."},
		tool(s, who, s.answerQuestion))
	sdk.AddTool(srv, &sdk.Tool{Name: "send_message", Title: "Send a message", Annotations: talking, OutputSchema: conversationSchema,
		Description: "Sends a message to the assistant of a conversation and returns the conversation once the assistant has paused or finished."},
		tool(s, who, s.sendMessage))
	sdk.AddTool(srv, &sdk.Tool{Name: "get_conversation", Title: "Read a conversation", Annotations: readOnly, OutputSchema: conversationSchema,
		Description: "Reads a conversation: its status, messages, the card or question it waits for, the outcomes and the tour's summary."},
		tool(s, who, func(ctx context.Context, req *sdk.CallToolRequest, a *access.Actor, in conversationInput) (result, error) {
			if in.After == "" {
				v, err := s.d.Chat.Get(ctx, a.UID, in.Conversation)
				return s.viewResult(a, v), err
			}
			after, err := time.Parse(time.RFC3339Nano, in.After)
			if err != nil {
				return result{}, errInvalid.With("after: want the conversation's updatedAt (RFC 3339), got %q", in.After)
			}
			// As GET /api/conversations/{id}?wait=&after=: the next change
			// (a decision taken elsewhere, the next card), then the pause.
			v, err := s.d.Chat.WaitChange(ctx, a.UID, in.Conversation, after, chat.MaxWait, nil)
			if err == nil {
				v, err = s.settleView(ctx, newProgress(req), a, v)
			}
			return s.viewResult(a, v), err
		}))
	sdk.AddTool(srv, &sdk.Tool{Name: "list_conversations", Title: "List conversations", Annotations: readOnly, OutputSchema: conversationsSchema,
		Description: "Lists the user's conversations, most recently changed first: id, status, page, language and process, to find a tour again (get_conversation, resume_tour)."},
		tool(s, who, s.listConversations))
	sdk.AddTool(srv, &sdk.Tool{Name: "end_tour", Title: "End a tour", Annotations: ending, OutputSchema: conversationSchema,
		Description: "Ends the tour of a conversation: a waiting card is withdrawn, and the conversation stays readable."},
		tool(s, who, func(ctx context.Context, _ *sdk.CallToolRequest, a *access.Actor, in endTourInput) (result, error) {
			v, err := s.d.Chat.EndTour(ctx, a.UID, in.Conversation)
			return s.viewResult(a, v), err
		}))
	sdk.AddTool(srv, &sdk.Tool{Name: "list_open_points", Title: "List open points", Annotations: readOnly, OutputSchema: openPointsSchema,
		Description: "Lists the open points (changes proposed but not applied, to check later) the user may see: of one page, or site-wide newest first as the dashboard shows them."},
		tool(s, who, s.listOpenPoints))
	if s.d.Campaigns != nil {
		s.addCampaignTools(srv, who)
	}
}

// result is a tool's answer: data is its structured content, text the
// readable form beside it.
type result struct {
	data any
	text string
}

// tool adapts a handler to the SDK: it names the user (who), runs the
// handler and turns a refusal into a tool error with the API's stable code.
func tool[In any](s *Server, who whoFunc, h func(context.Context, *sdk.CallToolRequest, *access.Actor, In) (result, error)) sdk.ToolHandlerFor[In, any] {
	return func(ctx context.Context, req *sdk.CallToolRequest, in In) (*sdk.CallToolResult, any, error) {
		a, err := who(ctx, req.Extra)
		if err != nil {
			return s.errorResult(ctx, req, err), nil, nil
		}
		r, err := h(ctx, req, a, in)
		if err != nil {
			return s.errorResult(ctx, req, err), nil, nil
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: r.text}}, StructuredContent: r.data}, nil, nil
	}
}

// listProcesses answers list_processes: the process catalogue of the
// configuration (process.Catalogue, as GET /api/configurations/{uid}/process-skills).
func (s *Server) listProcesses(ctx context.Context, _ *sdk.CallToolRequest, a *access.Actor, in listProcessesInput) (result, error) {
	cfg := in.Configuration
	if cfg == 0 {
		c, err := s.d.Chat.ConfigurationFor(ctx, a.UID)
		if err != nil {
			return result{}, err
		}
		cfg = c.UID
	}
	list, err := s.d.Catalogue.ForActor(ctx, a.UID, cfg)
	if err != nil {
		return result{}, err
	}
	// Each process by its name in the user's UI language, where the site
	// gave it one (skill.LocalNames).
	lang := catalog.Lang(a.BackendLanguage)
	for i, p := range list {
		if n, err := s.d.Skills.NamesOf(ctx, p.UID); err == nil {
			list[i].Name = n.Local.In(lang, p.Name)
		}
	}
	usable, err := s.d.Configs.Usable(ctx, a)
	if err != nil {
		return result{}, err
	}
	configs := []map[string]any{}
	for _, c := range usable {
		configs = append(configs, map[string]any{"uid": c.UID, "identifier": c.Identifier, "name": c.Name, "requireSecondApprover": c.RequireSecondApprover})
	}
	var b strings.Builder
	b.WriteString("Processes of configuration " + strconv.FormatInt(cfg, 10) + ":\n")
	for _, p := range list {
		b.WriteString("- " + p.Identifier + " (uid " + strconv.FormatInt(p.UID, 10) + "): " + p.Name + " — " + p.Description + "\n")
	}
	if len(list) == 0 {
		b.WriteString("(none)\n")
	}
	return result{data: map[string]any{"configuration": cfg, "processes": list, "configurations": configs}, text: b.String()}, nil
}

// startTour answers start_tour: chat.Start with the process resolved from
// its identifier, then the process's first message as the web UI sends it.
func (s *Server) startTour(ctx context.Context, req *sdk.CallToolRequest, a *access.Actor, in startTourInput) (result, error) {
	skillUID, err := s.processUID(ctx, a, in.Process, in.Configuration)
	if err != nil {
		return result{}, err
	}
	v, err := s.d.Chat.Start(ctx, a.UID, in.Page, in.Language, skillUID, in.Configuration)
	if err != nil {
		return result{}, err
	}
	msg := strings.TrimSpace(in.Message)
	if msg == "" && v.Skill != nil && v.Skill.Process {
		msg = catalog.For(a.BackendLanguage).Get("chat.startMessage", v.Skill.Name)
	}
	if msg != "" {
		if err := s.d.Chat.Send(ctx, a.UID, v.ID, msg); err != nil {
			return result{}, &madeError{conversation: v.ID, err: err}
		}
	}
	r, err := s.carryOn(ctx, req, a, v.ID)
	if err != nil {
		return result{}, &madeError{conversation: v.ID, err: err}
	}
	return r, nil
}

// madeError is a start_tour that failed after it made its conversation:
// the tool error names the conversation, so the client can find it again.
type madeError struct {
	conversation int64
	err          error
}

func (e *madeError) Error() string {
	return "conversation " + strconv.FormatInt(e.conversation, 10) + " was made: " + e.err.Error()
}
func (e *madeError) Unwrap() error { return e.err }

// listConversations answers list_conversations as GET /api/conversations
// lists them, at most limit.
func (s *Server) listConversations(ctx context.Context, _ *sdk.CallToolRequest, a *access.Actor, in listConversationsInput) (result, error) {
	limit := cmp.Or(in.Limit, 20)
	if limit < 1 || limit > 200 {
		return result{}, errInvalid.With("limit: want 1 to 200")
	}
	list, err := s.d.Chat.List(ctx, a.UID)
	if err != nil {
		return result{}, err
	}
	list = list[:min(limit, len(list))]
	items := []map[string]any{}
	var b strings.Builder
	for _, v := range list {
		items = append(items, conversationItem(v))
		b.WriteString(conversationLine(v) + "\n")
	}
	if len(list) == 0 {
		b.WriteString("No conversations.")
	}
	return result{data: map[string]any{"conversations": items}, text: b.String()}, nil
}

// processUID resolves the process start_tour names — an identifier or a uid
// — in the user's skill catalogue of the configuration; chat.Start decides
// whether it may run. "" is no process.
func (s *Server) processUID(ctx context.Context, a *access.Actor, name string, cfg int64) (int64, error) {
	name = strings.TrimSpace(name)
	if name == "" {
		return 0, nil
	}
	if uid, err := strconv.ParseInt(name, 10, 64); err == nil {
		return uid, nil
	}
	if cfg == 0 {
		c, err := s.d.Chat.ConfigurationFor(ctx, a.UID)
		if err != nil {
			return 0, err
		}
		cfg = c.UID
	}
	entries, err := s.d.Skills.Catalogue(ctx, a.UID, cfg)
	if err != nil {
		return 0, chat.ErrConfigNotFound // answered as chat.Start answers a configuration it may not use
	}
	for _, e := range entries {
		if e.Identifier == name {
			return e.UID, nil
		}
	}
	return 0, chat.ErrUnavailable
}

func (s *Server) answerCard(ctx context.Context, req *sdk.CallToolRequest, a *access.Actor, in answerCardInput) (result, error) {
	if err := s.d.Chat.AnswerWith(ctx, a.UID, in.Conversation, in.TurnDigest, in.Answer, chat.AnswerOptions{Instruction: in.Instruction}); err != nil {
		return result{}, err
	}
	return s.carryOn(ctx, req, a, in.Conversation)
}

func (s *Server) answerQuestion(ctx context.Context, req *sdk.CallToolRequest, a *access.Actor, in answerQuestionInput) (result, error) {
	if err := s.d.Chat.AnswerQuestion(ctx, a.UID, in.Conversation, in.TurnDigest, in.Option, in.Text); err != nil {
		return result{}, err
	}
	return s.carryOn(ctx, req, a, in.Conversation)
}

func (s *Server) sendMessage(ctx context.Context, req *sdk.CallToolRequest, a *access.Actor, in sendMessageInput) (result, error) {
	if err := s.d.Chat.Send(ctx, a.UID, in.Conversation, in.Content); err != nil {
		return result{}, err
	}
	return s.carryOn(ctx, req, a, in.Conversation)
}

// listOpenPoints answers list_open_points as GET /api/pages/{uid}/open-points
// and GET /api/open-points do.
func (s *Server) listOpenPoints(ctx context.Context, _ *sdk.CallToolRequest, a *access.Actor, in openPointsInput) (result, error) {
	var (
		list []openpoint.Entry
		err  error
	)
	if in.Page != 0 {
		list, err = s.d.OpenPoints.ForPage(ctx, a.UID, in.Page, 0)
		if errors.Is(err, openpoint.ErrNotFound) {
			err = chat.ErrNotFound // answered like every other missing or hidden thing
		}
	} else {
		limit := in.Limit
		if limit == 0 {
			limit = openpoint.DefaultLimit
		}
		if limit < 1 || limit > openpoint.MaxLimit {
			return result{}, errInvalid.With("limit: want 1 to %d", openpoint.MaxLimit)
		}
		list, err = s.d.OpenPoints.Visible(ctx, a.UID, limit)
	}
	if err != nil {
		return result{}, err
	}
	if list == nil {
		list = []openpoint.Entry{}
	}
	return result{data: map[string]any{"openPoints": list}, text: openPointsText(list)}, nil
}
