package skill_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"waymark/internal/skill"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// benchBody is a SKILL.md body of a realistic size (about 4 KB).
var benchBody = strings.Repeat("Lies den Abschnitt, prüfe Titel und Beschreibung, schlage eine Änderung vor.\n", 52)

// baseline measures one primary-key SELECT on the same database, per op.
func baseline(b *testing.B, db *store.DB, uid int64) time.Duration {
	ctx := context.Background()
	start := time.Now()
	for range b.N {
		var got int64
		if err := db.QueryRow(ctx, "SELECT uid FROM skills WHERE uid = ?", uid).Scan(&got); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start) / time.Duration(b.N)
}

// BenchmarkPinCheck reports a pin check (one read plus the snapshot digest)
// in µs/op beside a primary-key SELECT on the same SQLite database.
func BenchmarkPinCheck(b *testing.B) {
	db := storetest.SQLite(b)
	bb := setup(b, db, nil)
	v := version("SEO", "page_read")
	v.Body = benchBody
	k := bb.create(b, "seo", v)
	a := bb.approve(b, k.UID)
	pin := skill.Pin{Skill: k.UID, Source: srcBack, Digest: a.Digest}
	ctx := context.Background()
	base := baseline(b, db, k.UID)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if _, err := bb.st.PinCheck(ctx, pin); err != nil {
			b.Fatal(err)
		}
	}
	per := time.Since(start) / time.Duration(b.N)
	b.ReportMetric(float64(per.Nanoseconds())/1e3, "µs/pincheck")
	b.ReportMetric(float64(base.Nanoseconds())/1e3, "µs/pk-select")
	b.ReportMetric(float64(per)/float64(base), "x-baseline")
}

// BenchmarkCatalogue1000 reports the catalogue of a configuration with 1,000
// attached skills (half approved, a tenth processes, 4 KB bodies) in ms/op
// beside a primary-key SELECT on the same SQLite database.
func BenchmarkCatalogue1000(b *testing.B) {
	db := storetest.SQLite(b)
	bb := setup(b, db, nil)
	ctx := context.Background()
	err := db.InTx(ctx, func(tx *store.Tx) error {
		for i := 1; i <= 1000; i++ {
			v := version(fmt.Sprintf("Skill %d", i), "page_read")
			v.Body = benchBody
			v.Process = i%10 == 0
			v = v.Normalized()
			d := v.Digest()
			if _, err := tx.Exec(ctx, `INSERT INTO skills (uid, source_uid, identifier, name, description, body, support,
				allowed_tools, process, raw_front_matter, digest, enabled, updated_at)
				VALUES (?, ?, ?, ?, ?, ?, '', '["page_read"]', ?, '', ?, TRUE, 1)`,
				i, srcBack, fmt.Sprintf("s%d", i), v.Name, v.Description, v.Body, v.Process, d); err != nil {
				return err
			}
			mode := skill.OnDemand
			if i%3 == 0 {
				mode = skill.Always
			}
			if _, err := tx.Exec(ctx, "INSERT INTO skill_attachments VALUES (?, ?, ?)", cfgChat, i, string(mode)); err != nil {
				return err
			}
			if i%2 == 0 {
				if _, err := tx.Exec(ctx, `INSERT INTO skill_approvals (skill_uid, source_uid, digest, name, description, body,
					support, allowed_tools, process, trust_level, approved_by, approved_at)
					VALUES (?, ?, ?, ?, ?, ?, '', '["page_read"]', ?, 'verified', 1, 1)`,
					i, srcBack, d, v.Name, v.Description, v.Body, v.Process); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	cat, err := bb.st.Catalogue(ctx, editor, cfgChat)
	if err != nil || len(cat) != 1000 {
		b.Fatalf("Catalogue = %d entries, %v", len(cat), err)
	}
	base := baseline(b, db, 1)
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		if _, err := bb.st.Catalogue(ctx, editor, cfgChat); err != nil {
			b.Fatal(err)
		}
	}
	per := time.Since(start) / time.Duration(b.N)
	b.ReportMetric(float64(per.Nanoseconds())/1e6, "ms/catalogue")
	b.ReportMetric(float64(base.Nanoseconds())/1e3, "µs/pk-select")
	b.ReportMetric(float64(per)/float64(base), "x-baseline")
}
