package live_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"waymark/internal/access"
	"waymark/internal/content"
	"waymark/internal/llm"
	"waymark/internal/llm/llmtest"
	"waymark/internal/typo3"
	"waymark/internal/typo3/live"
	"waymark/internal/typo3/typo3test"
)

// TYPO3's tt_content.CType has TCA authMode explicitAllow: an editor whose
// groups do not allow an element's type may not change it. AuthorizeWrite
// refuses it — before a card (the tools' preview makes the write's check)
// and at the write — while administrators and allowed types pass.
func TestAContentElementOfATypeTheGroupsDoNotAllowIsNotWrittenByAnEditor(t *testing.T) {
	typo3test.Each(t, func(t *testing.T, t3 typo3test.DB) {
		s := &source{name: string(t3.Dialect), env: besideTYPO3(t, t3.DB, t3.Dialect, tourSite), t3: t3.DB, d: t3.Dialect}
		ctx := context.Background()
		checker := access.NewChecker(s.env.DB, s.env.App.Source, s.env.App.Directory)
		authorize := func(user int64, uid int64) error {
			t.Helper()
			rec, err := s.env.App.Source.Get(ctx, s.env.DB, "tt_content", uid)
			if err != nil {
				t.Fatal(err)
			}
			return checker.AuthorizeWrite(ctx, s.env.DB, user, rec, []string{"header"})
		}
		const admin, erika = 1, 2
		if err := authorize(erika, 110); err != nil {
			t.Fatalf("erika on text element 110 with the demo's types = %v, want allowed", err)
		}
		// Her group allows images only: the text element 110 is refused, the
		// image element 102 allowed, an administrator passes.
		s.t3exec(t, "UPDATE `be_groups` SET `explicit_allowdeny` = 'tt_content:CType:image' WHERE `uid` = 1")
		var denied *access.DeniedError
		if err := authorize(erika, 110); !errors.As(err, &denied) || !strings.Contains(denied.Reason, `CType "text"`) {
			t.Errorf("erika on text element 110 allowing images only = %v, want denied naming CType text", err)
		}
		if err := authorize(erika, 102); err != nil {
			t.Errorf("erika on image element 102 = %v, want allowed", err)
		}
		if err := authorize(admin, 110); err != nil {
			t.Errorf("admin on text element 110 = %v, want allowed", err)
		}
		// An empty list allows no type.
		s.t3exec(t, "UPDATE `be_groups` SET `explicit_allowdeny` = '' WHERE `uid` = 1")
		if err := authorize(erika, 102); !errors.As(err, &denied) {
			t.Errorf("erika on image element 102 with an empty list = %v, want denied", err)
		}

		// A card answered after the type was taken away is not written.
		s.t3exec(t, "UPDATE `be_groups` SET `explicit_allowdeny` = 'tt_content:CType:text,tt_content:CType:image' WHERE `uid` = 1")
		s.env.LLM.Add(
			llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c2", Name: "update_content", Arguments: `{"uid": 110, "fields": {"header": "About Nordlicht Digital"}}`}}},
			llmtest.Reply{Content: "Done."},
		)
		c := s.env.As("demo-token-erika")
		base := tourOfAbout(t, c)
		card := cardOf(t, c, base)
		s.t3exec(t, "UPDATE `be_groups` SET `explicit_allowdeny` = 'tt_content:CType:image' WHERE `uid` = 1")
		c.Must("POST", base+"/answer", map[string]any{"turnDigest": card["turnDigest"], "answer": "apply"}, 202)
		view := settle(t, c, base)
		if o := fmt.Sprint(view["outcomes"]); !strings.Contains(o, "outcome:not_applied") {
			t.Errorf("outcomes %s, want the card on the text element not_applied", o)
		}
		if got := s.t3value(t, "SELECT `header` FROM `tt_content` WHERE `uid` = 110"); got == "About Nordlicht Digital" {
			t.Error("the text element was written")
		}
		if n := s.t3value(t, "SELECT COUNT(*) FROM `sys_history`"); n != "0" {
			t.Errorf("sys_history rows = %s, want none", n)
		}
	})
}

