package campaign

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"waymark/internal/catalog"
	"waymark/internal/chat"
	"waymark/internal/fault"
	"waymark/internal/store"
)

// item is a campaign item row.
type item struct {
	ID, Campaign, Page, Language, Conversation int64
	State                                      ItemState
	Reason                                     string
	StartedAt                                  int64
}

const itemColumns = `id, campaign_id, page_uid, language, conversation_id, state, reason, started_at`

// prefixed is columns, a list as itemColumns, each with prefix (a table's
// alias in a join).
func prefixed(prefix, columns string) string {
	return prefix + strings.ReplaceAll(columns, ", ", ", "+prefix)
}

func scanItem(sc store.Scanner) (item, error) {
	var it item
	var state string
	err := sc.Scan(&it.ID, &it.Campaign, &it.Page, &it.Language, &it.Conversation, &state, &it.Reason, &it.StartedAt)
	it.State = ItemState(state)
	return it, err
}

// Work is a campaign's job: for about one slice it follows the campaign's
// running tours and starts pending pages while the campaign's and the
// installation's limits allow, then hands the campaign to a next job — or,
// once no page is pending or running, marks it done. A campaign that is not
// running is left as it is (a resume enqueues its work again).
//
// A job works a campaign under its lease (ticked_at): taken by one guarded
// UPDATE, so of two jobs of one campaign (a resume's and the reaper's, say)
// one works it and the other ends; released when the job hands on.
func (s *Service) Work(ctx context.Context, id int64) error {
	stamp := s.now()
	end := s.clk.Now().Add(s.cfg.Slice)
	res, err := s.d.DB.Exec(ctx, "UPDATE campaigns SET ticked_at = ? WHERE id = ? AND state = ? AND ticked_at < ?",
		stamp, id, string(Running), stamp-s.lease().Microseconds())
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return nil // not running, or another job holds it
	}
	for {
		r, err := getRow(ctx, s.d.DB, id)
		if errors.Is(err, ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if r.State != Running {
			return s.release(ctx, id, stamp)
		}
		left, err := s.step(ctx, r)
		if err != nil {
			_ = s.release(context.WithoutCancel(ctx), id, stamp) // River retries the job
			return err
		}
		// A campaign stopped at its budget has none left either: the finish
		// then loses (it is no longer running) and changes nothing.
		if left == 0 {
			if _, err := fire(ctx, s.d.DB, id, EventFinish, s.now()); err != nil {
				return err
			}
			return s.release(ctx, id, stamp)
		}
		if !s.clk.Now().Before(end) {
			return s.again(ctx, id, stamp)
		}
		select {
		case <-ctx.Done():
			return s.again(context.WithoutCancel(ctx), id, stamp)
		case <-time.After(s.cfg.Poll):
		}
	}
}

// release gives up the lease a job took at stamp.
func (s *Service) release(ctx context.Context, id, stamp int64) error {
	_, err := s.d.DB.Exec(ctx, "UPDATE campaigns SET ticked_at = 0 WHERE id = ? AND ticked_at = ?", id, stamp)
	return err
}

// lease is how long a job holds a campaign it works: well past a slice.
func (s *Service) lease() time.Duration { return 3*s.cfg.Slice + s.cfg.Poll }

// again releases the lease a job took at stamp and enqueues the next job of
// campaign id, in one transaction.
func (s *Service) again(ctx context.Context, id, stamp int64) error {
	if s.d.Queue == nil {
		return nil
	}
	return s.d.Queue.InTx(ctx, func(tx *store.Tx) error {
		if _, err := tx.Exec(ctx, "UPDATE campaigns SET ticked_at = 0 WHERE id = ? AND ticked_at = ?", id, stamp); err != nil {
			return err
		}
		return s.d.Queue.InsertCampaignTx(ctx, tx, id)
	})
}

// step follows the running items of r and claims pending ones within the
// limits; it returns how many items are pending or running afterwards.
func (s *Service) step(ctx context.Context, r row) (int, error) {
	running, err := store.Collect(ctx, s.d.DB, scanItem, "SELECT "+itemColumns+" FROM campaign_items WHERE campaign_id = ? AND state = ?", r.ID, string(ItemRunning))
	if err != nil {
		return 0, err
	}
	busy := 0
	for _, it := range running {
		still, err := s.follow(ctx, r, it)
		if err != nil {
			return 0, err
		}
		if still {
			busy++
		}
	}
	if stop, err := s.atBudget(ctx, r, busy); err != nil || stop {
		return busy, err
	}
	var all int
	if err := s.d.DB.QueryRow(ctx, "SELECT COUNT(*) FROM campaign_items WHERE state = ?", string(ItemRunning)).Scan(&all); err != nil {
		return 0, err
	}
	free := min(r.Concurrency-busy, s.cfg.Limit-all)
	if free > 0 {
		room, err := s.runRoom(ctx, r.Owner)
		if err != nil {
			return 0, err
		}
		free = min(free, room)
	}
	if free > 0 {
		pending, err := store.Collect(ctx, s.d.DB, scanItem, "SELECT "+itemColumns+" FROM campaign_items WHERE campaign_id = ? AND state = ? ORDER BY position LIMIT ?",
			r.ID, string(ItemPending), free)
		if err != nil {
			return 0, err
		}
		for _, it := range pending {
			if err := s.pickUp(ctx, r, it); err != nil {
				return 0, err
			}
		}
	}
	var left int
	err = s.d.DB.QueryRow(ctx, "SELECT COUNT(*) FROM campaign_items WHERE campaign_id = ? AND state IN (?, ?)", r.ID, string(ItemPending), string(ItemRunning)).Scan(&left)
	return left, err
}

