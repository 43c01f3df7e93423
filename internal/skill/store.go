package skill

import (
	"cmp"
	"context"
	"errors"
	"fmt"

	"waymark/internal/access"
	"waymark/internal/clock"
	"waymark/internal/store"
)

// KnownTools reports whether the tool registry holds a tool of that name. It
// validates the allowed-tools declarations of stored skills; wire it to the
// registry, e.g. func(n string) bool { _, ok := reg.Def(n); return ok }.
type KnownTools func(name string) bool

// ConfigAccess decides whether an actor may use a configuration now;
// llmconfig.Store implements it (ActorMayUse).
type ConfigAccess interface {
	ActorMayUse(ctx context.Context, actorUID, configUID int64) (bool, error)
}

// Config holds the settings of a Store. The zero value is the default.
type Config struct {
	// Clock stamps every write; default clock.Real.
	Clock clock.Clock
	// InstructionThreshold is the trust a source must have now for its
	// approved skill versions to instruct; default Verified. A value below
	// AdmissionFloor is raised to it.
	InstructionThreshold Trust
	// AdmissionFloor is the trust a source must have for its skills to be
	// composed at all (as fenced data when they do not instruct); default Untrusted.
	AdmissionFloor Trust
	// Root is the folder every directory source must lie in (--skills-root);
	// "" refuses directory sources.
	Root string
	// Directory is where the users who approve skills are read from (nil:
	// the built-in directory).
	Directory access.Directory
}

// Store keeps sources, skills, approvals, the audit trail and attachments,
// and answers the instruction rule, the catalogue, the allow-list and pins.
type Store struct {
	db        *store.DB
	clock     clock.Clock
	known     KnownTools
	configs   ConfigAccess
	threshold Trust
	floor     Trust
	root      string // Config.Root, absolute with symlinks resolved; "" none
	rootAbs   string // Config.Root, absolute as given
	dir       access.Directory
}

// NewStore returns a Store on db. known validates allowed-tools and configs
// gates the catalogue; both are required. An unknown trust level in cfg is
// an error naming the field.
func NewStore(db *store.DB, known KnownTools, configs ConfigAccess, cfg *Config) (*Store, error) {
	if db == nil || known == nil || configs == nil {
		return nil, errors.New("skill.NewStore: db, known tools and configuration access are required")
	}
	var c Config
	if cfg != nil {
		c = *cfg
	}
	s := &Store{
		db:        db,
		clock:     cmp.Or[clock.Clock](c.Clock, clock.Real{}),
		known:     known,
		configs:   configs,
		threshold: cmp.Or(c.InstructionThreshold, Verified),
		floor:     cmp.Or(c.AdmissionFloor, Untrusted),
		dir:       access.OrBuiltin(c.Directory),
	}
	var err error
	if s.rootAbs, s.root, err = rootOf(c.Root); err != nil {
		return nil, err
	}
	if s.threshold.Rank() < 0 {
		return nil, fmt.Errorf("skill config InstructionThreshold: unknown trust level %q", s.threshold)
	}
	if s.floor.Rank() < 0 {
		return nil, fmt.Errorf("skill config AdmissionFloor: unknown trust level %q", s.floor)
	}
	if s.threshold.Rank() < s.floor.Rank() {
		s.threshold = s.floor
	}
	return s, nil
}

// InstructionThreshold reports the effective instruction threshold.
func (s *Store) InstructionThreshold() Trust { return s.threshold }

// AdmissionFloor reports the admission floor.
func (s *Store) AdmissionFloor() Trust { return s.floor }

// Admitted reports whether skills of a source with trust t are composed at
// all: t is at or above the admission floor.
func (s *Store) Admitted(t Trust) bool { return t.AtLeast(s.floor) }

// instructs is the trust half of the instruction rule.
func (s *Store) trustInstructs(t Trust) bool { return t.AtLeast(s.threshold) }

func (s *Store) now() int64 { return store.Micros(s.clock.Now()) }

// forUpdate is the row-lock suffix of a SELECT in a transaction: SQLite
// transactions already hold the write lock (_txlock=immediate).
func forUpdate(q store.Querier) string {
	if q.Dialect() == store.Postgres {
		return " FOR UPDATE"
	}
	return ""
}
