package chat

import (
	"context"

	"waymark/internal/access"
	"waymark/internal/catalog"
)

// TargetLabels names an outcome's record in the reader's words: the table's
// label, the record's title and the fields' labels (backend language).
type TargetLabels struct {
	Table  string   `json:"tableLabel"`
	Record string   `json:"recordTitle"`
	Fields []string `json:"fieldLabels"`
}

// LabelFunc describes a record for a reader; the application wires the
// site's schema labels and read rule in (Deps.Labeler).
type LabelFunc func(ctx context.Context, reader int64, table string, uid int64, fields []string) (TargetLabels, error)

// labelOutcomes fills each outcome's labels for the reader; a failed
// description leaves them out (the identities stay).
func (s *Service) labelOutcomes(ctx context.Context, reader int64, os []Outcome) {
	if s.labeler == nil {
		return
	}
	for i := range os {
		if os[i].Table == "" {
			continue
		}
		if l, err := s.labeler(ctx, reader, os[i].Table, os[i].UID, os[i].Fields); err == nil {
			os[i].Labels = &l
		}
	}
}

// labelCard fills the labels of each call's target for the reader.
func (s *Service) labelCard(ctx context.Context, reader int64, c *Card) {
	if s.labeler == nil || c == nil {
		return
	}
	calls := make([]CardCall, len(c.Calls))
	copy(calls, c.Calls)
	for i, call := range calls {
		if t := call.Target; t != nil {
			if l, err := s.labeler(ctx, reader, t.Table, t.UID, t.Fields); err == nil {
				calls[i].Labels = &l
			}
		}
	}
	c.Calls = calls
}

// answerText is the editor's answer as the transcript shows it: the card's
// button label in the editor's backend language (the UI's catalogue).
func (s *Service) answerText(ctx context.Context, actor int64, answer string) string {
	lang := ""
	if a, err := access.LoadActor(ctx, s.db, actor); err == nil {
		lang = a.BackendLanguage
	}
	return catalog.For(lang).Get("answer." + answer)
}
