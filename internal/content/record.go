package content

import (
	"encoding/json"
	"errors"
	"fmt"
)

// Language uids with a meaning of their own.
const (
	LanguageAll     int64 = -1 // the record is shown in every language
	LanguageDefault int64 = 0
)

// Ref names one record and, where it matters, the language it is worked on in.
type Ref struct {
	Table    string `json:"table"`
	UID      int64  `json:"uid"`
	Language int64  `json:"language"`
}

func (r Ref) String() string { return fmt.Sprintf("%s:%d", r.Table, r.UID) }

// Page permission bits (TYPO3's perms_*).
const (
	PermShow    = 1
	PermEdit    = 2
	PermDelete  = 4
	PermNew     = 8
	PermContent = 16
)

// Perms are a page's permission bits for its owner, its group and everybody.
type Perms struct {
	User      int `json:"user"`
	Group     int `json:"group"`
	Everybody int `json:"everybody"`
}

// Record is one stored CMS record. Owner, Group and Perms matter for pages only.
type Record struct {
	Table      string
	UID        int64
	PID        int64
	Language   int64
	L10nParent int64
	Deleted    bool
	Workspace  int64 // 0 = live
	Owner      int64
	Group      int64
	Perms      Perms
	// EditLock is TYPO3's editlock (TCA ctrl editlock of pages and
	// tt_content): only administrators may change the record, and a locked
	// page locks the records on it too (not its subpages). The built-in
	// source has no lock: there it is always false.
	EditLock bool
	Fields   map[string]string
}

// Ref returns the record's reference in its own language.
func (r Record) Ref() Ref { return Ref{Table: r.Table, UID: r.UID, Language: r.Language} }

// Live reports whether the record is in the live workspace and not deleted.
func (r Record) Live() bool { return r.Workspace == 0 && !r.Deleted }

// Title is the page title (or a content element's header) for messages.
func (r Record) Title() string {
	if t := r.Fields["title"]; t != "" {
		return t
	}
	return r.Fields["header"]
}

// ErrNotFound is returned when a record, table or field does not exist.
var ErrNotFound = errors.New("not found")

func decodeFields(raw string) (map[string]string, error) {
	m := map[string]string{}
	if raw == "" {
		return m, nil
	}
	if err := json.Unmarshal([]byte(raw), &m); err != nil {
		return nil, fmt.Errorf("decode fields: %w", err)
	}
	return m, nil
}

func encodeFields(m map[string]string) string {
	if m == nil {
		return "{}"
	}
	b, _ := json.Marshal(m) // map[string]string always marshals
	return string(b)
}
