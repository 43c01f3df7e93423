package typo3

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

var writeNow = time.Date(2026, 7, 1, 10, 0, 0, 0, time.UTC)

// writeSetup is a demo database with page cache entries for pages 1, 2, 3
// and 12, and a Writer over it.
func writeSetup(t *testing.T, db *sql.DB, d Dialect) *Writer {
	t.Helper()
	demoDB(t, db, d)
	for _, p := range []int{1, 2, 3, 12} {
		id := fmt.Sprintf("page-%d-hash", p)
		run(t, db, d, "INSERT INTO `cache_pages` (`identifier`, `expires`, `content`) VALUES (?, ?, ?)", id, writeNow.Unix()+3600, []byte("<html>"))
		run(t, db, d, "INSERT INTO `cache_pages_tags` (`identifier`, `tag`) VALUES (?, ?)", id, fmt.Sprintf("pageId_%d", p))
		run(t, db, d, "INSERT INTO `cache_pages_tags` (`identifier`, `tag`) VALUES (?, ?)", id, "pages")
	}
	w, err := NewWriter(db, d, func() time.Time { return writeNow })
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func cachedPages(t *testing.T, db *sql.DB, d Dialect) string {
	t.Helper()
	return strings.Join(query(t, db, d, "SELECT `identifier` FROM `cache_pages` ORDER BY `identifier`"), ",")
}

func TestWriterApplyUpdatesTheRowWithHistoryLogAndPageCache(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		w := writeSetup(t, db, d)
		res, err := w.Apply(context.Background(), Change{Table: "tt_content", UID: 112, Field: "bodytext",
			Old: "tbd", New: "Our team of 24: developers, designers and project managers.", UserID: 2, Key: "run-7/card-3"})
		if err != nil || !res.Applied || res.AlreadyApplied || fmt.Sprint(res.FlushedPages) != "[2]" {
			t.Fatalf("Apply = %+v, %v", res, err)
		}
		wantRows(t, "tt_content 112", query(t, db, d, "SELECT `bodytext`, `tstamp` FROM `tt_content` WHERE `uid` = 112"),
			fmt.Sprintf("Our team of 24: developers, designers and project managers.|%d", writeNow.Unix()))
		wantRows(t, "sys_history", query(t, db, d, "SELECT `uid`, `actiontype`, `usertype`, `userid`, `recuid`, `tablename`, `history_data`, `correlation_id`, `tstamp` FROM `sys_history`"),
			fmt.Sprintf(`%d|2|BE|2|112|tt_content|{"newRecord":{"bodytext":"Our team of 24: developers, designers and project managers."},"oldRecord":{"bodytext":"tbd"}}|waymark:run-7/card-3|%d`, res.HistoryUID, writeNow.Unix()))
		wantRows(t, "sys_log", query(t, db, d, "SELECT `userid`, `action`, `type`, `error`, `tablename`, `recuid`, `recpid`, `event_pid`, `channel`, `level` FROM `sys_log`"),
			"2|2|1|0|tt_content|112|2|2|content|info")
		if got := cachedPages(t, db, d); got != "page-1-hash,page-12-hash,page-3-hash" {
			t.Errorf("page cache after the write = %s, want page 2's entry gone", got)
		}
		if n := query(t, db, d, "SELECT COUNT(*) FROM `cache_pages_tags` WHERE `identifier` = 'page-2-hash'"); n[0] != "0" {
			t.Errorf("page 2's cache entry still has %s tags", n[0])
		}
	})
}

// A page's title shows in its parent's menus, and a translation is cached
// under its default-language page: both pages are flushed.
func TestWriterApplyOnATranslatedPageFlushesItsDefaultPageAndParent(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		w := writeSetup(t, db, d)
		res, err := w.Apply(context.Background(), Change{Table: "pages", UID: 12, Field: "seoTitle", Old: "",
			New: "Über Nordlicht Digital – Webagentur in Hamburg", UserID: 2, Key: "k1"})
		if err != nil || fmt.Sprint(res.FlushedPages) != "[2 1]" {
			t.Fatalf("Apply = %+v, %v", res, err)
		}
		wantRows(t, "pages 12", query(t, db, d, "SELECT `seo_title` FROM `pages` WHERE `uid` = 12"), "Über Nordlicht Digital – Webagentur in Hamburg")
		if got := cachedPages(t, db, d); got != "page-12-hash,page-3-hash" {
			t.Errorf("page cache after the write = %s, want pages 2 and 1 gone", got)
		}
	})
}

func TestWriterApplyTwiceWithOneKeyWritesOnce(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		w := writeSetup(t, db, d)
		c := Change{Table: "pages", UID: 2, Field: "description", Old: "", New: "Who we are.", UserID: 2, Key: "retry"}
		first, err := w.Apply(context.Background(), c)
		if err != nil || !first.Applied {
			t.Fatalf("first Apply = %+v, %v", first, err)
		}
		again, err := w.Apply(context.Background(), c)
		if err != nil || again.Applied || !again.AlreadyApplied || again.HistoryUID != first.HistoryUID {
			t.Errorf("second Apply = %+v, %v, want AlreadyApplied with history %d", again, err, first.HistoryUID)
		}
		if n := query(t, db, d, "SELECT COUNT(*) FROM `sys_history`"); n[0] != "1" {
			t.Errorf("sys_history has %s rows, want 1", n[0])
		}
	})
}

