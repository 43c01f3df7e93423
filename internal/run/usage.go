package run

import (
	"context"
	"fmt"

	"waymark/internal/store"
)

// recordUsage keeps the tokens of a flush as one usage row of run id, in
// the transaction that adds them to the run: with the run's configuration,
// its model and its prices per million tokens as they are now (a later
// price change does not rewrite it), the initiator, and the conversation
// that waits on the run, if one does. The costs report, a card's and a
// tour's cost read these rows; they outlive the run.
func (s *Store) recordUsage(ctx context.Context, q store.Querier, id string, u Usage) error {
	_, err := q.Exec(ctx, `INSERT INTO run_usage (run_uuid, conversation_id, configuration, model, initiator,
			prompt_tokens, completion_tokens, cost, created_at)
		SELECT r.uuid, COALESCE((SELECT MIN(v.id) FROM conversations v WHERE v.pending_run_uuid = r.uuid), 0),
			r.configuration, COALESCE(c.model, ''), r.initiator, ?, ?,
			(? * COALESCE(c.price_input_per_mtok, 0) + ? * COALESCE(c.price_output_per_mtok, 0)) / 1000000.0, ?
		FROM runs r LEFT JOIN configurations c ON c.uid = r.configuration WHERE r.uuid = ?`,
		u.PromptTokens, u.CompletionTokens, u.PromptTokens, u.CompletionTokens, store.Micros(s.clk.Now()), id)
	if err != nil {
		return fmt.Errorf("usage of run %s: %w", id, err)
	}
	return nil
}
