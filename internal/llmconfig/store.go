package llmconfig

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"waymark/internal/access"
	"waymark/internal/clock"
	"waymark/internal/fault"
	"waymark/internal/secret"
	"waymark/internal/store"
)

// ErrNotFound is returned by Get, GetByIdentifier, APIKey and SetAPIKey when
// no configuration has the uid or identifier.
var ErrNotFound = fault.New(fault.NotFound, "not_found", "no such configuration")

// Store reads and writes configurations and seals their API keys.
type Store struct {
	db    *store.DB
	box   *secret.Box
	dir   access.Directory // whose groups a configuration admits, and whose users may use it
	clock clock.Clock
}

// Resolver is the spec's name for the Store (ConfigurationResolver).
type Resolver = Store

// New returns a Store on db that seals API keys with box and reads the
// users and groups of dir (nil: the built-in directory).
func New(db *store.DB, box *secret.Box, dir access.Directory) *Store {
	return &Store{db: db, box: box, dir: access.OrBuiltin(dir), clock: clock.Real{}}
}

const columns = `uid, identifier, name, active, provider_type, base_url, api_key_sealed, model, script,
	context_window, max_output_tokens, require_second_approver, privacy, system_prompt,
	allowed_groups, tool_groups, max_iterations, token_budget, price_input_per_mtok, price_output_per_mtok, updated_at`

func scan(sc interface{ Scan(...any) error }) (Configuration, error) {
	var c Configuration
	var sealed, script, groups, tools string
	var updated int64
	if err := sc.Scan(&c.UID, &c.Identifier, &c.Name, &c.Active, &c.ProviderType, &c.BaseURL, &sealed, &c.Model, &script,
		&c.ContextWindow, &c.MaxOutputTokens, &c.RequireSecondApprover, &c.Privacy, &c.SystemPrompt,
		&groups, &tools, &c.MaxIterations, &c.TokenBudget, &c.PriceInputPerMTok, &c.PriceOutputPerMTok, &updated); err != nil {
		return Configuration{}, err
	}
	c.HasAPIKey = sealed != ""
	c.Script = json.RawMessage(script)
	c.UpdatedAt = store.Time(updated)
	if err := json.Unmarshal([]byte(groups), &c.AllowedGroups); err != nil {
		return Configuration{}, fmt.Errorf("configuration %d: allowed_groups: %w", c.UID, err)
	}
	if err := json.Unmarshal([]byte(tools), &c.ToolGroups); err != nil {
		return Configuration{}, fmt.Errorf("configuration %d: tool_groups: %w", c.UID, err)
	}
	return c, nil
}

// Get reads one configuration, active or not, without its API key.
func (s *Store) Get(ctx context.Context, uid int64) (Configuration, error) {
	return s.GetTx(ctx, s.db, uid)
}

// GetTx is Get inside a transaction (or on any Querier). Configurations are
// kept for one settings generation, which every change of configurations
// moves (store.GenCache); each caller gets its own copy.
func (s *Store) GetTx(ctx context.Context, q store.Querier, uid int64) (Configuration, error) {
	c, err := configCache.Get(ctx, q, uid, func(ctx context.Context, q store.Querier) (Configuration, error) {
		c, err := scan(q.QueryRow(ctx, "SELECT "+columns+" FROM configurations WHERE uid = ?", uid))
		if errors.Is(err, sql.ErrNoRows) {
			return Configuration{}, fmt.Errorf("configuration %d: %w", uid, ErrNotFound)
		}
		if err != nil {
			return Configuration{}, fmt.Errorf("read configuration %d: %w", uid, err)
		}
		return c, nil
	})
	if err != nil {
		return Configuration{}, err
	}
	c.AllowedGroups = slices.Clone(c.AllowedGroups)
	c.ToolGroups = slices.Clone(c.ToolGroups)
	c.Script = slices.Clone(c.Script)
	return c, nil
}

// ExistsTx reports whether a configuration, active or not, has the uid — for
// packages that refer to configurations (a skill attachment) without reading
// their table.
func ExistsTx(ctx context.Context, q store.Querier, uid int64) (bool, error) {
	var n int
	if err := q.QueryRow(ctx, "SELECT COUNT(*) FROM configurations WHERE uid = ?", uid).Scan(&n); err != nil {
		return false, fmt.Errorf("configuration %d: %w", uid, err)
	}
	return n > 0, nil
}

