package chat

import (
	"context"
	"database/sql"
	"errors"

	"waymark/internal/store"
)

// KeepReplyTx keeps answer, the model's reply that completes run, for the
// conversations processing it as their turn, in tx — the transaction that
// completes the run (agent.Config.CompletedTx). The run stores its answer
// only at privacy full; the reply of a turn a worker continued after
// another died, or of a run whose worker died before it handed the result
// over, was lost with that worker, and the conversation settled with an
// empty message. Whoever settles the conversation on the run takes the reply
// from here (settleRunWith) and deletes it. The conversation's transcript
// holds the reply anyway: this is no more content than it keeps.
func KeepReplyTx(ctx context.Context, tx *store.Tx, run, answer string) error {
	_, err := tx.Exec(ctx, `INSERT INTO conversation_replies (conversation_id, run_uuid, content)
		SELECT id, ?, ? FROM conversations WHERE pending_run_uuid = ? AND status = ?
		ON CONFLICT (conversation_id, run_uuid) DO NOTHING`, run, answer, run, string(Processing))
	return err
}

// keptReply is the reply KeepReplyTx kept for conversation id and run ("": none).
func keptReply(ctx context.Context, q store.Querier, id int64, run string) (string, error) {
	var reply string
	err := q.QueryRow(ctx, "SELECT content FROM conversation_replies WHERE conversation_id = ? AND run_uuid = ?", id, run).Scan(&reply)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	return reply, err
}

// dropRepliesTx deletes the replies kept for conversation id: the settlement
// that commits with it took the one it needed, and the others belong to
// runs the conversation moved on from.
func dropRepliesTx(ctx context.Context, q store.Querier, id int64) error {
	_, err := q.Exec(ctx, "DELETE FROM conversation_replies WHERE conversation_id = ?", id)
	return err
}
