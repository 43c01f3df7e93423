package web_test

import (
	"context"
	"net/http"
	"net/url"
	"testing"

	"waymark/internal/access"
	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

func storedLanguage(t *testing.T, e *wt.Env, uid int64) string {
	t.Helper()
	u, err := e.App.Directory.LoadUser(context.Background(), e.DB, uid)
	if err != nil {
		t.Fatal(err)
	}
	return u.BackendLanguage
}

// An editor switches her own UI language: it is stored on her user (the
// backend language the chat service reads for the assistant), the next page
// is in it, and the API reports it.
func TestEditorSwitchesHerLanguageAndTheNextPageUsesIt(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		erika := login(t, e, "erika", "erika-pass-1234")
		contains(t, "settings in German", erika.get("/settings"), "<h1>Deine Einstellungen</h1>",
			`<option value="de" lang="de" selected>Deutsch</option>`, `>Einstellungen</a>`)
		a := erika.post("/settings", url.Values{"language": {"en"}})
		if to := a.Header.Get("HX-Redirect"); to != "/settings?saved=1" {
			t.Fatalf("save = %d, HX-Redirect %q: %s", a.Status, to, a.Body)
		}
		if got := storedLanguage(t, e, 2); got != "en" {
			t.Fatalf("stored language = %q, want en", got)
		}
		contains(t, "settings after saving", erika.get("/settings?saved=1"), `<html lang="en">`, "<h1>Your settings</h1>",
			"Saved. The interface and the assistant now use English.", `<option value="en" lang="en" selected>English</option>`)
		contains(t, "chat after saving", erika.get("/chat"), `<html lang="en">`, "Signed in as erika")
		if me := erika.get("/api/me"); me.Status != http.StatusOK {
			t.Fatalf("GET /api/me = %d", me.Status)
		} else {
			contains(t, "API", me, `"backendLanguage":"en"`)
		}
		// And back.
		erika.post("/settings", url.Values{"language": {"de"}})
		contains(t, "settings back in German", erika.get("/settings"), `<html lang="de">`, "<h1>Deine Einstellungen</h1>")
	})
}

// A language that is not offered is refused at the field and nothing is stored.
func TestALanguageThatIsNotOfferedIsRefusedAndNothingChanges(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		erika := login(t, e, "erika", "erika-pass-1234")
		for _, bad := range []string{"fr", "", "EN", "de-DE", "en "} {
			a := erika.post("/settings", url.Values{"language": {bad}})
			if a.Header.Get("HX-Redirect") != "" {
				t.Fatalf("language %q accepted: redirect %q", bad, a.Header.Get("HX-Redirect"))
			}
			contains(t, "refusal of "+bad, a, `role="alert">Wähle eine der angebotenen Sprachen.</span>`, `aria-invalid="true"`)
			if got := storedLanguage(t, e, 2); got != "de" {
				t.Fatalf("after %q the stored language = %q, want de unchanged", bad, got)
			}
		}
		// Without the session's CSRF header nothing is stored either.
		erika.csrf = ""
		erika.post("/settings", url.Values{"language": {"en"}})
		if got := storedLanguage(t, e, 2); got != "de" {
			t.Fatalf("without CSRF the stored language = %q, want de", got)
		}
	})
}

// access.SetBackendLanguage refuses an unknown user and an unknown language.
func TestSetBackendLanguageRefusesUnknownUserAndLanguage(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		ctx := context.Background()
		if err := access.SetBackendLanguage(ctx, e.App.Directory, e.DB, 999, "en"); err != access.ErrNoUser {
			t.Errorf("unknown user: err = %v, want ErrNoUser", err)
		}
		var fe *access.FieldError
		if err := access.SetBackendLanguage(ctx, e.App.Directory, e.DB, 2, "xx"); err == nil || !asField(err, &fe) || fe.Field != "backendLanguage" {
			t.Errorf("unknown language: err = %v, want a backendLanguage field error", err)
		}
		// Setting the language it already has is no error (MariaDB counts no changed row).
		if err := access.SetBackendLanguage(ctx, e.App.Directory, e.DB, 2, "de"); err != nil {
			t.Errorf("same language: %v", err)
		}
	})
}

func asField(err error, fe **access.FieldError) bool {
	f, ok := err.(*access.FieldError)
	*fe = f
	return ok
}

// elsewhere is the built-in directory under another name: users that come
// from outside Waymark (as beside TYPO3), read the same way.
type elsewhere struct{ access.BuiltinDirectory }

// Beside TYPO3 the language is TYPO3's: the settings page says where to
// change it, and a posted language is refused and not stored.
func TestBesideTYPO3TheLanguageIsChangedInTYPO3AndNotStored(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		erika := login(t, e, "erika", "erika-pass-1234")
		// The same installation served by an application whose users come
		// from elsewhere: erika's session (in the shared database) opens it.
		erika.e = wt.New(t, db, "", &wt.Options{Directory: elsewhere{}})
		page := erika.get("/settings")
		contains(t, "settings beside TYPO3", page, "Deine Sprache kommt aus deinen Benutzereinstellungen im TYPO3-Backend")
		lacks(t, "settings beside TYPO3", page, `id="settings-language"`)
		a := erika.post("/settings", url.Values{"language": {"en"}})
		if a.Header.Get("HX-Redirect") != "" {
			t.Fatalf("saved beside TYPO3: redirect %q", a.Header.Get("HX-Redirect"))
		}
		contains(t, "refusal beside TYPO3", a, "im TYPO3-Backend: ändere sie dort.")
		if got := storedLanguage(t, e, 2); got != "de" {
			t.Fatalf("stored language = %q beside TYPO3, want de unchanged", got)
		}
	})
}