// Many workers retrying one change at once: exactly one writes.
func TestWriterConcurrentApplyWithOneKeyWritesOnce(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		w := writeSetup(t, db, d)
		c := Change{Table: "tt_content", UID: 140, Field: "header", Old: "News", New: "News from Nordlicht", UserID: 2, Key: "race"}
		const n = 6
		var wg sync.WaitGroup
		results := make([]WriteResult, n)
		errs := make([]error, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[i], errs[i] = w.Apply(context.Background(), c)
			}()
		}
		wg.Wait()
		applied := 0
		for i := range n {
			if errs[i] != nil {
				t.Errorf("Apply %d = %v", i, errs[i])
			}
			if results[i].Applied {
				applied++
			} else if !results[i].AlreadyApplied {
				t.Errorf("Apply %d = %+v: neither applied nor already applied", i, results[i])
			}
		}
		if applied != 1 {
			t.Errorf("%d of %d concurrent Apply calls wrote, want 1", applied, n)
		}
		if got := query(t, db, d, "SELECT COUNT(*) FROM `sys_history`"); got[0] != "1" {
			t.Errorf("sys_history has %s rows, want 1", got[0])
		}
	})
}

// A field changed in TYPO3 after the card was shown is not overwritten.
func TestWriterApplyRefusesAValueChangedInTYPO3AndWritesNothing(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		w := writeSetup(t, db, d)
		run(t, db, d, "UPDATE `pages` SET `description` = 'Edited in TYPO3.' WHERE `uid` = 2")
		_, err := w.Apply(context.Background(), Change{Table: "pages", UID: 2, Field: "description", Old: "", New: "Who we are.", UserID: 2, Key: "late"})
		var ce *ConflictError
		if !errors.As(err, &ce) || ce.Current != "Edited in TYPO3." || err.Error() != "pages:2 description was changed in TYPO3 since it was shown; nothing was written" {
			t.Fatalf("Apply over a TYPO3 edit = %v, want ConflictError with the current value", err)
		}
		wantRows(t, "pages 2", query(t, db, d, "SELECT `description` FROM `pages` WHERE `uid` = 2"), "Edited in TYPO3.")
		for _, table := range []string{"sys_history", "sys_log"} {
			if n := query(t, db, d, "SELECT COUNT(*) FROM "+table); n[0] != "0" {
				t.Errorf("%s has %s rows after the refusal, want 0", table, n[0])
			}
		}
		if got := cachedPages(t, db, d); got != "page-1-hash,page-12-hash,page-2-hash,page-3-hash" {
			t.Errorf("page cache after the refusal = %s, want untouched", got)
		}
	})
}

func TestWriterApplyRefusesBadChangesAndWritesNothing(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		w := writeSetup(t, db, d)
		ctx := context.Background()
		for _, c := range []struct {
			change Change
			want   string
		}{
			{Change{Table: "pages", UID: 2, Field: "slug", Key: "k"}, "typo3 write: pages.slug is not a text field Waymark writes"},
			{Change{Table: "tt_content", UID: 102, Field: "image", Key: "k"}, "typo3 write: tt_content.image is not a text field Waymark writes"},
			{Change{Table: "tt_content", UID: 100, Field: "imageAlt", Key: "k"}, "typo3 write tt_content:100: imageAlt: the record has no image file"},
			{Change{Table: "be_users", UID: 1, Field: "password", Key: "k"}, "typo3 write: be_users.password is not a text field Waymark writes"},
			{Change{Table: "pages", UID: 2, Field: "description"}, "typo3 write pages:2: the idempotency key must have 1 to 200 characters"},
			{Change{Table: "tt_content", UID: 141, Field: "header", Old: "Old news", Key: "k"}, "typo3 write tt_content:141: unknown record"},
			{Change{Table: "pages", UID: 99, Field: "title", Key: "k"}, "typo3 write pages:99: unknown record"},
		} {
			_, err := w.Apply(ctx, c.change)
			if err == nil || err.Error() != c.want {
				t.Errorf("Apply(%+v) = %v, want %q", c.change, err, c.want)
			}
		}
		for _, table := range []string{"sys_history", "sys_log"} {
			if n := query(t, db, d, "SELECT COUNT(*) FROM "+table); n[0] != "0" {
				t.Errorf("%s has %s rows after refusals, want 0", table, n[0])
			}
		}
	})
}

