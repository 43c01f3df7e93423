package run_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"waymark/internal/run"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
)

const secret = "S3CRET-meta-description"

// toolPayload is a tool event carrying content in every usual place.
func toolPayload() map[string]any {
	return map[string]any{
		"id": "call_1", "tool": "update_page_metadata", "round": 2, "isError": false,
		"arguments":  map[string]any{"uid": 1, "description": secret},
		"result":     "wrote " + secret,
		"content":    secret,
		"messages":   []any{map[string]any{"role": "user", "content": secret}},
		"target":     map[string]any{"table": "pages", "uid": 1, "fields": []any{"description"}},
		"preview":    []any{map[string]any{"field": "description", "current": secret, "proposed": secret}},
		"note":       secret, // an unknown key holding a string
		"turnDigest": "sha256:abc", "promptTokens": 120, "createdAt": "2026-03-01T09:00:00Z",
		"calls": []any{map[string]any{"id": "call_2", "name": "read_page", "arguments": map[string]any{"q": secret}}},
	}
}

func lineagePayload() map[string]any {
	return map[string]any{
		"configuration": 3, "pin": map[string]any{"skill": 4, "source": "upstream", "digest": "sha256:def"},
		"subject": map[string]any{"table": "pages", "uid": 1, "language": 0}, "processSkill": "seo-optimieren",
		"origin": "chat", "released": false, "predecessor": "", "carriedFrom": nil,
	}
}

func TestFilterAtMetadataKeepsIdentitiesAndDropsContent(t *testing.T) {
	t.Parallel()
	got := run.Filter(run.PrivacyMetadata, run.EventTool, toolPayload())
	want := map[string]any{
		"id": "call_1", "tool": "update_page_metadata", "round": 2, "isError": false,
		"target":     map[string]any{"table": "pages", "uid": 1, "fields": []any{"description"}},
		"turnDigest": "sha256:abc", "promptTokens": 120, "createdAt": "2026-03-01T09:00:00Z",
		"calls": []any{map[string]any{"id": "call_2", "name": "read_page"}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Filter(metadata) =\n%v\nwant\n%v", got, want)
	}
	if b, _ := json.Marshal(got); strings.Contains(string(b), secret) {
		t.Errorf("metadata payload holds content: %s", b)
	}
}

func TestFilterAtRedactedKeepsStructureAndMasksContent(t *testing.T) {
	t.Parallel()
	got := run.Filter(run.PrivacyRedacted, run.EventTool, map[string]any{
		"id": "call_1", "arguments": map[string]any{"uid": 1, "description": secret},
		"messages": []any{map[string]any{"role": "user", "content": secret}},
		"note":     "mail jane@example.org",
	})
	want := map[string]any{
		"id": "call_1", "arguments": map[string]any{"uid": 1, "description": run.Redacted},
		"messages": []any{map[string]any{"role": "user", "content": run.Redacted}},
		"note":     "mail " + run.Redacted,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Filter(redacted) =\n%v\nwant\n%v", got, want)
	}
}

func TestFilterAtNoneKeepsOnlyTheKindsThatMustBeStored(t *testing.T) {
	t.Parallel()
	if got := run.Filter(run.PrivacyNone, run.EventTool, toolPayload()); len(got) != 0 {
		t.Errorf("Filter(none, tool) = %v, want empty", got)
	}
	approval := map[string]any{"approved": true, "decidedBy": 7, "reason": "skip", "comment": secret}
	want := map[string]any{"approved": true, "decidedBy": 7, "reason": "skip"}
	if got := run.Filter(run.PrivacyNone, run.EventApproval, approval); !reflect.DeepEqual(got, want) {
		t.Errorf("Filter(none, approval) = %v, want %v", got, want)
	}
	// A notice is codes and uids: a refusal or a dropped source survives none.
	notice := map[string]any{"kind": "dropped_source", "reason": "predecessor_gone", "uid": 0, "message": secret}
	wantNotice := map[string]any{"kind": "dropped_source", "reason": "predecessor_gone", "uid": 0}
	if got := run.Filter(run.PrivacyNone, run.EventNotice, notice); !reflect.DeepEqual(got, wantNotice) {
		t.Errorf("Filter(none, notice) = %v, want %v", got, wantNotice)
	}
	for _, p := range []run.Privacy{run.PrivacyNone, run.PrivacyMetadata, run.PrivacyRedacted, run.PrivacyFull} {
		if got := run.Filter(p, run.EventLineage, lineagePayload()); !reflect.DeepEqual(got, lineagePayload()) {
			t.Errorf("Filter(%s, lineage) = %v, want it whole", p, got)
		}
	}
}

func TestStoredEventRowsHoldContentOnlyWherePrivacyAllows(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		b := setup(t, db)
		// secrets is how often the secret may appear in a raw row: at redacted
		// only the string under the unknown, non-content key "note" stays.
		for _, c := range []struct {
			p       run.Privacy
			secrets int
		}{{run.PrivacyNone, 0}, {run.PrivacyMetadata, 0}, {run.PrivacyRedacted, 1}, {run.PrivacyFull, 8}} {
			id := b.in(t, run.StatusRunning)
			for _, k := range []run.Kind{run.EventTool, run.EventLLM, run.EventRequest, run.EventInput, run.EventToolWrite, run.EventApproval} {
				if _, err := b.store.AppendEvent(b.ctx, id, k, toolPayload(), c.p); err != nil {
					t.Fatalf("AppendEvent(%s, %s): %v", c.p, k, err)
				}
			}
			if _, err := b.store.AppendEvent(b.ctx, id, run.EventLineage, lineagePayload(), c.p); err != nil {
				t.Fatal(err)
			}
			raw := b.rawPayloads(t, id)
			for i, payload := range raw[:6] {
				want := c.secrets
				if c.p == run.PrivacyNone && i < 4 {
					want = 0 // not a kind that must be stored: an empty payload
				}
				if got := strings.Count(payload, secret); got != want {
					t.Errorf("%s: raw payload %d holds the secret %d times, want %d: %s", c.p, i, got, want, payload)
				}
			}
			if c.p == run.PrivacyRedacted && !strings.Contains(raw[0], `"arguments":{"description":"[redacted]","uid":1}`) {
				t.Errorf("redacted payload lost its structure: %s", raw[0])
			}
			if c.p == run.PrivacyMetadata && !strings.Contains(raw[0], `"tool":"update_page_metadata"`) {
				t.Errorf("metadata payload lost the tool name: %s", raw[0])
			}
			if c.p == run.PrivacyNone && (raw[0] != "{}" || !strings.Contains(raw[4], `"table":"pages"`)) {
				t.Errorf("none: tool payload %s (want {}), tool_write payload %s (want its target)", raw[0], raw[4])
			}
			var lineage map[string]any
			if err := json.Unmarshal([]byte(raw[6]), &lineage); err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(lineagePayload())
			var wantMap map[string]any
			_ = json.Unmarshal(want, &wantMap)
			if !reflect.DeepEqual(lineage, wantMap) {
				t.Errorf("%s: stored lineage %s, want it whole %s", c.p, raw[6], want)
			}
		}
	})
}