// atBudget reports whether campaign r's tours cost its budget (a campaign
// without one never does): then no further page is started. Its tours
// under way (busy) run to their first card; once none runs, the campaign
// is budget_reached and its pages not started are skipped with the reason
// "budget_reached", in one transaction. The cost is read before each
// round of starts, so the tours started in one round and the tours under
// way may pass the budget by what they cost.
func (s *Service) atBudget(ctx context.Context, r row, busy int) (bool, error) {
	b, ok := budgetOf(r)
	if !ok {
		return false, nil
	}
	sp, err := spent(ctx, s.d.DB, r.ID)
	if err != nil || sp.Cost < b {
		return false, err
	}
	if busy > 0 {
		return true, nil
	}
	now := s.now()
	return true, s.d.DB.InTx(ctx, func(tx *store.Tx) error {
		won, err := fire(ctx, tx, r.ID, EventBudget, now)
		if err != nil || !won {
			return err
		}
		_, err = tx.Exec(ctx, "UPDATE campaign_items SET state = ?, reason = ?, finished_at = ? WHERE campaign_id = ? AND state = ?",
			string(ItemSkipped), string(BudgetReached), now, r.ID, string(ItemPending))
		return err
	})
}

// pickUp claims a pending item and starts its tour as the owner would:
// chat.Start with the campaign's process and configuration — its checks
// read the owner as she is now — then the process's first message. A start
// the chat refuses skips the item with the refusal's code as its reason; a
// failure of the store hands the item back and the job is retried.
func (s *Service) pickUp(ctx context.Context, r row, it item) error {
	won, err := moveItem(ctx, s.d.DB, it.ID, ItemRunning, "", s.now(), ItemPending)
	if err != nil || !won {
		return err
	}
	v, err := s.d.Chat.Start(ctx, r.Owner, it.Page, it.Language, r.Process, r.Configuration)
	if err != nil {
		if refused(err) {
			_, err = moveItem(ctx, s.d.DB, it.ID, ItemSkipped, fault.CodeOf(err), s.now(), ItemRunning)
			return err
		}
		_, _ = moveItem(context.WithoutCancel(ctx), s.d.DB, it.ID, ItemPending, "", s.now(), ItemRunning)
		return fmt.Errorf("start the tour of page %d: %w", it.Page, err)
	}
	// The item's tour is this conversation, recorded once: a second claim
	// (after a crash right here) starts a tour only for an item without one.
	res, err := s.d.DB.Exec(ctx, "UPDATE campaign_items SET conversation_id = ? WHERE id = ? AND state = ? AND conversation_id = 0", v.ID, it.ID, string(ItemRunning))
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return nil
	}
	it.Conversation, it.State = v.ID, ItemRunning
	_, err = s.begin(ctx, r, it, v)
	return err
}

// refused reports whether err is the chat's answer that this start can
// never run (a refusal, not a failure of the store).
func refused(err error) bool {
	switch fault.KindOf(err) {
	case fault.Invalid, fault.Forbidden, fault.NotFound, fault.Conflict, fault.Unprocessable:
		return true
	}
	return false
}

// begin sends the process's first message to the item's conversation when
// it has none yet (the message the web UI and start_tour send), and
// reports whether the tour is under way.
func (s *Service) begin(ctx context.Context, r row, it item, v chat.View) (bool, error) {
	if len(v.Messages) > 0 || v.LastRun != "" {
		return true, nil
	}
	a, err := s.actor(ctx, r.Owner)
	if err != nil {
		_, err = moveItem(ctx, s.d.DB, it.ID, ItemSkipped, fault.CodeOf(err), s.now(), ItemRunning)
		return false, err
	}
	name := ""
	if v.Skill != nil {
		name = v.Skill.Name
	}
	err = s.d.Chat.Send(ctx, r.Owner, v.ID, catalog.For(a.BackendLanguage).Get("chat.startMessage", name))
	switch {
	case err == nil, errors.Is(err, chat.ErrBusy):
		return true, nil
	case refused(err):
		_, err = moveItem(ctx, s.d.DB, it.ID, ItemFailed, fault.CodeOf(err), s.now(), ItemRunning)
		return false, err
	default:
		return false, err
	}
}

