package chat

import (
	"waymark/internal/clock"
	"waymark/internal/openpoint"
	"waymark/internal/store"
	"waymark/internal/tool"
)

// Target names the record and fields of a card's pending write (the card's
// pendingTarget); an empty Fields list is the record as a whole.
type Target = tool.Target

// OpenPoints is the store of open points, kept under this name for callers
// of package chat.
//
// Deprecated: use openpoint.Store.
type OpenPoints = openpoint.Store

// VisiblePoint is an open point as a reader sees it.
//
// Deprecated: use openpoint.Entry.
type VisiblePoint = openpoint.Entry

// Limits of the open point lists.
//
// Deprecated: use the constants of package openpoint.
const (
	DefaultLimit = openpoint.DefaultLimit
	MaxLimit     = openpoint.MaxLimit
)

// NewOpenPoints returns the open points kept in db.
//
// Deprecated: use openpoint.New.
func NewOpenPoints(db *store.DB, clk clock.Clock) *OpenPoints { return openpoint.New(db, clk) }
