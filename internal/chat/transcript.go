package chat

import (
	"context"
	"encoding/json"

	"waymark/internal/store"
)

// The transcript of a conversation — its messages — and the outcomes of its
// decided cards, each a row of its own beside the conversation's.

// addMessageTx adds m to the transcript of conversation id.
func addMessageTx(ctx context.Context, q store.Querier, id int64, m Message, now int64) error {
	_, err := q.Exec(ctx, `INSERT INTO conversation_messages (conversation_id, role, content, notice, created_at) VALUES (?, ?, ?, ?, ?)`,
		id, m.Role, m.Content, m.Notice, now)
	return err
}

func messages(ctx context.Context, q store.Querier, id int64) ([]Message, error) {
	return store.Collect(ctx, q, func(sc store.Scanner) (Message, error) {
		var m Message
		err := sc.Scan(&m.Role, &m.Content, &m.Notice)
		return m, err
	}, `SELECT role, content, notice FROM conversation_messages WHERE conversation_id = ? ORDER BY id`, id)
}

// messageCount is how many messages conversation id has.
func messageCount(ctx context.Context, q store.Querier, id int64) (int64, error) {
	var n int64
	err := q.QueryRow(ctx, "SELECT COUNT(*) FROM conversation_messages WHERE conversation_id = ?", id).Scan(&n)
	return n, err
}

// addOutcomeTx records a decided card's outcome and reports whether it did:
// a card is settled once (the run and the messages it came after key it,
// migration 00016), and an outcome of the same card stored already leaves
// this one out.
func addOutcomeTx(ctx context.Context, q store.Querier, id int64, o Outcome, now int64) (bool, error) {
	fields, _ := json.Marshal(o.Fields)
	res, err := q.Exec(ctx, `INSERT INTO conversation_outcomes (conversation_id, run_uuid, outcome, after_message, tbl, uid, fields, created_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (conversation_id, run_uuid, after_message) DO NOTHING`,
		id, o.Run, o.Outcome, o.After, o.Table, o.UID, string(fields), now)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

func outcomes(ctx context.Context, q store.Querier, id int64) ([]Outcome, error) {
	return store.Collect(ctx, q, func(sc store.Scanner) (Outcome, error) {
		var o Outcome
		var fields string
		if err := sc.Scan(&o.Run, &o.Outcome, &o.After, &o.Table, &o.UID, &fields); err != nil {
			return o, err
		}
		_ = json.Unmarshal([]byte(fields), &o.Fields)
		if o.Fields == nil {
			o.Fields = []string{}
		}
		return o, nil
	}, `SELECT run_uuid, outcome, after_message, tbl, uid, fields FROM conversation_outcomes
		WHERE conversation_id = ? ORDER BY id`, id)
}
