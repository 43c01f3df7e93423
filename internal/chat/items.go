package chat

import (
	"context"
	"fmt"
	"strings"
	"time"

	"waymark/internal/store"
)

// Item is a conversation as a list of conversations shows it: what it is
// about and its state, without its transcript. List reads each whole View
// (messages, outcomes with their record labels, the tour's page) — for a
// list of two hundred conversations that is hundreds of reads, beside TYPO3
// many of them in TYPO3.
type Item struct {
	ID       int64
	Status   Status
	Page     int64
	Language int64
	Skill    *SkillRef
	// Completed: the tour reported its last point (a View's Summary is set).
	Completed bool
	// Ended: the editor ended the tour — its process is over and the last
	// message is the notice tour_ended.
	Ended     bool
	UpdatedAt time.Time
}

// Items lists actor's conversations as List does (newest first, at most
// 200, as stored), each as an Item: one query for the conversations, one
// for the last notice of those whose tour may have been ended, and the
// skills' names.
func (s *Service) Items(ctx context.Context, actor int64) ([]Item, error) {
	return s.reads.items(ctx, actor)
}

func (s *reads) items(ctx context.Context, actor int64) ([]Item, error) {
	ctx, end := s.db.ReadScope(ctx)
	defer end()
	list, err := store.Collect(ctx, s.db, scanRow, "SELECT "+convColumns+" FROM conversations WHERE owner_uid = ? ORDER BY updated_at DESC, id DESC LIMIT 200", actor)
	if err != nil {
		return nil, err
	}
	var over []int64 // idle conversations without a process: ended, or never a tour
	for _, r := range list {
		if r.Status == Idle && !r.Process {
			over = append(over, r.ID)
		}
	}
	last, err := lastNotices(ctx, s.db, over)
	if err != nil {
		return nil, err
	}
	out := make([]Item, 0, len(list))
	for _, r := range list {
		it := Item{ID: r.ID, Status: r.Status, Page: r.Page, Language: r.Language, UpdatedAt: r.UpdatedAt,
			Ended: last[r.ID] == NoticeTourEnded}
		it.Completed, _ = progressCompleted(r.Progress)
		if r.Skill != 0 {
			if n, err := s.skills.NamesOf(ctx, r.Skill); err == nil {
				it.Skill = &SkillRef{UID: r.Skill, Identifier: n.Identifier, Name: n.Name, Process: r.Process}
			}
		}
		out = append(out, it)
	}
	return out, nil
}

// lastNotices returns the notice of the last message of each of the
// conversations ids ("" for one without messages or whose last message is
// no notice).
func lastNotices(ctx context.Context, q store.Querier, ids []int64) (map[int64]string, error) {
	out := map[int64]string{}
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	marks := strings.TrimSuffix(strings.Repeat("?, ", len(ids)), ", ")
	rows, err := q.Query(ctx, `SELECT conversation_id, notice FROM conversation_messages WHERE id IN
		(SELECT MAX(id) FROM conversation_messages WHERE conversation_id IN (`+marks+`) GROUP BY conversation_id)`, args...)
	if err != nil {
		return nil, fmt.Errorf("last notices: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var notice string
		if err := rows.Scan(&id, &notice); err != nil {
			return nil, fmt.Errorf("last notices: %w", err)
		}
		out[id] = notice
	}
	return out, rows.Err()
}
