package serp

import (
	"strings"
	"testing"
)

func TestWidthFollowsTheArialTable(t *testing.T) {
	t.Parallel()
	cases := []struct {
		s    string
		px   float64
		want float64
	}{
		{"", 20, 0},
		{"a", 1000, 556},
		{"Wil", 20, (944 + 222 + 222) * 20.0 / 1000},
		{"Ä", 1000, 667}, // an umlaut is as wide as its base letter
		{"ü", 1000, 556},
		{"é", 1000, 556},
		{"ß", 1000, 611},
		{"…", 1000, 1000},
		{"漢", 1000, 1000},
	}
	for _, c := range cases {
		if got := Width(c.s, c.px); got != c.want {
			t.Errorf("Width(%q, %v) = %v, want %v", c.s, c.px, got, c.want)
		}
	}
}

func TestCutEndsAtAWordWithAnEllipsisOnlyWhenTooWide(t *testing.T) {
	t.Parallel()
	// "aaaa" at 1000 px per em: 556 each; "…" 1000.
	cases := []struct {
		name   string
		s      string
		max    float64
		want   string
		wantOK bool
	}{
		{"empty", "", 600, "", false},
		{"fits exactly", "aa", 1112, "aa", false},
		{"one pixel too wide cuts", "aa aa", 2501, "aa…", true},
		{"cut at the space before the word", "aa bbbb", 3000, "aa…", true},
		{"punctuation before the ellipsis goes", "aa, bbbbbb", 4500, "aa…", true},
		{"a word longer than the width is cut inside", "aaaaaaaaaa", 3300, "aaaa…", true},
	}
	for _, c := range cases {
		got, cut := Cut(c.s, c.max, 1000)
		if got != c.want || cut != c.wantOK {
			t.Errorf("%s: Cut(%q, %v) = %q, %v; want %q, %v", c.name, c.s, c.max, got, cut, c.want, c.wantOK)
		}
		if cut && Width(got, 1000) > c.max {
			t.Errorf("%s: cut %q is %v wide, more than %v", c.name, got, Width(got, 1000), c.max)
		}
	}
}

func TestBuildCutsTitleAt600AndDescriptionAt920DesktopAnd680Phone(t *testing.T) {
	t.Parallel()
	title := "Über uns – Nordlicht Digital, die Agentur für Websites, Suchmaschinenoptimierung und Inhalte aus Kiel"
	desc := strings.Repeat("Wir gestalten Websites, die gefunden werden, und pflegen sie über Jahre. ", 3)
	p := Build(Input{Title: title, Description: desc, Base: "https://www.nordlicht.example/de/", Slug: "/ueber-uns", Language: "de"})
	if !p.Desktop.TitleTruncated || !strings.HasSuffix(p.Desktop.Title, "…") || Width(p.Desktop.Title, TitleFontPx) > TitleMaxPx {
		t.Errorf("desktop title %q (%v px), want cut with … within %d px", p.Desktop.Title, Width(p.Desktop.Title, TitleFontPx), TitleMaxPx)
	}
	if p.Phone.Title != p.Desktop.Title {
		t.Errorf("phone title %q, want the desktop's %q", p.Phone.Title, p.Desktop.Title)
	}
	dw, pw := Width(p.Desktop.Description, DescriptionFontPx), Width(p.Phone.Description, DescriptionFontPx)
	if !p.Desktop.DescriptionTruncated || dw > DescriptionDesktopMax || dw < DescriptionDesktopMax-150 {
		t.Errorf("desktop description %q is %v px, want cut just within %d", p.Desktop.Description, dw, DescriptionDesktopMax)
	}
	if !p.Phone.DescriptionTruncated || pw > DescriptionPhoneMax || len(p.Phone.Description) >= len(p.Desktop.Description) {
		t.Errorf("phone description %q is %v px, want cut within %d and shorter than the desktop's", p.Phone.Description, pw, DescriptionPhoneMax)
	}
	if p.Title != title || p.Language != "de" {
		t.Errorf("title %q language %q, want the full title and de", p.Title, p.Language)
	}
	if p.URL != "https://www.nordlicht.example/de/ueber-uns" || p.Breadcrumb != "nordlicht.example › de › ueber-uns" {
		t.Errorf("address %q, %q", p.URL, p.Breadcrumb)
	}
}

func TestBuildLeavesShortAndEmptyValuesUncut(t *testing.T) {
	t.Parallel()
	p := Build(Input{Title: "Kontakt", Description: ""})
	if p.Desktop.Title != "Kontakt" || p.Desktop.TitleTruncated || p.Desktop.Description != "" || p.Desktop.DescriptionTruncated {
		t.Errorf("desktop %+v, want the title as is and no description", p.Desktop)
	}
	if p.URL != "" || p.Breadcrumb != "" {
		t.Errorf("address %q %q without base and slug, want none", p.URL, p.Breadcrumb)
	}
	if q := Build(Input{Title: "  a \n\t b  "}); q.Title != "a b" {
		t.Errorf("whitespace title = %q, want %q", q.Title, "a b")
	}
}

func TestAddressJoinsBaseAndSlug(t *testing.T) {
	t.Parallel()
	cases := []struct{ base, slug, url, crumb string }{
		{"https://example.org/", "/", "https://example.org/", "example.org"},
		{"https://www.example.org", "about/team", "https://www.example.org/about/team", "example.org › about › team"},
		{"", "/ueber-uns", "/ueber-uns", "ueber-uns"},
		{"https://example.org/", "/%C3%BCber", "https://example.org/%C3%BCber", "example.org › über"},
	}
	for _, c := range cases {
		u, b := Address(c.base, c.slug)
		if u != c.url || b != c.crumb {
			t.Errorf("Address(%q, %q) = %q, %q; want %q, %q", c.base, c.slug, u, b, c.url, c.crumb)
		}
	}
}
