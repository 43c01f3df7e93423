package skill

import (
	"context"
	"fmt"
	"strings"

	"waymark/internal/store"
)

// Entry is one skill of a configuration's catalogue (ADR-214 item 10).
type Entry struct {
	UID         int64    `json:"uid"`
	Source      int64    `json:"source"`
	Identifier  string   `json:"identifier"`
	Name        string   `json:"name"`
	Description string   `json:"description"` // untrusted text unless Instructs
	Mode        LoadMode `json:"mode"`
	// Instructs: the live version is an instruction under the rule of
	// Instructs (then Name and Description are those of the approved version).
	Instructs bool   `json:"instructs"`
	Process   bool   `json:"process"`
	Digest    string `json:"digest"`
}

// effective is one attached skill that is enabled, not orphaned, of an
// enabled source admitted by trust.
type effective struct {
	Entry
	tools      string // allowed_tools as stored, decoded only by AllowListFor
	sourceType SourceType
}

// levelsFrom lists the trust levels at or above floor as SQL literals.
func levelsFrom(floor Trust) string {
	var b strings.Builder
	for _, t := range []Trust{Untrusted, Community, Verified, FirstParty} {
		if t.AtLeast(floor) {
			if b.Len() > 0 {
				b.WriteString(", ")
			}
			b.WriteString("'" + string(t) + "'")
		}
	}
	return b.String()
}

// effectiveSkills reads the attached, enabled, non-orphaned skills of
// enabled, admitted sources of a configuration, ordered by uid, with whether
// each instructs now. It reads no body: the approval join uses the digest
// column every write of the store keeps; composition recomputes it (Instructs,
// PinCheck).
func (s *Store) effectiveSkills(ctx context.Context, configUID int64) ([]effective, error) {
	out, err := store.Collect(ctx, s.db, func(sc store.Scanner) (effective, error) {
		var e effective
		var mode, typ string
		var instructs int
		err := sc.Scan(&e.UID, &e.Source, &e.Identifier, &e.Name, &e.Description,
			&e.tools, &e.Process, &e.Digest, &mode, &typ, &instructs)
		e.Mode, e.sourceType, e.Instructs = LoadMode(mode), SourceType(typ), instructs == 1
		return e, err
	}, `SELECT s.uid, s.source_uid, s.identifier, s.name, s.description,
			s.allowed_tools, s.process, s.digest, a.load_mode, src.type,
			CASE WHEN src.trust_level IN (`+levelsFrom(s.threshold)+`) AND EXISTS (SELECT 1 FROM skill_approvals x
				WHERE x.skill_uid = s.uid AND x.source_uid = s.source_uid AND x.digest = s.digest AND x.revoked_at = 0)
				THEN 1 ELSE 0 END
		FROM skill_attachments a
		JOIN skills s ON s.uid = a.skill_uid
		JOIN skill_sources src ON src.uid = s.source_uid
		WHERE a.configuration_uid = ? AND s.enabled AND NOT s.orphaned AND src.enabled
			AND src.trust_level IN (`+levelsFrom(s.floor)+`)
		ORDER BY a.skill_uid`, configUID)
	if err != nil {
		return nil, fmt.Errorf("skills of configuration %d: %w", configUID, err)
	}
	return out, nil
}

// Catalogue lists, for an actor who may use the configuration now, its
// attached skills that are enabled, not orphaned and admitted (their enabled
// source's trust at or above the admission floor), ordered by uid, process
// skills included and flagged. When the actor may not use the configuration,
// or it does not exist, the answer is the same error wrapping ErrNotFound.
// Instructs in an entry is for listing; composition decides again through
// Instructs or PinCheck.
func (s *Store) Catalogue(ctx context.Context, actorUID, configUID int64) ([]Entry, error) {
	ok, err := s.configs.ActorMayUse(ctx, actorUID, configUID)
	if err != nil {
		return nil, fmt.Errorf("catalogue of configuration %d: %w", configUID, err)
	}
	if !ok {
		return nil, fmt.Errorf("configuration %d: %w", configUID, ErrNotFound)
	}
	eff, err := s.effectiveSkills(ctx, configUID)
	if err != nil {
		return nil, err
	}
	out := make([]Entry, len(eff))
	for i, e := range eff {
		out[i] = e.Entry
	}
	return out, nil
}

// ForModel keeps the entries the model may load (ADR-214 item 4): on-demand
// instructions that are not processes. Process skills never reach the
// model's catalogue, so page text that asks the model to start one cannot.
func ForModel(entries []Entry) []Entry {
	var out []Entry
	for _, e := range entries {
		if e.Mode == OnDemand && e.Instructs && !e.Process {
			out = append(out, e)
		}
	}
	return out
}
