package web

import (
	"testing"

	"waymark/internal/catalog"
	"waymark/internal/skill"
)

// Every key the skills screens build from a code is in the
// catalogue: reasons, trust levels, source types, load modes, refusals.
func TestSkillScreensCatalogueHasEveryBuiltKey(t *testing.T) {
	var keys []string
	for _, r := range []skill.Reason{skill.ReasonOrphaned, skill.ReasonDisabled, skill.ReasonSourceDisabled, skill.ReasonUntrusted,
		skill.ReasonRevoked, skill.ReasonNoApproval} {
		keys = append(keys, "skills.why."+string(r))
	}
	for _, tr := range []skill.Trust{skill.Untrusted, skill.Community, skill.Verified, skill.FirstParty} {
		keys = append(keys, "skills.trust."+string(tr))
	}
	for _, st := range []skill.SourceType{skill.Backend, skill.Directory} {
		keys = append(keys, "skills.sourceType."+string(st))
	}
	for _, m := range []skill.LoadMode{skill.Always, skill.OnDemand} {
		keys = append(keys, "skills.mode."+string(m))
	}
	for _, c := range []skill.Refusal{skill.RefusedDenied, skill.RefusedStale, skill.RefusedOrphaned, skill.RefusedUnknownDigest} {
		keys = append(keys, "skills.error."+string(c))
	}
	for _, k := range keys {
		if !catalog.Has(k) {
			t.Errorf("the skills screens look up %q, which the catalogue lacks", k)
		}
	}
}
