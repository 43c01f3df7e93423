package web

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"net/http"
	"path"
	"strconv"
	"strings"
	"time"

	"waymark/internal/catalog"
	"waymark/internal/site"
)

//go:embed templates/*.html
var templateFiles embed.FS

// Every template file other than layout.html and the partials*.html files is
// a screen (it defines a "content" block); each is parsed with the layout and
// the shared partials (partials.html, partials_admin.html …), and rendered by
// its file name without ".html".

var funcs = template.FuncMap{
	"markdown": markdown,
	"asset":    assetURL,
	"stamp":    stamp,
	"pretty": func(v any) string {
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return ""
		}
		return string(b)
	},
	"add":     func(a, b int) int { return a + b },
	"slice3":  func(a, b, c string) []string { return []string{a, b, c} },
	"treeOf":  func(nodes []site.Node, selected int64) treeData { return treeData{Nodes: nodes, Selected: selected} },
	"cardOf":  func(p *page, c *cardView) cardData { return cardData{T: p.T, Card: c} },
	"serpOf":  func(t catalog.T, s *serpView) serpData { return serpData{T: t, Search: s} },
	"fieldOf": fieldOf,
	"highlighted": func(p *previewView, table string, uid, alt int64) bool {
		if p == nil || p.Highlight == "" {
			return false
		}
		return p.Highlight == fmt.Sprintf("%s:%d", table, uid) || (alt > 0 && p.Highlight == fmt.Sprintf("%s:%d", table, alt))
	},
}

type treeData struct {
	Nodes    []site.Node
	Selected int64
}

type cardData struct {
	T    catalog.T
	Card *cardView
}

// serpData is what the "serp" partial draws: a search-result preview in the reader's words.
type serpData struct {
	T      catalog.T
	Search *serpView
}

func parseTemplates() (map[string]*template.Template, error) {
	out := map[string]*template.Template{}
	files, err := fs.Glob(templateFiles, "templates/*.html")
	if err != nil {
		return nil, err
	}
	shared := []string{"templates/layout.html"}
	for _, f := range files {
		if strings.HasPrefix(f, "templates/partials") {
			shared = append(shared, f)
		}
	}
	for _, f := range files {
		s := strings.TrimSuffix(strings.TrimPrefix(f, "templates/"), ".html")
		if s == "layout" || strings.HasPrefix(s, "partials") {
			continue
		}
		t, err := template.New(s).Funcs(funcs).ParseFS(templateFiles, append(shared, "templates/"+s+".html")...)
		if err != nil {
			return nil, fmt.Errorf("web: templates of %s: %w", s, err)
		}
		out[s] = t
	}
	return out, nil
}

// page is what every template renders: the texts, the user and one screen's data.
type page struct {
	T        catalog.T
	Me       *user
	HX       string // hx-headers of the body
	Title    string
	Nav      string
	Approver bool
	Admin    bool // administration navigation
	Campaign bool // the campaigns screens are served
	OOB      bool // partials render as out-of-band swaps

	Login *loginData
	Chat  *chatData
	Dash  *dashData
	Inbox *inboxData
	// Data is the data of a screen that has no field of its own above
	// (the administration screens).
	Data any
}

func (u *UI) newPage(me *user, nav, titleKey string) *page {
	p := &page{Me: me, Nav: nav}
	if me != nil {
		p.T, p.HX = me.T, me.hxHeaders()
		p.Approver = me.A.HasGrant("approve")
		p.Admin = me.A.MayReviewSkills()
		p.Campaign = u.Campaigns != nil
	}
	p.Title = p.T.Get(titleKey)
	return p
}

// contentSecurityPolicy lets a page load only the server's own assets: no
// inline script, no other host, no framing.
const contentSecurityPolicy = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'"

