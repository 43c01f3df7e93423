package app

import (
	"context"

	"waymark/internal/access"
	"waymark/internal/chat"
	"waymark/internal/site"
)

// chatLabels is the chat's labeller: the site's schema labels and read rule
// (site.LabelsFor) in the chat's types.
func chatLabels(pages *site.Site, dir access.Directory) chat.LabelFunc {
	return func(ctx context.Context, reader int64, targets []chat.LabelTarget) []*chat.TargetLabels {
		refs := make([]site.Ref, len(targets))
		for i, t := range targets {
			refs[i] = site.Ref{Table: t.Table, UID: t.UID, Fields: t.Fields}
		}
		out := make([]*chat.TargetLabels, len(targets))
		for i, t := range pages.LabelsFor(ctx, dir, reader, refs) {
			if t != nil {
				out[i] = &chat.TargetLabels{Table: t.TableLabel, Record: t.RecordTitle, Fields: t.FieldLabels}
			}
		}
		return out
	}
}
