package llmconfig

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/url"
	"regexp"
	"slices"

	"waymark/internal/access"
	"waymark/internal/fault"
)

// ErrInvalid is matched (errors.Is) by every *FieldError (400 invalid).
var ErrInvalid = fault.Detailed(fault.Invalid, "invalid", "invalid configuration")

// FieldError is returned by PutTx when a configuration does not validate.
// Field is the JSON name of the offending field.
type FieldError struct {
	UID    int64
	Field  string
	Reason string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("configuration %d: %s: %s", e.UID, e.Field, e.Reason)
}

// Unwrap lets errors.Is(err, ErrInvalid) match.
func (e *FieldError) Unwrap() error { return ErrInvalid }

// Fault is ErrInvalid with "field: reason" as the message.
func (e *FieldError) Fault() *fault.Error { return ErrInvalid.With("%s: %s", e.Field, e.Reason) }

// MaxIterationsLimit is the largest allowed MaxIterations.
const MaxIterationsLimit = 100

// MaxPricePerMTok bounds a configuration's price per million tokens (a
// typo of a few zeros is refused rather than billed).
const MaxPricePerMTok = 10000

var slug = regexp.MustCompile(`^[a-z0-9]+(?:[-_][a-z0-9]+)*$`)

// withDefaults fills the zero values that have a default.
func withDefaults(c Configuration) Configuration {
	if c.Privacy == "" {
		c.Privacy = DefaultPrivacy
	}
	if c.MaxIterations == 0 {
		c.MaxIterations = DefaultMaxIterations
	}
	if len(bytes.TrimSpace(c.Script)) == 0 {
		c.Script = json.RawMessage("[]")
	}
	if c.AllowedGroups == nil {
		c.AllowedGroups = []int64{}
	}
	if c.ToolGroups == nil {
		c.ToolGroups = []string{}
	}
	return c
}

// Validate reports every field of c (after defaults) that is not valid, in
// form order: one *FieldError alone, several as access.FieldErrors (errors.As
// finds the first), so a form shows all its errors in one answer.
func Validate(c Configuration) error {
	c = withDefaults(c)
	var bad access.FieldErrors
	fail := func(field, format string, args ...any) {
		bad = append(bad, &FieldError{UID: c.UID, Field: field, Reason: fmt.Sprintf(format, args...)})
	}
	if c.UID <= 0 {
		fail("uid", "must be a positive number, got %d", c.UID)
	}
	if !slug.MatchString(c.Identifier) || len(c.Identifier) > 64 {
		fail("identifier", "must be a slug of lowercase letters, digits, '-' and '_' (at most 64), got %q", c.Identifier)
	}
	switch c.ProviderType {
	case ProviderOpenAI:
		if c.Model == "" {
			fail("model", "is required for provider type openai")
		}
		if c.BaseURL != "" {
			u, err := url.Parse(c.BaseURL)
			if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				fail("baseUrl", "must be an http(s) URL with a host, got %q", c.BaseURL)
			}
		}
	case ProviderDemo, ProviderScript:
	default:
		fail("providerType", "must be one of openai, demo, script, got %q", c.ProviderType)
	}
	var script []json.RawMessage
	if err := json.Unmarshal(c.Script, &script); err != nil {
		fail("script", "must be a JSON array of replies")
	}
	if c.ContextWindow <= 0 {
		fail("contextWindow", "must be greater than 0, got %d", c.ContextWindow)
	} else if c.MaxOutputTokens < 0 || c.MaxOutputTokens >= c.ContextWindow {
		fail("maxOutputTokens", "must be at least 0 and less than contextWindow (%d), got %d", c.ContextWindow, c.MaxOutputTokens)
	}
	if !validPrivacy(c.Privacy) {
		fail("privacy", "must be one of none, metadata, redacted, full, got %q", c.Privacy)
	}
	if c.MaxIterations < 1 || c.MaxIterations > MaxIterationsLimit {
		fail("maxIterations", "must be between 1 and %d, got %d", MaxIterationsLimit, c.MaxIterations)
	}
	if c.TokenBudget < 0 {
		fail("tokenBudget", "must be 0 (unlimited) or more, got %d", c.TokenBudget)
	}
	for _, p := range []struct {
		field string
		v     float64
	}{{"priceInputPerMTok", c.PriceInputPerMTok}, {"priceOutputPerMTok", c.PriceOutputPerMTok}} {
		if math.IsNaN(p.v) || math.IsInf(p.v, 0) || p.v < 0 || p.v > MaxPricePerMTok {
			fail(p.field, "must be a price per million tokens from 0 (not priced) to %d, got %v", MaxPricePerMTok, p.v)
		}
	}
	for _, g := range c.AllowedGroups {
		if g <= 0 {
			fail("allowedGroups", "group uids must be positive, got %d", g)
			break
		}
	}
	if slices.Contains(c.ToolGroups, "") {
		fail("toolGroups", "must not contain an empty name")
	}
	return fieldErrors(bad)
}

// fieldErrors is nil for none, the one error alone, or all of them.
func fieldErrors(bad access.FieldErrors) error {
	switch len(bad) {
	case 0:
		return nil
	case 1:
		return bad[0]
	}
	return bad
}

func validPrivacy(p Privacy) bool {
	switch p {
	case PrivacyNone, PrivacyMetadata, PrivacyRedacted, PrivacyFull:
		return true
	}
	return false
}