// With EXT:workspaces installed, a user whose own and groups'
// workspace_perms lack bit 1 has no access to the live workspace: the direct
// writer, which writes live rows only, refuses her changes with a reason
// that says so, and writes nothing. The user's workspace is exposed for the
// UI.
func TestTheDirectWriterRefusesAUserWithoutLiveAccess(t *testing.T) {
	typo3test.Each(t, func(t *testing.T, t3 typo3test.DB) {
		s := &source{name: string(t3.Dialect), env: besideTYPO3(t, t3.DB, t3.Dialect, ""), t3: t3.DB, d: t3.Dialect}
		ctx := context.Background()
		uid := "`uid` INT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY"
		if t3.Dialect == typo3.Postgres {
			uid = "`uid` SERIAL PRIMARY KEY"
		}
		s.t3exec(t, "CREATE TABLE `sys_workspace` ("+uid+", `pid` INT NOT NULL DEFAULT 0, `deleted` SMALLINT NOT NULL DEFAULT 0, "+
			"`title` VARCHAR(30) NOT NULL DEFAULT '', `adminusers` TEXT, `members` TEXT)")
		s.t3exec(t, "INSERT INTO `sys_workspace` (`uid`, `pid`, `title`, `adminusers`, `members`) VALUES (1, 0, 'Review', '', 'be_groups_1')")
		s.t3exec(t, "UPDATE `be_users` SET `workspace_perms` = 0 WHERE `uid` = 2")

		sites := t.TempDir()
		if err := typo3.WriteDemoSites(sites); err != nil {
			t.Fatal(err)
		}
		inst, err := live.New(ctx, t3.DB, t3.Dialect, sites, nil)
		if err != nil {
			t.Fatal(err)
		}
		w3, err := typo3.NewWriter(t3.DB, t3.Dialect, nil)
		if err != nil {
			t.Fatal(err)
		}
		writer := &typo3.RecordWriter{TYPO3: w3, Local: content.NewWriter(s.env.DB, s.env.App.Source, access.NewChecker(s.env.DB, s.env.App.Source, s.env.App.Directory), nil), DB: s.env.DB}
		write := func() error {
			_, err := writer.Write(ctx, content.WriteRequest{Table: "pages", UID: 2, User: 2, Key: "test/live-access",
				Fields: map[string]string{"description": "Who we are."}})
			return err
		}
		var denied *access.DeniedError
		if err := write(); !errors.As(err, &denied) || denied.Reason != typo3.NoLiveAccess {
			t.Errorf("write by erika without live access = %v, want denied: %s", err, typo3.NoLiveAccess)
		}
		if got := s.t3value(t, "SELECT `description` FROM `pages` WHERE `uid` = 2"); got != "" {
			t.Errorf("pages:2 description = %q, want nothing written", got)
		}
		if n := s.t3value(t, "SELECT COUNT(*) FROM `sys_history`"); n != "0" {
			t.Errorf("sys_history rows = %s, want none", n)
		}
		if w, err := inst.Workspace(ctx, 2); err != nil || w != (typo3.Workspace{ID: 1, Title: "Review"}) {
			t.Errorf("Workspace(erika) = %+v, %v; want Review (1)", w, err)
		}
		// A group with bit 1 gives her live back: the write lands.
		s.t3exec(t, "UPDATE `be_groups` SET `workspace_perms` = 1 WHERE `uid` = 1")
		if err := write(); err != nil {
			t.Errorf("write by erika with live access = %v", err)
		}
		if got := s.t3value(t, "SELECT `description` FROM `pages` WHERE `uid` = 2"); got != "Who we are." {
			t.Errorf("pages:2 description = %q, want the write", got)
		}
		if w, err := inst.Workspace(ctx, 2); err != nil || w != (typo3.Workspace{}) {
			t.Errorf("Workspace(erika) with live access = %+v, %v; want live", w, err)
		}
	})
}

