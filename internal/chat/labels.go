package chat

import (
	"context"
)

// TargetLabels names an outcome's record in the reader's words: the table's
// label, the record's title and the fields' labels (backend language).
type TargetLabels struct {
	Table  string   `json:"tableLabel"`
	Record string   `json:"recordTitle"`
	Fields []string `json:"fieldLabels"`
}

// LabelTarget is a record a view names, with the fields of it it names.
type LabelTarget struct {
	Table  string
	UID    int64
	Fields []string
}

// LabelFunc describes records for a reader, one answer per target and in
// their order, nil for a target it could not describe; the application
// wires the site's schema labels and read rule in (Deps.Labeler). It is
// given all targets of a view at once, so a record named by several of
// them is read once.
type LabelFunc func(ctx context.Context, reader int64, targets []LabelTarget) []*TargetLabels

// label fills the labels of each outcome's record and of each card call's
// target for the reader; a target that cannot be described keeps only its
// identity. card, when not nil, gets calls of its own.
func (s *reads) label(ctx context.Context, reader int64, os []Outcome, card *Card) {
	if s.labeler == nil {
		return
	}
	var targets []LabelTarget
	for _, o := range os {
		if o.Table != "" {
			targets = append(targets, LabelTarget{Table: o.Table, UID: o.UID, Fields: o.Fields})
		}
	}
	if card != nil {
		for _, call := range card.Calls {
			if t := call.Target; t != nil {
				targets = append(targets, LabelTarget{Table: t.Table, UID: t.UID, Fields: t.Fields})
			}
		}
	}
	if len(targets) == 0 {
		return
	}
	labels := s.labeler(ctx, reader, targets)
	if len(labels) != len(targets) {
		return // not one answer per target: name none rather than the wrong ones
	}
	next := func() *TargetLabels {
		l := labels[0]
		labels = labels[1:]
		return l
	}
	for i := range os {
		if os[i].Table != "" {
			os[i].Labels = next()
		}
	}
	if card != nil {
		calls := make([]CardCall, len(card.Calls))
		copy(calls, card.Calls)
		for i := range calls {
			if calls[i].Target != nil {
				calls[i].Labels = next()
			}
		}
		card.Calls = calls
	}
}
