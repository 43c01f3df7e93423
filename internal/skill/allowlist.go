package skill

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// AllowList is the skill tool allow-list of a run (ADR-214 item 5). When
// Declared is false no effective skill declares tools and the list restricts
// nothing; when true only Tools (sorted, de-duplicated, possibly empty:
// "declared nothing" blocks every tool) are allowed. It is fixed at run start
// and stored with the run; JSON is null or the list.
type AllowList struct {
	Tools    []string
	Declared bool
}

// Allows reports whether the list lets the named tool run.
func (a AllowList) Allows(name string) bool {
	if !a.Declared {
		return true
	}
	return slices.Contains(a.Tools, name)
}

// WithDeclaration joins one skill's declaration (a pinned snapshot's or an
// invoked skill's allowed-tools) into the union: nil declares nothing and
// leaves a unchanged; a non-nil list, even empty, makes a declared.
func (a AllowList) WithDeclaration(tools []string) AllowList {
	if tools == nil {
		return a
	}
	u := append(slices.Clone(a.Tools), tools...)
	slices.Sort(u)
	return AllowList{Tools: slices.Compact(u), Declared: true}.fix()
}

// fix keeps Tools non-nil when declared.
func (a AllowList) fix() AllowList {
	if a.Declared && a.Tools == nil {
		a.Tools = []string{}
	}
	return a
}

// Intersect is what a resumed run may use: the live list b within the stored
// list a. An undeclared list is no restriction (nil ∩ X = X), and otherwise the
// result holds only tools in both, so a resume can never gain a tool.
func (a AllowList) Intersect(b AllowList) AllowList {
	switch {
	case !a.Declared:
		return b.fix()
	case !b.Declared:
		return a.fix()
	}
	out := []string{}
	for _, t := range a.Tools {
		if b.Allows(t) {
			out = append(out, t)
		}
	}
	return AllowList{Tools: out, Declared: true}
}

// MarshalJSON writes null when undeclared, else the list.
func (a AllowList) MarshalJSON() ([]byte, error) {
	if !a.Declared {
		return []byte("null"), nil
	}
	return json.Marshal(a.fix().Tools)
}

// UnmarshalJSON reads null or a list of tool names.
func (a *AllowList) UnmarshalJSON(b []byte) error {
	var t []string
	if err := json.Unmarshal(b, &t); err != nil {
		return fmt.Errorf("skill allow-list: %w", err)
	}
	*a = AllowList{}.WithDeclaration(t)
	return nil
}

// AllowListFor resolves, at run start, the union of the declarations of the
// configuration's effective skills (attached in either mode, enabled, not
// orphaned, admitted; process skills excluded: an invoked or pinned process
// joins through WithDeclaration). A directory skill contributes its live
// allowed-tools (which, when it instructs, are those of its approved
// snapshot: same digest); a backend skill contributes the allowed-tools of its
// latest unrevoked approved snapshot, and a declared empty list when it has none.
func (s *Store) AllowListFor(ctx context.Context, configUID int64) (AllowList, error) {
	eff, err := s.effectiveSkills(ctx, configUID)
	if err != nil {
		return AllowList{}, err
	}
	var a AllowList
	for _, e := range eff {
		if e.Process {
			continue
		}
		var tools []string
		if e.sourceType == Backend {
			tools, err = s.approvedTools(ctx, e.UID, e.Source)
		} else {
			tools, err = decodeTools(e.tools)
		}
		if err != nil {
			return AllowList{}, fmt.Errorf("allow-list of configuration %d, skill %d: %w", configUID, e.UID, err)
		}
		a = a.WithDeclaration(tools)
	}
	return a, nil
}

// approvedTools is the declaration of the latest unrevoked approval of a
// skill in its source, any digest; an empty declaration when there is none.
func (s *Store) approvedTools(ctx context.Context, skill, source int64) ([]string, error) {
	var tools string
	err := s.db.QueryRow(ctx, `SELECT allowed_tools FROM skill_approvals
		WHERE skill_uid = ? AND source_uid = ? AND revoked_at = 0 ORDER BY id DESC LIMIT 1`, skill, source).Scan(&tools)
	if errors.Is(err, sql.ErrNoRows) {
		return []string{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("approved tools of skill %d: %w", skill, err)
	}
	return decodeTools(tools)
}
