package llmconfig

import (
	"encoding/json"
	"time"
)

// ProviderType names the kind of model server a configuration talks to.
type ProviderType string

// The provider types (API.md §2).
const (
	ProviderOpenAI ProviderType = "openai" // any OpenAI-compatible chat-completions server
	ProviderDemo   ProviderType = "demo"   // the built-in offline model
	ProviderScript ProviderType = "script" // tests: canned replies from Configuration.Script
)

// Privacy is how much of a run's content is kept (DESIGN.md §5). The run
// package applies it; the values here are the same strings.
type Privacy string

// The privacy levels, from least to most kept.
const (
	PrivacyNone     Privacy = "none"
	PrivacyMetadata Privacy = "metadata" // the default: ids, counts, digests and times, never content
	PrivacyRedacted Privacy = "redacted"
	PrivacyFull     Privacy = "full"
)

// Defaults filled in by PutTx for zero values.
const (
	DefaultPrivacy       = PrivacyMetadata
	DefaultMaxIterations = 20
)

// Configuration is one LLM configuration as stored.
//
// APIKey is write-only: PutTx seals it, reads leave it empty and report only
// HasAPIKey; Store.APIKey decrypts it for the provider call. It is never
// serialised to JSON.
type Configuration struct {
	UID        int64  `json:"uid"`
	Identifier string `json:"identifier"` // slug, unique
	Name       string `json:"name"`
	Active     bool   `json:"active"` // an inactive configuration is unusable by everyone

	ProviderType ProviderType `json:"providerType"`
	BaseURL      string       `json:"baseUrl,omitempty"` // openai: the server; empty = the client library's default
	APIKey       string       `json:"-"`
	HasAPIKey    bool         `json:"hasApiKey"` // set by reads: a sealed key is stored
	Model        string       `json:"model"`
	// Script is the JSON array of canned replies of the script provider; the
	// llm package defines their shape. Stored as "[]" when empty.
	Script json.RawMessage `json:"script,omitempty"`

	ContextWindow         int64   `json:"contextWindow"`   // tokens, > 0
	MaxOutputTokens       int64   `json:"maxOutputTokens"` // 0 = the provider's default; < ContextWindow
	RequireSecondApprover bool    `json:"requireSecondApprover"`
	Privacy               Privacy `json:"privacy"`
	SystemPrompt          string  `json:"systemPrompt"`
	// AllowedGroups lists backend group uids whose members (subgroups
	// included) may use the configuration. Empty means administrators only.
	AllowedGroups []int64 `json:"allowedGroups"`
	// ToolGroups lists the tool groups the model is offered; empty means all.
	ToolGroups    []string `json:"toolGroups"`
	MaxIterations int      `json:"maxIterations"` // tool-loop rounds per run, 1..100
	TokenBudget   int64    `json:"tokenBudget"`   // tokens per run; 0 = unlimited
	// The provider's prices per million input (prompt) and output
	// (completion) tokens, in the currency the installation bills in; 0 =
	// not priced. Each recorded usage is priced with them when it is
	// recorded (the costs report, a card's and a tour's cost).
	PriceInputPerMTok  float64 `json:"priceInputPerMTok"`
	PriceOutputPerMTok float64 `json:"priceOutputPerMTok"`

	UpdatedAt time.Time `json:"updatedAt"` // set by PutTx
}