var configCache = store.NewGenCache[int64, Configuration]("configurations")

// GetByIdentifier reads one configuration by its identifier.
func (s *Store) GetByIdentifier(ctx context.Context, identifier string) (Configuration, error) {
	c, err := scan(s.db.QueryRow(ctx, "SELECT "+columns+" FROM configurations WHERE identifier = ?", identifier))
	if errors.Is(err, sql.ErrNoRows) {
		return Configuration{}, fmt.Errorf("configuration %q: %w", identifier, ErrNotFound)
	}
	if err != nil {
		return Configuration{}, fmt.Errorf("read configuration %q: %w", identifier, err)
	}
	return c, nil
}

// List reads every configuration, active or not, ordered by uid.
func (s *Store) List(ctx context.Context) ([]Configuration, error) {
	out, err := store.Collect(ctx, s.db, scan, "SELECT "+columns+" FROM configurations ORDER BY uid")
	if err != nil {
		return nil, fmt.Errorf("list configurations: %w", err)
	}
	return out, nil
}

// Put is PutTx in a transaction of its own.
func (s *Store) Put(ctx context.Context, c Configuration) error {
	return s.db.InTx(ctx, func(tx *store.Tx) error { return s.PutTx(ctx, tx, c) })
}

// PutTx validates c (after filling defaults: privacy metadata, 20 iterations,
// empty lists) and inserts or replaces the configuration with its uid. It is
// authoritative, as a fixture import is: c.APIKey is sealed and stored, and an
// empty APIKey stores no key. Use SetAPIKey to change only the key. A
// validation failure is a *FieldError (errors.Is ErrInvalid) and writes nothing.
func (s *Store) PutTx(ctx context.Context, q store.Querier, c Configuration) error {
	if err := Validate(c); err != nil {
		return err
	}
	sealed, err := s.seal(c.APIKey)
	if err != nil {
		return fmt.Errorf("configuration %d: %w", c.UID, err)
	}
	return s.putSealedTx(ctx, q, withDefaults(c), sealed)
}

// ImportTx is PutTx for the importer: keep non-nil stores that sealed key
// as it is (c.APIKey is ignored) instead of sealing c.APIKey afresh, and the
// row is stamped updatedAt (the importer writes
// configurations through their owner).
func (s *Store) ImportTx(ctx context.Context, q store.Querier, c Configuration, keep *string, updatedAt time.Time) error {
	if keep != nil {
		c.APIKey = ""
	}
	if err := Validate(c); err != nil {
		return err
	}
	var sealed string
	if keep != nil {
		sealed = *keep
	} else {
		var err error
		if sealed, err = s.seal(c.APIKey); err != nil {
			return fmt.Errorf("configuration %d: %w", c.UID, err)
		}
	}
	return s.putSealedAtTx(ctx, q, withDefaults(c), sealed, updatedAt)
}

// SealedKeyTx reads the sealed API key of configuration uid ("" for none);
// ErrNotFound when there is no such configuration.
func (s *Store) SealedKeyTx(ctx context.Context, q store.Querier, uid int64) (string, error) {
	return s.sealedKey(ctx, q, uid)
}

// IdentifierUIDTx returns the uid of the configuration with identifier; ok
// is false when there is none.
func IdentifierUIDTx(ctx context.Context, q store.Querier, identifier string) (uid int64, ok bool, err error) {
	err = q.QueryRow(ctx, "SELECT uid FROM configurations WHERE identifier = ?", identifier).Scan(&uid)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, fmt.Errorf("configuration %q: %w", identifier, err)
	}
	return uid, true, nil
}

// FirstSealedKey returns the sealed API key of the configuration with the
// lowest uid that has one; ok is false when none has — what secret.CheckKey
// tries a key on in a database from before its check value.
func FirstSealedKey(ctx context.Context, q store.Querier) (sealed string, ok bool, err error) {
	err = q.QueryRow(ctx, "SELECT api_key_sealed FROM configurations WHERE api_key_sealed <> '' ORDER BY uid LIMIT 1").Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("sealed provider keys: %w", err)
	}
	return sealed, true, nil
}

