package changes

import (
	"encoding/csv"
	"io"
	"strconv"
	"time"
)

// Header is the CSV export's first line.
var Header = []string{"at", "page", "language", "table", "uid", "field", "oldValue", "newValue", "model",
	"configuration", "configurationIdentifier", "skill", "skillIdentifier", "skillDigest", "answeredBy", "releasedBy", "run"}

// WriteCSV writes the changes as CSV (RFC 4180) with Header first. A value
// that a spreadsheet would read as a formula (starting with = + - @) is
// written with a leading apostrophe.
func WriteCSV(w io.Writer, cs []Change) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(Header); err != nil {
		return err
	}
	i := func(n int64) string { return strconv.FormatInt(n, 10) }
	for _, c := range cs {
		if err := cw.Write([]string{c.At.Format(time.RFC3339Nano), i(c.Page), i(c.Language), c.Table, i(c.UID), c.Field,
			safe(c.Old), safe(c.New), safe(c.Model), i(c.Configuration), c.ConfigName, i(c.Skill), c.SkillName, c.SkillDigest,
			safe(c.AnsweredBy), safe(c.ReleasedBy), c.Run}); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

func safe(s string) string {
	if s != "" && (s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@') {
		return "'" + s
	}
	return s
}
