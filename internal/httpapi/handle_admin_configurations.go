package httpapi

import (
	"encoding/json"
	"net/http"

	"waymark/internal/llmconfig"
)

// configurationBody is what an administrator sends for a configuration
// (API.md, Administration). APIKey is write-only: absent (or null) keeps the
// stored key, "" removes it, anything else replaces it.
type configurationBody struct {
	UID                   int64                  `json:"uid"`
	Identifier            string                 `json:"identifier"`
	Name                  string                 `json:"name"`
	Active                bool                   `json:"active"`
	ProviderType          llmconfig.ProviderType `json:"providerType"`
	BaseURL               string                 `json:"baseUrl"`
	APIKey                *string                `json:"apiKey"`
	Model                 string                 `json:"model"`
	Script                json.RawMessage        `json:"script"`
	ContextWindow         int64                  `json:"contextWindow"`
	MaxOutputTokens       int64                  `json:"maxOutputTokens"`
	RequireSecondApprover bool                   `json:"requireSecondApprover"`
	Privacy               llmconfig.Privacy      `json:"privacy"`
	SystemPrompt          string                 `json:"systemPrompt"`
	AllowedGroups         []int64                `json:"allowedGroups"`
	ToolGroups            []string               `json:"toolGroups"`
	MaxIterations         int                    `json:"maxIterations"`
	TokenBudget           int64                  `json:"tokenBudget"`
	PriceInputPerMTok     float64                `json:"priceInputPerMTok"`
	PriceOutputPerMTok    float64                `json:"priceOutputPerMTok"`
	// Read-only fields of the answer, accepted and ignored so that a GET
	// answer can be edited and sent back.
	HasAPIKey any `json:"hasApiKey"`
	UpdatedAt any `json:"updatedAt"`
}

func (b configurationBody) configuration() llmconfig.Configuration {
	c := llmconfig.Configuration{UID: b.UID, Identifier: b.Identifier, Name: b.Name, Active: b.Active,
		ProviderType: b.ProviderType, BaseURL: b.BaseURL, Model: b.Model, Script: b.Script,
		ContextWindow: b.ContextWindow, MaxOutputTokens: b.MaxOutputTokens, RequireSecondApprover: b.RequireSecondApprover,
		Privacy: b.Privacy, SystemPrompt: b.SystemPrompt, AllowedGroups: b.AllowedGroups, ToolGroups: b.ToolGroups,
		MaxIterations: b.MaxIterations, TokenBudget: b.TokenBudget,
		PriceInputPerMTok: b.PriceInputPerMTok, PriceOutputPerMTok: b.PriceOutputPerMTok}
	if b.APIKey != nil {
		c.APIKey = *b.APIKey
	}
	return c
}

// handleAdminConfigurationList answers GET /api/admin/configurations.
func (s *Server) handleAdminConfigurationList(w http.ResponseWriter, r *http.Request) error {
	list, err := s.configs.List(r.Context())
	if err != nil {
		return err
	}
	if list == nil {
		list = []llmconfig.Configuration{}
	}
	return WriteJSON(w, http.StatusOK, map[string]any{"configurations": list})
}

// handleAdminConfigurationCreate answers POST /api/admin/configurations.
func (s *Server) handleAdminConfigurationCreate(w http.ResponseWriter, r *http.Request) error {
	var body configurationBody
	if err := DecodeJSON(r, &body); err != nil {
		return err
	}
	c, err := s.configs.Create(r.Context(), body.configuration())
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusCreated, c)
}

// handleAdminConfigurationGet answers GET /api/admin/configurations/{uid}.
func (s *Server) handleAdminConfigurationGet(w http.ResponseWriter, r *http.Request) error {
	uid, err := adminUID(r)
	if err != nil {
		return err
	}
	c, err := s.configs.Get(r.Context(), uid)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, c)
}

// handleAdminConfigurationUpdate answers PUT /api/admin/configurations/{uid}.
func (s *Server) handleAdminConfigurationUpdate(w http.ResponseWriter, r *http.Request) error {
	uid, err := adminUID(r)
	if err != nil {
		return err
	}
	var body configurationBody
	if err := DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.UID != 0 && body.UID != uid {
		return errInvalid.With("uid: the body names %d, the path %d", body.UID, uid)
	}
	body.UID = uid
	c, err := s.configs.Update(r.Context(), body.configuration(), body.APIKey)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, c)
}

// handleAdminConfigurationTest answers POST /api/admin/configurations/{uid}/test:
// one tiny provider call, answering the reply or the classified error.
func (s *Server) handleAdminConfigurationTest(w http.ResponseWriter, r *http.Request) error {
	uid, err := adminUID(r)
	if err != nil {
		return err
	}
	res, err := s.runtime.Probe(r.Context(), uid)
	if err != nil {
		return err
	}
	return WriteJSON(w, http.StatusOK, res)
}