// follow reads a running item's tour and moves the item once the tour
// waits for an answer (proposals), failed, or ended; it reports whether
// the item still runs.
func (s *Service) follow(ctx context.Context, r row, it item) (bool, error) {
	if it.Conversation == 0 {
		// Claimed, but its tour was never recorded: the process died between
		// the claim and the start. A conversation the start made before the
		// process died (the owner's, of this page, language, process and
		// configuration, made since the claim and no item's) is the item's
		// tour: it is recorded now and begun, so the page gets no second one.
		// Without one, the page is pending again after Stale.
		adopted, err := s.adopt(ctx, r, it)
		if err != nil || adopted.Conversation != 0 {
			if err != nil {
				return false, err
			}
			v, err := s.d.Chat.Get(ctx, r.Owner, adopted.Conversation)
			if err != nil {
				if refused(err) {
					_, err = moveItem(ctx, s.d.DB, it.ID, ItemFailed, fault.CodeOf(err), s.now(), ItemRunning)
				}
				return false, err
			}
			return s.begin(ctx, r, adopted, v)
		}
		if s.clk.Now().Sub(store.Time(it.StartedAt)) > s.cfg.Stale {
			_, err := moveItem(ctx, s.d.DB, it.ID, ItemPending, "", s.now(), ItemRunning)
			return false, err
		}
		return true, nil
	}
	v, err := s.d.Chat.Get(ctx, r.Owner, it.Conversation)
	if err != nil {
		if refused(err) {
			_, err = moveItem(ctx, s.d.DB, it.ID, ItemFailed, fault.CodeOf(err), s.now(), ItemRunning)
			return false, err
		}
		return false, err
	}
	to, reason := settled(v)
	if to == "" {
		if v.Status == chat.Idle {
			return s.begin(ctx, r, it, v)
		}
		return true, nil
	}
	_, err = moveItem(ctx, s.d.DB, it.ID, to, reason, s.now(), ItemRunning)
	return false, err
}

// adopt records as an item's tour the conversation its start made before the
// process died between the start and the record (see follow), if there is
// one; it returns the item with its conversation (0: none adopted).
func (s *Service) adopt(ctx context.Context, r row, it item) (item, error) {
	ids, err := store.Collect(ctx, s.d.DB, store.Column[int64], `SELECT c.id FROM conversations c
		WHERE c.owner_uid = ? AND c.page_uid = ? AND c.language = ? AND c.skill_uid = ? AND c.configuration_uid = ? AND c.created_at >= ?
		AND NOT EXISTS (SELECT 1 FROM campaign_items i WHERE i.conversation_id = c.id) ORDER BY c.id LIMIT 1`,
		r.Owner, it.Page, it.Language, r.Process, r.Configuration, it.StartedAt)
	if err != nil || len(ids) == 0 {
		return item{}, err
	}
	res, err := s.d.DB.Exec(ctx, "UPDATE campaign_items SET conversation_id = ? WHERE id = ? AND state = ? AND conversation_id = 0", ids[0], it.ID, string(ItemRunning))
	if err != nil {
		return item{}, err
	}
	if n, _ := res.RowsAffected(); n != 1 {
		return item{}, nil
	}
	it.Conversation = ids[0]
	return it, nil
}

// settled is what a tour's conversation says of its item: "" while it runs
// (or, idle without a message, before it began).
func settled(v chat.View) (ItemState, string) {
	switch v.Status {
	case chat.AwaitingApproval, chat.AwaitingInput:
		return ItemProposals, ""
	case chat.Failed:
		return ItemFailed, "tour_failed"
	case chat.Idle:
		if len(v.Messages) == 0 && v.LastRun == "" {
			return "", ""
		}
		return ItemDone, ""
	}
	return "", ""
}

// settleWaiting moves the items of r whose tour waited for an answer and
// has since ended or failed (read from their conversations). A tour whose
// conversation still waits as stored, on a run that still waits, has
// neither ended nor failed: only the others are read in full (the chat's
// read reconciles them), so that every read of a campaign with 1,000
// waiting cards costs one statement here rather than a conversation read
// per card.
func (s *Service) settleWaiting(ctx context.Context, r row) error {
	items, err := s.waiting(ctx, r, 0, false)
	if err != nil {
		return err
	}
	for _, it := range items {
		if it.movedOn {
			if _, _, err := s.settleItem(ctx, r, it.item); err != nil {
				return err
			}
		}
	}
	return nil
}

// settleItem reads the conversation of an item with proposals whose tour
// moved on and moves the item to done or failed when its tour ended so
// (gone: the item has left the review list, or its owner is gone).
func (s *Service) settleItem(ctx context.Context, r row, it item) (v chat.View, gone bool, err error) {
	v, err = s.d.Chat.Get(ctx, r.Owner, it.Conversation)
	if err != nil {
		if refused(err) {
			return chat.View{}, true, nil // the owner is gone: her items stay as they were
		}
		return chat.View{}, false, err
	}
	if to, reason := settled(v); to == ItemDone || to == ItemFailed {
		if _, err := moveItem(ctx, s.d.DB, it.ID, to, reason, s.now(), ItemProposals); err != nil {
			return chat.View{}, false, err
		}
		return v, true, nil
	}
	return v, false, nil
}
