package bridge_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"waymark/internal/demo"
	"waymark/internal/fixture"
	"waymark/internal/store"
	"waymark/internal/typo3/typo3test"
	"waymark/internal/waymarktest"
)

// seeded is what ../shared/typo3/setup.sh seeded (DIR/seed.json): the page uids.
type seeded struct {
	Root, About, Services, Contact, Web int64
}

func seedOf(t testing.TB, r *typo3test.Real) seeded {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(r.Dir, "seed.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s seeded
	if err := json.Unmarshal(raw, &s); err != nil || s.Root == 0 || s.Web == 0 {
		t.Fatalf("seed.json %s: %v", raw, err)
	}
	return s
}

// importCampaignProcess gives TYPO3's group Editor a configuration (uid 10)
// on the offline demo model with the demo's process "seo-optimieren"
// (skill 1) attached, approved by TYPO3's administrator admin.
func importCampaignProcess(t testing.TB, b *beside) {
	t.Helper()
	var admin int64
	if err := b.r.DB.QueryRow(b.r.Rebind("SELECT `uid` FROM `be_users` WHERE `username` = 'admin'")).Scan(&admin); err != nil {
		t.Fatal(err)
	}
	doc, err := fixture.Decode(demo.Fixture, "site.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var process string
	for _, s := range doc.Skills {
		if s.Identifier == "seo-optimieren" {
			process = s.Markdown
		}
	}
	if process == "" {
		t.Fatal("the demo has no process seo-optimieren")
	}
	md, _ := json.Marshal(process)
	text := fmt.Sprintf(`
configurations:
  - {uid: 10, identifier: demo-offline, name: Demo model, active: true, groups: [%d], provider: {type: demo},
     contextWindow: 32000, maxOutputTokens: 1024, requireSecondApprover: false, privacy: metadata}
skillSources:
  - {uid: 1, type: backend, title: Site, trustLevel: first_party}
skills:
  - {uid: 1, source: 1, identifier: seo-optimieren, enabled: true, markdown: %s}
tools:
  - {name: highlight_record, enabled: true}
approvals:
  - {skill: 1, digest: current, approvedBy: %d}
attachments:
  - {configuration: 10, skill: 1, loadMode: always}
`, b.group, md, admin)
	if _, err := fixture.Import(context.Background(), b.env.DB, []byte(text), "process.yaml", b.env.App.FixtureOptions()); err != nil {
		t.Fatalf("import: %v", err)
	}
}

type (
	besideCampaign struct {
		ID     int64  `json:"id"`
		State  string `json:"state"`
		Counts struct {
			Total, Pending, Running, Proposals, Skipped, Failed, Done int
		} `json:"counts"`
	}
	besideCard struct {
		Conversation int64  `json:"conversation"`
		TurnDigest   string `json:"turnDigest"`
		Page         int64  `json:"page"`
		Fields       []struct {
			Field, Current, Proposed string
		} `json:"fields"`
	}
	exported struct {
		Page          int64  `json:"page"`
		Table         string `json:"table"`
		UID           int64  `json:"uid"`
		Field         string `json:"field"`
		Old           string `json:"oldValue"`
		New           string `json:"newValue"`
		Run           string `json:"run"`
		Configuration int64  `json:"configuration"`
		SkillName     string `json:"skillIdentifier"`
		SkillDigest   string `json:"skillDigest"`
		AnsweredBy    string `json:"answeredBy"`
		ReleasedBy    string `json:"releasedBy"`
	}
)

// A campaign beside a real TYPO3 13.4, as the TYPO3 user "editor", over the
// seeded site (root page and two levels) where TYPO3's page permissions let
// her group only show the Services branch: the pages TYPO3 itself says she
// may not edit (BackendUserAuthentication::doesUserHaveAccess) are skipped
// with page_read_only and get no tour, and nothing else is; every other page
// runs to its first card on the offline model. A bulk apply in which one card
// changed since the list was drawn (she asked for a variant in the chat)
// refuses and names that card and answers the others: TYPO3's DataHandler
// writes each as the editor — read back with TYPO3's BackendUtility and
// RecordHistory — while the changed card's page, the skipped pages and every
// other field hold what they held. The export of applied changes lists
// exactly the written changes with the value before and after, who answered,
// the run, configuration and process, in JSON and in CSV.
func TestACampaignBesideTYPO3SkipsWhatTYPO3ForbidsAndWritesOnlyAnsweredCardsThroughDataHandler(t *testing.T) {
	typo3test.EachReal(t, func(t *testing.T, r *typo3test.Real) {
		ctx := context.Background()
		b := besideReal(t, r)
		importCampaignProcess(t, b)
		s := seedOf(t, r)
		pages := []int64{s.Root, s.About, s.Services, s.Contact, s.Web}
		list := strings.Trim(strings.Join(strings.Fields(fmt.Sprint(pages)), ","), "[]")
		// A fresh start each run (the installation is shared and keeps what
		// earlier runs wrote): short descriptions for the offline model to
		// improve, set by TYPO3's administrator; the Services branch only
		// shown to the group Editor.
		r.PHP(t, fmt.Sprintf(`$GLOBALS['BE_USER']->workspace = 0; $d = [];
			foreach ([%s] as $p) { $d['pages'][$p] = ['description' => 'Short.', 'seo_title' => '', 'editlock' => 0, 'perms_group' => 31]; }
			foreach ([%d, %d] as $p) { $d['pages'][$p]['perms_group'] = 1; }
			$dh = t3_dh($d); if ($dh->errorLog) { echo implode('; ', $dh->errorLog); exit(1); }`, list, s.Services, s.Web))
		defer r.PHP(t, fmt.Sprintf(`t3_dh(['pages' => [%d => ['perms_group' => 31], %d => ['perms_group' => 31]]]);`, s.Services, s.Web))
		// TYPO3's own verdict: which of the pages may the editor edit?
		var mayEdit map[string]bool
		if err := json.Unmarshal([]byte(r.PHP(t, fmt.Sprintf(`use TYPO3\CMS\Backend\Utility\BackendUtility; use TYPO3\CMS\Core\Type\Bitmask\Permission;
			$u = t3_as_user(%d); $out = [];
			foreach ([%s] as $p) { $out[(string)$p] = $u->doesUserHaveAccess(BackendUtility::getRecord('pages', $p), Permission::PAGE_EDIT); }
			echo json_encode($out);`, b.editor, list))), &mayEdit); err != nil {
			t.Fatal(err)
		}
		var forbidden, allowed []int64
		for _, p := range pages {
			if mayEdit[fmt.Sprint(p)] {
				allowed = append(allowed, p)
			} else {
				forbidden = append(forbidden, p)
			}
		}
		if !slices.Equal(forbidden, []int64{s.Services, s.Web}) {
			t.Fatalf("TYPO3 says the editor may not edit %v, want the Services branch %v", forbidden, []int64{s.Services, s.Web})
		}
		fields := func() map[int64]string { // every page's description and SEO title, as TYPO3 reads them
			var got map[string]string
			if err := json.Unmarshal([]byte(r.PHP(t, fmt.Sprintf(`$out = [];
				foreach ([%s] as $p) { $rec = \TYPO3\CMS\Backend\Utility\BackendUtility::getRecord('pages', $p); $out[(string)$p] = $rec['description'] . '|' . $rec['seo_title']; }
				echo json_encode($out);`, list))), &got); err != nil {
				t.Fatal(err)
			}
			out := map[int64]string{}
			for _, p := range pages {
				out[p] = got[fmt.Sprint(p)]
			}
			return out
		}
		before := fields()
		start := time.Now().Add(-time.Second)

		editor := b.tokenOf(t, b.editor, "editor")
		v := waymarktest.Decode[besideCampaign](t, editor.Must("POST", "/api/campaigns", map[string]any{
			"process": "seo-optimieren", "configuration": 10, "rootPage": s.Root, "depth": 2, "concurrency": 3}, 201))
		if v.Counts.Total != len(pages) {
			t.Fatalf("created: %+v, want the %d pages", v, len(pages))
		}
		path := fmt.Sprintf("/api/campaigns/%d", v.ID)
		for deadline := time.Now().Add(2 * time.Minute); v.State != "done"; time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("the campaign never finished: %+v", v)
			}
			v = waymarktest.Decode[besideCampaign](t, editor.Must("GET", path, nil, 200))
		}
		items, err := store.Collect(ctx, b.env.DB, func(sc store.Scanner) ([3]string, error) {
			var page int64
			var st, reason string
			err := sc.Scan(&page, &st, &reason)
			return [3]string{fmt.Sprint(page), st, reason}, err
		}, "SELECT page_uid, state, reason FROM campaign_items WHERE campaign_id = ? ORDER BY position", v.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range items {
			var p int64
			fmt.Sscan(it[0], &p)
			want := "proposals"
			if slices.Contains(forbidden, p) {
				want = "skipped"
				if it[2] != "page_read_only" {
					t.Errorf("page %d skipped for %q, want page_read_only", p, it[2])
				}
			}
			if it[1] != want {
				t.Errorf("page %d: %s %s, want %s", p, it[1], it[2], want)
			}
		}
		var tours int
		if err := b.env.DB.QueryRow(ctx, "SELECT COUNT(*) FROM conversations WHERE page_uid IN ("+list+")").Scan(&tours); err != nil || tours != len(allowed) {
			t.Errorf("tours: %d (%v), want one for each of the %d pages she may edit", tours, err, len(allowed))
		}
		if now := fields(); !maps.Equal(now, before) {
			t.Fatalf("written before any answer: %v, was %v", now, before)
		}

		cards := waymarktest.Decode[struct{ Cards []besideCard }](t, editor.Must("GET", path+"/cards", nil, 200)).Cards
		if len(cards) != len(allowed) {
			t.Fatalf("cards: %+v, want one for each of %v", cards, allowed)
		}
		refs := []map[string]any{}
		for _, c := range cards {
			if len(c.Fields) != 1 || c.Fields[0].Field != "description" || c.Fields[0].Current != "Short." || c.Fields[0].Proposed == "" {
				t.Fatalf("card of page %d: %+v, want a description over TYPO3's %q", c.Page, c.Fields, "Short.")
			}
			refs = append(refs, map[string]any{"conversation": c.Conversation, "turnDigest": c.TurnDigest})
		}
		// One card changes before the bulk answer: she asks for another variant in the chat.
		changed := cards[1]
		editor.Must("POST", fmt.Sprintf("/api/conversations/%d/answer", changed.Conversation), map[string]any{"turnDigest": changed.TurnDigest, "answer": "variant"}, 202)
		res := waymarktest.Decode[struct {
			Results []struct {
				Conversation int64
				Outcome      string
				Code         string
			}
		}](t, editor.Must("POST", path+"/answers", map[string]any{"answer": "apply", "cards": refs}, 200)).Results
		if len(res) != len(cards) {
			t.Fatalf("results: %+v", res)
		}
		applied := map[int64]string{} // page → the description written
		for i, x := range res {
			switch {
			case cards[i].Conversation == changed.Conversation:
				if x.Outcome != "refused" || x.Code != "stale_card" || x.Conversation != changed.Conversation {
					t.Errorf("the changed card: %+v, want refused stale_card", x)
				}
			case x.Outcome != "answered":
				t.Errorf("card of page %d: %+v, want answered", cards[i].Page, x)
			default:
				applied[cards[i].Page] = cards[i].Fields[0].Proposed
			}
		}
		// TYPO3 holds each applied description, written by DataHandler as the editor.
		var now map[int64]string
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(200 * time.Millisecond) {
			now = fields()
			done := 0
			for p, d := range applied {
				if now[p] == d+"|" { // the SEO title, its next card, unanswered: unchanged
					done++
				}
			}
			if done == len(applied) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("TYPO3 holds %v, want the applied %v", now, applied)
			}
		}
		for _, p := range pages {
			if _, ok := applied[p]; !ok && now[p] != before[p] {
				t.Errorf("page %d without an applied answer changed in TYPO3: %q → %q", p, before[p], now[p])
			}
		}
		for p, d := range applied {
			got := r.PHP(t, fmt.Sprintf(`$log = \TYPO3\CMS\Core\Utility\GeneralUtility::makeInstance(\TYPO3\CMS\Backend\History\RecordHistory::class, 'pages:%[1]d')->getChangeLog();
				$h = []; foreach ($log as $e) { if ($e['tablename'] === 'pages' && (int)$e['recuid'] === %[1]d) { $h = $e; break; } } // newest first; the page's records come too
				echo json_encode(['user' => (int)$h['userid'], 'old' => $h['oldRecord']['description'] ?? null, 'new' => $h['newRecord']['description'] ?? null]);`, p))
			var h struct {
				User     int64
				Old, New string
			}
			if err := json.Unmarshal([]byte(got), &h); err != nil || h.User != b.editor || h.Old != "Short." || h.New != d {
				t.Errorf("TYPO3's history of pages:%d: %s, want the editor's change from %q to %q", p, got, "Short.", d)
			}
		}

		// The export lists exactly the applied changes.
		list2 := waymarktest.Decode[struct{ Changes []exported }](t, editor.Must("GET", "/api/changes?format=json&from="+start.UTC().Format(time.RFC3339), nil, 200)).Changes
		if len(list2) != len(applied) {
			t.Fatalf("export: %+v, want the %d applied changes", list2, len(applied))
		}
		for _, c := range list2 {
			d, ok := applied[c.UID]
			if !ok || c.Table != "pages" || c.Page != c.UID || c.Field != "description" || c.Old != "Short." || c.New != d ||
				c.AnsweredBy != "editor" || c.ReleasedBy != "" || c.Run == "" || c.Configuration != 10 || c.SkillName != "seo-optimieren" || c.SkillDigest == "" {
				t.Errorf("exported %+v, want the applied change of pages:%d to %q by the editor", c, c.UID, d)
			}
		}
		raw := editor.Must("GET", "/api/changes?format=csv&from="+start.UTC().Format(time.RFC3339), nil, 200).Body
		lines, err := csv.NewReader(strings.NewReader(string(raw))).ReadAll()
		if err != nil || len(lines) != len(applied)+1 {
			t.Errorf("CSV export: %d lines (%v), want a header and %d changes:\n%s", len(lines), err, len(applied), raw)
		}
	})
}
