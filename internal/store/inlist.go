package store

import "strings"

// MaxInList is the most values one IN list of EachIn holds.
const MaxInList = 512

// EachIn calls fn with ids in chunks of at most MaxInList, each as the
// arguments and the placeholders of an IN list ("?, ?, …"). A chunk is padded
// to a power of two by repeating its last id, so a few query texts serve
// every length and stay in the statement caches.
func EachIn[T any](ids []T, fn func(args []any, in string) error) error {
	for start := 0; start < len(ids); start += MaxInList {
		chunk := ids[start:min(start+MaxInList, len(ids))]
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