// render writes template name of screen (the whole page is "layout").
func (u *UI) render(w http.ResponseWriter, r *http.Request, screen, name string, p *page, status int) {
	t, ok := u.pages[screen]
	if !ok {
		http.Error(w, "no such screen", http.StatusInternalServerError)
		return
	}
	var buf bytes.Buffer
	if err := t.ExecuteTemplate(&buf, name, p); err != nil {
		u.log.ErrorContext(r.Context(), "render", "screen", screen, "template", name, "err", err)
		http.Error(w, p.T.Get("error.internal"), http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", contentSecurityPolicy)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

//go:embed assets
var assetFiles embed.FS

var assetTypes = map[string]string{".js": "text/javascript; charset=utf-8", ".css": "text/css; charset=utf-8", ".png": "image/png", ".svg": "image/svg+xml"}

// asset is one embedded file as served: its bytes, gzip-compressed where
// that is smaller, and its version (a digest of its content).
type asset struct {
	data, gz []byte
	typ      string
	version  string
}

// assets are read and compressed once, at start.
var assets = func() map[string]*asset {
	out := map[string]*asset{}
	entries, _ := fs.ReadDir(assetFiles, "assets")
	for _, e := range entries {
		data, err := fs.ReadFile(assetFiles, "assets/"+e.Name())
		if err != nil {
			panic(err)
		}
		a := &asset{data: data, typ: "text/plain; charset=utf-8"}
		if t, ok := assetTypes[path.Ext(e.Name())]; ok {
			a.typ = t
		}
		sum := sha256.Sum256(data)
		a.version = hex.EncodeToString(sum[:6])
		if a.typ != "image/png" {
			var buf bytes.Buffer
			zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
			_, _ = zw.Write(data)
			_ = zw.Close()
			if buf.Len() < len(data) {
				a.gz = buf.Bytes()
			}
		}
		out[e.Name()] = a
	}
	return out
}()

// stamp is a time as <time datetime> to the second, in UTC; the page shows
// it in the reader's time zone (layout.js). It holds only digits the server
// formatted, never text a user wrote.
func stamp(t time.Time) template.HTML {
	u := t.UTC()
	return template.HTML(`<time datetime="` + u.Format(time.RFC3339) + `" data-seconds>` + u.Format("2006-01-02 15:04:05") + ` UTC</time>`)
}

// assetURL is the address of an embedded file with its version: a page
// names the assets it was rendered with, and those may be kept for a year.
func assetURL(name string) string {
	if a, ok := assets[name]; ok {
		return "/assets/" + name + "?v=" + a.version
	}
	return "/assets/" + name
}

// handleAsset serves an embedded file: gzip-compressed to a client that
// accepts it, with an ETag (a 304 when the client has it), kept for a year
// when asked for by its version (assetURL) and revalidated otherwise.
func (u *UI) handleAsset(w http.ResponseWriter, r *http.Request) {
	a, ok := assets[r.PathValue("file")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	h := w.Header()
	h.Set("Content-Type", a.typ)
	h.Set("Vary", "Accept-Encoding")
	etag := `"` + a.version + `"`
	h.Set("ETag", etag)
	if r.URL.Query().Get("v") == a.version {
		h.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		h.Set("Cache-Control", "public, no-cache")
	}
	if inm := r.Header.Get("If-None-Match"); inm != "" && (inm == etag || inm == "W/"+etag || strings.Contains(inm, etag)) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	body := a.data
	if a.gz != nil && acceptsGzip(r) {
		h.Set("Content-Encoding", "gzip")
		body = a.gz
	}
	h.Set("Content-Length", strconv.Itoa(len(body)))
	if r.Method == http.MethodHead {
		return
	}
	_, _ = w.Write(body)
}

// acceptsGzip reports whether the request's Accept-Encoding takes gzip
// (and does not refuse it with q=0).
func acceptsGzip(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept-Encoding"), ",") {
		name, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		if strings.EqualFold(strings.TrimSpace(name), "gzip") {
			q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
			return q != "q=0" && q != "q=0.0" && q != "q=0.00" && q != "q=0.000"
		}
	}
	return false
}
