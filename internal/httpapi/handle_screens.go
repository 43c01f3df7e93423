package httpapi

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"waymark/internal/catalog"
	"waymark/internal/httpapi/sse"
	"waymark/internal/site"
)

// screenPoll is how often the streams a screen follows (a conversation, the
// inbox) look for changes: a stored event shows in the page within about
// 100 ms of its commit, at the cost of one read per stream and poll.
const screenPoll = 50 * time.Millisecond

// screenRoutes are the reads the editor's screens need, as thin
// handlers over the services the web UI calls.
func (s *Server) screenRoutes() {
	s.Handle("GET /api/labels", s.handleLabels)
	if s.site != nil {
		s.Handle("GET /api/pages", s.handlePageTree)
		s.Handle("GET /api/pages/{uid}/preview", s.handlePagePreview)
	}
	if s.configs != nil {
		s.Handle("GET /api/configurations", s.handleConfigurations)
	}
	if s.runtime != nil {
		s.Handle("GET /api/inbox/stream", s.handleInboxStream)
	}
}

// handleLabels answers GET /api/labels?lang=de: the UI's texts (card
// answers, outcome lines, statuses …) in lang, else the caller's backend language.
func (s *Server) handleLabels(w http.ResponseWriter, r *http.Request) error {
	lang := r.URL.Query().Get("lang")
	if lang == "" {
		lang = ActorFrom(r.Context()).BackendLanguage
	}
	t := catalog.For(lang)
	return WriteJSON(w, http.StatusOK, map[string]any{"lang": t.Lang(), "labels": t.All()})
}

// handlePageTree answers GET /api/pages: {pages: [Node…], languages: [Language…]}.
func (s *Server) handlePageTree(w http.ResponseWriter, r *http.Request) error {
	a := ActorFrom(r.Context())
	tree, err := s.site.Tree(r.Context(), a)
	if err != nil {
		return err
	}
	langs, err := s.site.Languages(r.Context(), a)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, map[string]any{"pages": tree, "languages": langs})
}

// handlePagePreview answers GET /api/pages/{uid}/preview?language=N; 404 alike
// for unknown pages and pages the caller may not show.
func (s *Server) handlePagePreview(w http.ResponseWriter, r *http.Request) error {
	uid, err := strconv.ParseInt(r.PathValue("uid"), 10, 64)
	if err != nil || uid <= 0 {
		return errNotFound
	}
	var lang int64
	if l := r.URL.Query().Get("language"); l != "" {
		if lang, err = strconv.ParseInt(l, 10, 64); err != nil || lang < 0 {
			return errBadRequest.With("language: want a language uid (0 or more)")
		}
	}
	p, err := s.site.Preview(r.Context(), ActorFrom(r.Context()), uid, lang)
	if errors.Is(err, site.ErrNotFound) {
		return errNotFound
	}
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, p)
}

// configurationItem is a configuration as a user who may use it sees it.
type configurationItem struct {
	UID                   int64  `json:"uid"`
	Identifier            string `json:"identifier"`
	Name                  string `json:"name"`
	RequireSecondApprover bool   `json:"requireSecondApprover"`
}

// handleConfigurations answers GET /api/configurations: the active
// configurations the caller may use (llmconfig.MayUse).
func (s *Server) handleConfigurations(w http.ResponseWriter, r *http.Request) error {
	list, err := s.configs.Usable(r.Context(), ActorFrom(r.Context()))
	if err != nil {
		return err
	}
	out := []configurationItem{}
	for _, c := range list {
		out = append(out, configurationItem{UID: c.UID, Identifier: c.Identifier, Name: c.Name, RequireSecondApprover: c.RequireSecondApprover})
	}
	return WriteJSON(w, http.StatusOK, map[string]any{"configurations": out})
}

// handleInboxStream answers GET /api/inbox/stream: an `inbox` event with the
// caller's inbox ({runs: [RunStatus…]}) now and whenever it changes; it ends
// once the caller's credential or account is gone.
func (s *Server) handleInboxStream(w http.ResponseWriter, r *http.Request) error {
	uid := ActorFrom(r.Context()).UID
	return s.stream(w, r, screenPoll, sse.LastEventID(r), sse.Snapshot("inbox", func(ctx context.Context) (any, error) {
		runs, err := s.runtime.Inbox(ctx, uid)
		if err != nil {
			return nil, err
		}
		return map[string]any{"runs": runs}, nil
	}))
}
