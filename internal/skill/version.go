package skill

import (
	"fmt"
	"slices"
)

// Version is the digested content of one skill version: exactly the fields
// a change of which makes a new version. Front-matter keys nothing reads are
// not part of it.
type Version struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	Body        string `json:"body"`
	Support     string `json:"support"`
	// AllowedTools is the declared tool list: nil when the skill declares
	// nothing, non-nil (possibly empty) when it declares a list.
	AllowedTools []string `json:"allowedTools"`
	Process      bool     `json:"process"`
}

// Normalized returns v with AllowedTools sorted and de-duplicated (nil stays nil).
func (v Version) Normalized() Version {
	if v.AllowedTools != nil {
		t := slices.Clone(v.AllowedTools)
		slices.Sort(t)
		v.AllowedTools = slices.Compact(t)
		if v.AllowedTools == nil {
			v.AllowedTools = []string{}
		}
	}
	return v
}

// Trust is a source's trust level, ordered untrusted < community < verified < first_party.
type Trust string

// The trust levels.
const (
	Untrusted  Trust = "untrusted"
	Community  Trust = "community"
	Verified   Trust = "verified"
	FirstParty Trust = "first_party"
)

// Rank orders the levels (0 untrusted … 3 first_party); -1 for an unknown level.
func (t Trust) Rank() int {
	return slices.Index([]Trust{Untrusted, Community, Verified, FirstParty}, t)
}

// AtLeast reports t ≥ floor; an unknown level is below everything.
func (t Trust) AtLeast(floor Trust) bool { return t.Rank() >= 0 && t.Rank() >= floor.Rank() }

// ParseTrust parses a level name.
func ParseTrust(s string) (Trust, error) {
	t := Trust(s)
	if t.Rank() < 0 {
		return "", fmt.Errorf("unknown trust level %q: want untrusted, community, verified or first_party", s)
	}
	return t, nil
}