// putSealedTx writes a validated configuration with defaults filled and the
// sealed API key to store ("" for none).
func (s *Store) putSealedTx(ctx context.Context, q store.Querier, c Configuration, sealed string) error {
	return s.putSealedAtTx(ctx, q, c, sealed, s.clock.Now())
}

// putSealedAtTx is putSealedTx stamping updated_at with at.
func (s *Store) putSealedAtTx(ctx context.Context, q store.Querier, c Configuration, sealed string, at time.Time) error {
	groups, _ := json.Marshal(c.AllowedGroups)
	tools, _ := json.Marshal(c.ToolGroups)
	_, err := q.Exec(ctx, `INSERT INTO configurations (`+columns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
		ON CONFLICT (uid) DO UPDATE SET identifier = excluded.identifier, name = excluded.name,
			active = excluded.active, provider_type = excluded.provider_type, base_url = excluded.base_url,
			api_key_sealed = excluded.api_key_sealed, model = excluded.model, script = excluded.script,
			context_window = excluded.context_window, max_output_tokens = excluded.max_output_tokens,
			require_second_approver = excluded.require_second_approver, privacy = excluded.privacy,
			system_prompt = excluded.system_prompt, allowed_groups = excluded.allowed_groups,
			tool_groups = excluded.tool_groups, max_iterations = excluded.max_iterations,
			token_budget = excluded.token_budget, price_input_per_mtok = excluded.price_input_per_mtok,
			price_output_per_mtok = excluded.price_output_per_mtok, updated_at = excluded.updated_at`,
		c.UID, c.Identifier, c.Name, c.Active, string(c.ProviderType), c.BaseURL, sealed, c.Model, string(c.Script),
		c.ContextWindow, c.MaxOutputTokens, c.RequireSecondApprover, string(c.Privacy), c.SystemPrompt,
		string(groups), string(tools), c.MaxIterations, c.TokenBudget, c.PriceInputPerMTok, c.PriceOutputPerMTok, store.Micros(at))
	if err != nil {
		return fmt.Errorf("store configuration %d (%s): %w", c.UID, c.Identifier, err)
	}
	return nil
}

// SetAPIKey replaces the stored API key of configuration uid; an empty key
// removes it. It returns ErrNotFound when the configuration does not exist.
func (s *Store) SetAPIKey(ctx context.Context, uid int64, key string) error {
	sealed, err := s.seal(key)
	if err != nil {
		return fmt.Errorf("configuration %d: %w", uid, err)
	}
	res, err := s.db.Exec(ctx, "UPDATE configurations SET api_key_sealed = ?, updated_at = ? WHERE uid = ?",
		sealed, store.Micros(s.clock.Now()), uid)
	if err != nil {
		return fmt.Errorf("set API key of configuration %d: %w", uid, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("set API key of configuration %d: %w", uid, err)
	} else if n == 0 {
		return fmt.Errorf("configuration %d: %w", uid, ErrNotFound)
	}
	return nil
}

// APIKey decrypts the API key of configuration uid for a provider call; ""
// when none is stored. It is the only way to read a key back. It returns
// ErrNotFound for an unknown configuration, and a secret error when the
// stored value does not open (another WAYMARK_SECRET_KEY, or altered).
func (s *Store) APIKey(ctx context.Context, uid int64) (string, error) {
	var sealed string
	err := s.db.QueryRow(ctx, "SELECT api_key_sealed FROM configurations WHERE uid = ?", uid).Scan(&sealed)
	if errors.Is(err, sql.ErrNoRows) {
		return "", fmt.Errorf("configuration %d: %w", uid, ErrNotFound)
	}
	if err != nil {
		return "", fmt.Errorf("read API key of configuration %d: %w", uid, err)
	}
	if sealed == "" {
		return "", nil
	}
	key, err := s.box.Open(sealed)
	if err != nil {
		return "", fmt.Errorf("API key of configuration %d: %w", uid, err)
	}
	return key, nil
}

func (s *Store) seal(key string) (string, error) {
	if key == "" {
		return "", nil
	}
	sealed, err := s.box.Seal(key)
	if err != nil {
		return "", fmt.Errorf("seal API key: %w", err)
	}
	return sealed, nil
}