// A TYPO3 database that is gone fails the write with a reason, never half of it.
func TestWriterApplyOnAnUnreachableDatabaseFailsClearly(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		w := writeSetup(t, db, d)
		db.Close()
		_, err := w.Apply(context.Background(), Change{Table: "pages", UID: 2, Field: "description", Old: "", New: "x", UserID: 2, Key: "k"})
		if err == nil || !strings.HasPrefix(err.Error(), "typo3 write pages:2: ") {
			t.Errorf("Apply on a closed database = %v", err)
		}
	})
}

// The alternative text of an image lives on its file reference: that row
// is changed and recorded, and the content element's page flushed.
func TestWriterApplyWritesImageAltToTheFileReference(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		w := writeSetup(t, db, d)
		ctx := context.Background()
		c := Change{Table: "tt_content", UID: 102, Field: "imageAlt", Old: "", New: "The Nordlicht office by the Elbe in Hamburg-Altona", UserID: 2, Key: "alt"}
		res, err := w.Apply(ctx, c)
		if err != nil || !res.Applied || fmt.Sprint(res.FlushedPages) != "[1]" {
			t.Fatalf("Apply(imageAlt) = %+v, %v", res, err)
		}
		wantRows(t, "file reference", query(t, db, d, "SELECT `uid_foreign`, `alternative`, `tstamp` FROM `sys_file_reference` WHERE `uid_foreign` = 102"),
			fmt.Sprintf("102|The Nordlicht office by the Elbe in Hamburg-Altona|%d", writeNow.Unix()))
		wantRows(t, "sys_history", query(t, db, d, "SELECT `tablename`, `recuid`, `history_data` FROM `sys_history`"),
			`sys_file_reference|1|{"newRecord":{"alternative":"The Nordlicht office by the Elbe in Hamburg-Altona"},"oldRecord":{"alternative":""}}`)
		again, err := w.Apply(ctx, c)
		if err != nil || !again.AlreadyApplied {
			t.Errorf("second Apply(imageAlt) = %+v, %v, want AlreadyApplied", again, err)
		}
		c2 := Change{Table: "tt_content", UID: 131, Field: "imageAlt", Old: "stale", New: "x", UserID: 2, Key: "alt2"}
		var ce *ConflictError
		if _, err := w.Apply(ctx, c2); !errors.As(err, &ce) || ce.Current != "diagram" {
			t.Errorf("Apply(imageAlt over another value) = %v, want ConflictError with current \"diagram\"", err)
		}
	})
}

// The fields of one card are written together or not at all: a field changed
// in TYPO3 refuses the whole card, also the fields written before it in the
// same transaction; once all apply, each has its own history row and key.
func TestWriterApplyAllWritesTheFieldsOfOneCardTogetherOrNotAtAll(t *testing.T) {
	t.Parallel()
	eachDialect(t, func(t *testing.T, db *sql.DB, d Dialect) {
		w := writeSetup(t, db, d)
		run(t, db, d, "UPDATE `pages` SET `keywords` = 'edited in TYPO3' WHERE `uid` = 2")
		card := []Change{
			{Table: "pages", UID: 2, Field: "seoTitle", Old: "", New: "About Nordlicht Digital", UserID: 2, Key: "run-9/c2#seoTitle"},
			{Table: "pages", UID: 2, Field: "keywords", Old: "", New: "agency, Hamburg", UserID: 2, Key: "run-9/c2#keywords"},
		}
		_, err := w.ApplyAll(context.Background(), card)
		var ce *ConflictError
		if !errors.As(err, &ce) || ce.Field != "keywords" || ce.Current != "edited in TYPO3" {
			t.Fatalf("ApplyAll over a TYPO3 edit of its second field = %v", err)
		}
		wantRows(t, "pages 2", query(t, db, d, "SELECT `seo_title`, `keywords` FROM `pages` WHERE `uid` = 2"), "|edited in TYPO3")
		if n := query(t, db, d, "SELECT COUNT(*) FROM `sys_history`"); n[0] != "0" {
			t.Errorf("sys_history has %s rows after the refusal, want 0", n[0])
		}
		card[1].Old = "edited in TYPO3"
		res, err := w.ApplyAll(context.Background(), card)
		if err != nil || len(res) != 2 || !res[0].Applied || !res[1].Applied {
			t.Fatalf("ApplyAll = %+v, %v", res, err)
		}
		wantRows(t, "pages 2", query(t, db, d, "SELECT `seo_title`, `keywords` FROM `pages` WHERE `uid` = 2"), "About Nordlicht Digital|agency, Hamburg")
		wantRows(t, "sys_history", query(t, db, d, "SELECT `correlation_id` FROM `sys_history` ORDER BY `uid`"),
			"waymark:run-9/c2#seoTitle", "waymark:run-9/c2#keywords")
		res, err = w.ApplyAll(context.Background(), card)
		if err != nil || !res[0].AlreadyApplied || !res[1].AlreadyApplied {
			t.Fatalf("ApplyAll again with the same keys = %+v, %v", res, err)
		}
		if _, err := w.ApplyAll(context.Background(), nil); err == nil {
			t.Error("ApplyAll of no change succeeded")
		}
	})
}
