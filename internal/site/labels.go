package site

import (
	"context"

	"waymark/internal/access"
	"waymark/internal/catalog"
)

// LabelsFor describes refs as DescribeAll does for the user reader, read
// from dir as stored now, in the reader's backend language. A target the
// reader may not read is nil; so is every target when the reader or the
// schemas cannot be read — a view then names the records by their ids.
func (s *Site) LabelsFor(ctx context.Context, dir access.Directory, reader int64, refs []Ref) []*Target {
	out := make([]*Target, len(refs))
	a, err := access.LoadActor(ctx, dir, s.db, reader)
	if err != nil {
		return out
	}
	ts, errs, err := s.DescribeAll(ctx, a, refs, catalog.Lang(a.BackendLanguage))
	if err != nil {
		return out
	}
	for i := range ts {
		if errs[i] == nil {
			out[i] = &ts[i]
		}
	}
	return out
}
