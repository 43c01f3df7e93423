package store

import (
	"context"
	"strings"
)

// Scanner is what a row scanner reads from: a *sql.Row or a *sql.Rows.
type Scanner = interface{ Scan(dest ...any) error }

// Collect runs query on q and scans every row with scan, in order, into a
// slice that is empty (not nil) without rows. It checks the rows' error after
// the last row, so a loop ended early by a broken connection never looks
// like a short answer. The errors are returned as they are; callers add what
// they read.
func Collect[T any](ctx context.Context, q Querier, scan func(Scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []T{}
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// Column scans a row of one column into a T: Collect(ctx, q, Column[string], …).
func Column[T any](sc Scanner) (T, error) {
	var v T
	err := sc.Scan(&v)
	return v, err
}

// inChunk is the most values one IN list holds.
const inChunk = 512

// EachChunk calls fn with the values of ids in chunks of at most 512, each
// with its IN list of placeholders ("?, ?, …"). A chunk is padded to a
// power of two by repeating its last value, so few distinct statements are
// prepared.
func EachChunk(ids []int64, fn func(args []any, in string) error) error {
	for start := 0; start < len(ids); start += inChunk {
		chunk := ids[start:min(start+inChunk, len(ids))]
		size := 1
		for size < len(chunk) {
			size *= 2
		}
		args := make([]any, size)
		for i := range args {
			args[i] = chunk[min(i, len(chunk)-1)]
		}
		if err := fn(args, strings.TrimSuffix(strings.Repeat("?, ", size), ", ")); err != nil {
			return err
		}
	}
	return nil
}
