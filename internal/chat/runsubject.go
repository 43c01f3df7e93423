package chat

import (
	"context"
	"database/sql"
	"errors"
)

// RunSubject is the page and language of the conversation that waits on run
// uuid (its pending run); ok is false when no conversation waits on it (a
// run started through the runs API). The inbox names a waiting card's page
// with it.
func (s *Service) RunSubject(ctx context.Context, uuid string) (page, language int64, ok bool, err error) {
	err = s.db.QueryRow(ctx, "SELECT page_uid, language FROM conversations WHERE pending_run_uuid = ?", uuid).Scan(&page, &language)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, 0, false, nil
	}
	if err != nil {
		return 0, 0, false, err
	}
	return page, language, page > 0, nil
}
