package store

import (
	"context"
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
