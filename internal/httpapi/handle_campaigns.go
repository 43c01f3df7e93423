package httpapi

import (
	"net/http"
	"strconv"

	"waymark/internal/campaign"
)

func campaignID(r *http.Request) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		return 0, campaign.ErrNotFound
	}
	return id, nil
}

// handleCampaignCreate answers POST /api/campaigns {process, configuration?,
// rootPage?, depth?, filter?, languages?, budget?, concurrency?} → 201 Campaign.
func (s *Server) handleCampaignCreate(w http.ResponseWriter, r *http.Request) error {
	var body campaign.Request
	if err := DecodeJSON(r, &body); err != nil {
		return err
	}
	v, err := s.campaigns.Create(r.Context(), ActorFrom(r.Context()).UID, body)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusCreated, v)
}

// handleCampaignEstimate answers POST /api/campaigns/estimate with the body
// of POST /api/campaigns → 200 Estimate: what the campaign would cover and
// cost, refused as its start would be; it makes nothing.
func (s *Server) handleCampaignEstimate(w http.ResponseWriter, r *http.Request) error {
	var body campaign.Request
	if err := DecodeJSON(r, &body); err != nil {
		return err
	}
	e, err := s.campaigns.Estimate(r.Context(), ActorFrom(r.Context()).UID, body)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, e)
}

// handleCampaignList answers GET /api/campaigns: the caller's campaigns (an
// administrator's: all), newest first.
func (s *Server) handleCampaignList(w http.ResponseWriter, r *http.Request) error {
	list, err := s.campaigns.List(r.Context(), ActorFrom(r.Context()))
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, map[string]any{"campaigns": list})
}

// handleCampaignGet answers GET /api/campaigns/{id}: state, counts and the
// estimated time left.
func (s *Server) handleCampaignGet(w http.ResponseWriter, r *http.Request) error {
	id, err := campaignID(r)
	if err != nil {
		return err
	}
	v, err := s.campaigns.Get(r.Context(), ActorFrom(r.Context()), id)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, v)
}

// handleCampaignChange answers POST /api/campaigns/{id}/pause|resume|cancel.
func (s *Server) handleCampaignChange(ev campaign.Event) HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := campaignID(r)
		if err != nil {
			return err
		}
		v, err := s.campaigns.Change(r.Context(), ActorFrom(r.Context()), id, ev)
		if err != nil {
			return err
		}
		return WriteJSON(w, http.StatusOK, v)
	}
}

// handleCampaignCards answers GET /api/campaigns/{id}/cards?page=&field=&kind=&offset=&limit=.
func (s *Server) handleCampaignCards(w http.ResponseWriter, r *http.Request) error {
	id, err := campaignID(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	var f campaign.CardFilter
	for _, p := range []struct {
		name string
		into func(int64)
	}{
		{"page", func(n int64) { f.Page = n }},
		{"offset", func(n int64) { f.Offset = int(n) }},
		{"limit", func(n int64) { f.Limit = int(n) }},
	} {
		raw := q.Get(p.name)
		if raw == "" {
			continue
		}
		n, err := strconv.ParseInt(raw, 10, 32)
		if err != nil || n < 0 {
			return errBadRequest.With("%s: want a number of 0 or more, got %q", p.name, raw)
		}
		p.into(n)
	}
	f.Field, f.Kind = q.Get("field"), q.Get("kind")
	page, err := s.campaigns.Cards(r.Context(), ActorFrom(r.Context()), id, f)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, page)
}

// handleCampaignAnswers answers POST /api/campaigns/{id}/answers {answer,
// instruction?, cards: [{conversation, turnDigest}]} → 200 {results: [...]},
// one result per card in the order named.
func (s *Server) handleCampaignAnswers(w http.ResponseWriter, r *http.Request) error {
	id, err := campaignID(r)
	if err != nil {
		return err
	}
	var body campaign.Answers
	if err := DecodeJSON(r, &body); err != nil {
		return err
	}
	res, err := s.campaigns.Answer(r.Context(), ActorFrom(r.Context()), id, body)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, map[string]any{"results": res})
}
