package tool

import (
	"encoding/json"
	"fmt"

	"waymark/internal/access"
	"waymark/internal/content"
	"waymark/internal/openpoint"
	"waymark/internal/store"
)

// Group of the builtin content tools.
const GroupContent = "content"

// Messages of the builtin tools that callers and tests compare against.
// Unknown and forbidden answer alike (DESIGN.md §6 invariant 7).
const (
	MsgPageNotFound   = "page not found"
	MsgRecordNotFound = "record not found"
)

// builtins holds what the builtin content tools read and write through.
type builtins struct {
	db      *store.DB
	src     content.Source
	dir     access.Directory
	writer  content.RecordWriter
	checker *access.Checker
	points  *openpoint.Store // reads only
}

// Builtins returns the builtin content tools of API.md §4: read_page,
// read_record, update_page_metadata, update_content, choose, set_progress,
// highlight_record (disabled by default) and list_open_points (also as
// chat_list_open_points, ADR-022's name). They read the records of src and
// the users of dir (nil: the built-in source and directory); reads check
// the acting user with checker; writes go through writer as that user.
func Builtins(db *store.DB, src content.Source, dir access.Directory, writer content.RecordWriter, checker *access.Checker) []Tool {
	src, dir = content.OrBuiltin(src), access.OrBuiltin(dir)
	b := &builtins{db: db, src: src, dir: dir, writer: writer, checker: checker, points: openpoint.New(db, src, dir, nil)}
	return []Tool{
		&readPage{b},
		&readRecord{b},
		&updateTool{b: b, spec: pageMetadataSpec},
		&updateTool{b: b, spec: contentSpec},
		chooseTool{}, setProgress{}, &highlightRecord{b},
		&listOpenPoints{b: b, name: ListOpenPointsTool},
		&listOpenPoints{b: b, name: ChatListOpenPointsTool},
	}
}

// RegisterBuiltins registers Builtins(db, src, dir, writer, checker) with reg.
func RegisterBuiltins(reg *Registry, db *store.DB, src content.Source, dir access.Directory, writer content.RecordWriter, checker *access.Checker) error {
	for _, t := range Builtins(db, src, dir, writer, checker) {
		if err := reg.Register(t); err != nil {
			return err
		}
	}
	return nil
}

// decodeArgs unmarshals validated arguments; a failure is a *ResultError.
func decodeArgs(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		raw = json.RawMessage("{}")
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return &ResultError{Message: fmt.Sprintf("invalid arguments: %s", err.Error())}
	}
	return nil
}

// recordView is how a record is shown to the model.
type recordView struct {
	Table      string            `json:"table"`
	UID        int64             `json:"uid"`
	PID        int64             `json:"pid"`
	Language   int64             `json:"language"`
	L10nParent int64             `json:"l10nParent,omitempty"`
	Fields     map[string]string `json:"fields"`
}

func viewOf(r content.Record) recordView {
	f := r.Fields
	if f == nil {
		f = map[string]string{}
	}
	return recordView{Table: r.Table, UID: r.UID, PID: r.PID, Language: r.Language, L10nParent: r.L10nParent, Fields: f}
}
