package content_test

import (
	"context"
	"testing"

	"waymark/internal/content"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

// The records table is this package's: other packages ask it for a
// record's language and for which records are live.
func TestContentAnswersLanguageAndLivenessOfRecords(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		setup(t, db)
		if _, err := db.Exec(ctx, `UPDATE records SET language = 2 WHERE tbl = 'tt_content' AND uid = ?`, ceText); err != nil {
			t.Fatal(err)
		}
		if lang, ok, err := content.Language(ctx, nil, db, "tt_content", ceText); err != nil || !ok || lang != 2 {
			t.Errorf("Language(ceText) = %d, %v, %v; want 2", lang, ok, err)
		}
		if _, ok, err := content.Language(ctx, nil, db, "tt_content", 9999); err != nil || ok {
			t.Errorf("Language(unknown) = %v, %v; want not found", ok, err)
		}
		uids := []int64{ceText, ceDeleted, ceWorkspace, ceRoot, 9999}
		for i := 0; i < 600; i++ { // more than one IN list
			uids = append(uids, int64(100000+i))
		}
		live, err := content.LiveAmong(ctx, nil, db, "tt_content", uids)
		if err != nil {
			t.Fatal(err)
		}
		if len(live) != 2 || !live[ceText] || !live[ceRoot] {
			t.Errorf("LiveAmong = %v, want only %d and %d", live, ceText, ceRoot)
		}
	})
}