// A TYPO3 user with an active second factor is refused at Waymark's password
// login with the right password (401 mfa_required, telling her to open
// Waymark from TYPO3); a wrong password is answered as for anyone.
func TestATYPO3UserWithASecondFactorIsToldToOpenWaymarkFromTYPO3(t *testing.T) {
	typo3test.Each(t, func(t *testing.T, t3 typo3test.DB) {
		s := &source{name: string(t3.Dialect), env: besideTYPO3(t, t3.DB, t3.Dialect, ""), t3: t3.DB, d: t3.Dialect}
		s.t3exec(t, "UPDATE `be_users` SET `mfa` = ? WHERE `username` = 'erika'",
			[]byte(`{"totp":{"secret":"KRUGS4ZANFZSAYJAONSWG4TFOQ","active":true}}`))
		c := s.env.As("")
		r := c.Do("POST", "/api/login", map[string]string{"username": "erika", "password": "erika-demo-pass"})
		if r.Status != 401 || r.ErrorCode() != "mfa_required" || !strings.Contains(string(r.Body), "TYPO3 backend") {
			t.Errorf("login of erika with TOTP = %d %s, want 401 mfa_required", r.Status, r.Body)
		}
		r = c.Do("POST", "/api/login", map[string]string{"username": "erika", "password": "wrong"})
		if r.Status != 401 || r.ErrorCode() == "mfa_required" {
			t.Errorf("login of erika with TOTP and a wrong password = %d %s, want 401 as any wrong password", r.Status, r.Body)
		}
	})
}

// A proposal longer than the field's TCA max (pages.seo_title: 255) is not
// shown as a card and fails nothing: the model gets the limit back and
// proposes a shorter value, which is trimmed as the TCA's eval trim says
// before the card shows it and TYPO3 stores it. Before, the over-long value
// reached the card and its write failed the conversation with the
// database's error.
func TestAProposalOverTheTCAMaxGoesBackToTheModelAndTrimIsApplied(t *testing.T) {
	eachSource(t, func(t *testing.T, s *source) {
		s.importText(t, tourSite)
		long := strings.Repeat("Nordlicht ", 30) + "!" // 301 characters
		s.env.LLM.Add(
			llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c1", Name: "update_page_metadata",
				Arguments: fmt.Sprintf(`{"page": 2, "fields": {"seoTitle": %q}}`, long)}}},
			llmtest.Reply{ToolCalls: []llm.ToolCall{{ID: "c2", Name: "update_page_metadata",
				Arguments: `{"page": 2, "fields": {"seoTitle": "  About Nordlicht Digital \n"}}`}}},
			llmtest.Reply{Content: "Done."},
		)
		c := s.env.As("demo-token-erika")
		base := tourOfAbout(t, c)
		card := cardOf(t, c, base)
		if got := fmt.Sprint(card); !strings.Contains(got, "proposed:About Nordlicht Digital]") {
			t.Errorf("%s: card %s, want the trimmed proposal", s.name, got)
		}
		var refusal string
		for _, r := range s.env.LLM.Requests() {
			for _, m := range r.Messages {
				if m.Role == "tool" && strings.Contains(m.Content, "seoTitle") {
					refusal = m.Content
				}
			}
		}
		if !strings.Contains(refusal, "301 characters long; TYPO3 allows at most 255 (TCA max of pages.seo_title)") {
			t.Errorf("%s: the model was told %q, want the TCA max", s.name, refusal)
		}
		c.Must("POST", base+"/answer", map[string]any{"turnDigest": card["turnDigest"], "answer": "apply"}, 202)
		if view := settle(t, c, base); !strings.Contains(fmt.Sprint(view["outcomes"]), "outcome:applied") {
			t.Errorf("%s: outcomes %v, want applied", s.name, view["outcomes"])
		}
		rec, err := s.env.App.Source.Get(context.Background(), s.env.DB, "pages", 2)
		if err != nil || rec.Fields["seoTitle"] != "About Nordlicht Digital" {
			t.Errorf("%s: pages:2 seoTitle = %q, %v; want the trimmed value", s.name, rec.Fields["seoTitle"], err)
		}
	})
}
