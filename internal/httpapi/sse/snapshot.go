package sse

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
)

// Snapshot is the Source of a stream that follows one state (a conversation,
// an inbox): it sends the state as JSON in an event called name now and
// whenever it changes, never twice the same. The event id is a digest of the
// JSON, so a client resuming with the id of the state it holds gets nothing
// until the state changes.
func Snapshot(name string, read func(ctx context.Context) (any, error)) Source {
	return func(ctx context.Context, lastID string) ([]Event, Step, error) {
		v, err := read(ctx)
		if err != nil {
			return nil, End, err
		}
		data, err := json.Marshal(v)
		if err != nil {
			return nil, End, err
		}
		sum := sha256.Sum256(data)
		id := hex.EncodeToString(sum[:12])
		if id == lastID {
			return nil, Wait, nil
		}
		return []Event{{ID: id, Name: name, Data: data}}, Wait, nil
	}
}
