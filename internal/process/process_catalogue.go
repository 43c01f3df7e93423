package process

import (
	"context"
	"errors"

	"waymark/internal/access"
	"waymark/internal/llmconfig"
	"waymark/internal/skill"
	"waymark/internal/store"
)

// CatalogueEntry is one invocable process skill; name and description come
// from the approval snapshot.
type CatalogueEntry struct {
	UID         int64  `json:"uid"`
	Identifier  string `json:"identifier"`
	Name        string `json:"name"`
	Description string `json:"description"`
}

// Catalogue lists the skills a SkillInvocation would start (ADR-228 item 8).
type Catalogue struct {
	db      *store.DB
	dir     access.Directory
	configs *llmconfig.Store
	skills  *skill.Store
}

// NewCatalogue returns the catalogue of the users of dir (nil: the
// built-in directory).
func NewCatalogue(db *store.DB, dir access.Directory, configs *llmconfig.Store, skills *skill.Store) *Catalogue {
	return &Catalogue{db: db, dir: access.OrBuiltin(dir), configs: configs, skills: skills}
}

// ForActor lists the process skills of the configuration: attached, enabled,
// not orphaned, admitted, whose current version is an approved instruction
// marked process. A service account and a four-eyes configuration get an
// empty list; an unknown, inactive or not usable configuration is ErrNotFound
// (alike, so it does not tell which configurations exist).
func (c *Catalogue) ForActor(ctx context.Context, actor, configUID int64) ([]CatalogueEntry, error) {
	cfg, err := c.configs.Get(ctx, configUID)
	if errors.Is(err, llmconfig.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	a, err := access.LoadActor(ctx, c.dir, c.db, actor)
	if errors.Is(err, access.ErrNoUser) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if !llmconfig.MayUse(a, cfg) {
		return nil, ErrNotFound
	}
	out := []CatalogueEntry{}
	if a.ServiceAccount || cfg.RequireSecondApprover {
		return out, nil
	}
	entries, err := c.skills.Catalogue(ctx, actor, configUID)
	if errors.Is(err, skill.ErrNotFound) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if !e.Process || !e.Instructs {
			continue
		}
		// Names and descriptions come from the approval snapshot (item 8),
		// never from the live row: a snapshot that no longer holds lists nothing.
		appr, err := c.skills.PinCheck(ctx, skill.Pin{Skill: e.UID, Source: e.Source, Digest: e.Digest})
		var pe *skill.PinError
		if errors.As(err, &pe) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if !appr.Version.Process {
			continue
		}
		out = append(out, CatalogueEntry{UID: e.UID, Identifier: e.Identifier, Name: appr.Version.Name, Description: appr.Version.Description})
	}
	return out, nil
}
