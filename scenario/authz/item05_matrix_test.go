package authz_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	wt "waymark/internal/waymarktest"
)

// The callers of the matrix, in the order of a row's want groups.
var callers = []struct{ name, token string }{
	{"anonymous", ""},
	{"wrong token", "wrong-token-00000"},
	{"editor A", erika},
	{"editor B", bernd},
	{"service account", robot},
	{"approver", paula},
	{"admin", admin},
}

// The objects a route with path values is called on.
const (
	own     = iota // the caller's own object (for shared objects: one the caller may use)
	foreign        // another user's object (for shared objects: one outside the caller's reach)
	unknown        // an id nothing has
)

var objectNames = []string{"own", "foreign", "unknown"}

// kind names what a route's path values point at.
type kind string

const (
	noObject   kind = ""
	runObj     kind = "run"
	convObj    kind = "conversation"
	configObj  kind = "configuration"
	skillObj   kind = "skill"
	sourceObj  kind = "source"
	pageObj    kind = "page"
	attachment kind = "attachment"
	userObj    kind = "user"
	groupObj   kind = "group"
	campObj    kind = "campaign"
)

// matrixRow is the expected answer of one route to every caller. want holds
// one group per caller (in the order of callers), separated by spaces: a
// status for every object, or "own/foreign/unknown" statuses; "-" skips.
type matrixRow struct {
	kind kind
	want string
	// body returns the request body for the path values of the object (nil: none).
	body func(ids map[string]string) any
	// fresh: the route changes its object, so every caller gets new objects.
	fresh bool
	// prepare, when set, runs before the requests of each caller (index into callers).
	prepare func(e *wt.Env, caller int)
}

// adminReply scripts the model's reply to the run the administrator starts.
func adminReply(e *wt.Env, caller int) {
	if callers[caller].token == admin {
		done(e)
	}
}

// matrix has one row per route of internal/httpapi/routes.go, keyed by the
// pattern exactly as registered. A new route fails
// TestAuthorizationMatrixCoversEveryRoute until it has a row here.
//
//	anonymous wrong-token editor-A editor-B service-account approver admin
var matrix = map[string]matrixRow{
	"GET /healthz":    {want: "200 200 200 200 200 200 200"},
	"GET /readyz":     {want: "200 200 200 200 200 200 200"},
	"GET /metrics":    {want: "200 200 200 200 200 200 200"},
	"POST /api/login": {want: "400 400 400 400 400 400 400", body: raw("{")},
	// Without the TYPO3 bridge no ticket is taken, whoever sends it.
	"POST /api/login/typo3": {want: "404 404 404 404 404 404 404", body: fixed(map[string]any{"ticket": "x.y"})},
	"POST /api/logout":      {want: "401 401 204 204 204 204 204"},
	"GET /api/me":           {want: "401 401 200 200 200 200 200"},
	"PUT /api/me/language":  {want: "401 401 200 200 200 200 200", body: fixed(map[string]any{"backendLanguage": "de"})},
	"POST /api/runs": {want: "401 401 404 404 404 404 201", prepare: adminReply,
		body: fixed(map[string]any{"configuration": 4, "messages": []map[string]string{{"role": "user", "content": "x"}}})},
	"GET /api/runs/{uuid}":        {kind: runObj, want: "401 401 200/404/404 200/404/404 200/404/404 200/200/404 200/200/404"},
	"GET /api/runs/{uuid}/events": {kind: runObj, want: "401 401 200/404/404 200/404/404 200/404/404 200/404/404 200/200/404"},
	"POST /api/runs/{uuid}/approval": {kind: runObj, want: "401 401 403/404/404 409/404/404 403/404/404 409/409/404 409/409/404",
		body: fixed(map[string]any{"approve": true, "turnDigest": "v1:00"})},
	"POST /api/runs/{uuid}/input": {kind: runObj, want: "401 401 409/404/404 409/404/404 403/404/404 409/404/404 409/409/404",
		body: fixed(map[string]any{"turnDigest": "v1:00", "values": map[string]any{}})},
	"POST /api/runs/{uuid}/cancel":                 {kind: runObj, fresh: true, want: "401 401 200/404/404 200/404/404 200/404/404 200/404/404 200/200/404"},
	"POST /api/runs/{uuid}/cancel-if-waiting":      {kind: runObj, fresh: true, want: "401 401 200/404/404 200/404/404 200/404/404 200/404/404 200/200/404"},
	"POST /api/runs/{uuid}/end-process":            {kind: runObj, want: "401 401 200/404/404 200/404/404 404/404/404 200/404/404 200/200/404"},
	"GET /api/inbox":                               {want: "401 401 200 200 200 200 200"},
	"GET /api/configurations/{uid}/process-skills": {kind: configObj, want: "401 401 200/404/404 200/404/404 200/404/404 200/404/404 200/200/404"},

	"GET /api/skills":       {want: "401 401 403 403 403 403 200"},
	"POST /api/skills":      {want: "401 401 403 403 403 403 201", body: fixed(map[string]any{"source": 2, "identifier": "matrix", "markdown": skillMD})},
	"GET /api/skills/{uid}": {kind: skillObj, want: "401 401 403 403 403 403 200/200/404"},
	"PUT /api/skills/{uid}": {kind: skillObj, want: "401 401 403 403 403 403 200/200/404",
		body: fixed(map[string]any{"markdown": skillMD})},
	"POST /api/skills/{uid}/approve":       {kind: skillObj, want: "401 401 403 403 403 403 200/200/404", body: currentDigest},
	"POST /api/skills/{uid}/revoke":        {kind: skillObj, want: "401 401 403 403 403 403 200/200/404", body: currentDigest},
	"POST /api/skills/{uid}/enable":        {kind: skillObj, want: "401 401 403 403 403 403 200/200/404"},
	"POST /api/skills/{uid}/disable":       {kind: skillObj, want: "401 401 403 403 403 403 200/200/404"},
	"GET /api/configurations/{cfg}/skills": {kind: configObj, want: "401 401 200/404/404 200/404/404 200/404/404 200/404/404 200/200/404"},
	"POST /api/configurations/{cfg}/skills": {kind: configObj, want: "401 401 403 403 403 403 200/200/404",
		body: fixed(map[string]any{"skill": 12, "loadMode": "always"})},
	"DELETE /api/configurations/{cfg}/skills/{skill}": {kind: attachment, want: "401 401 403 403 403 403 204/204/404"},
	"GET /api/skill-sources":                          {want: "401 401 403 403 403 403 200"},
	"POST /api/skill-sources":                         {want: "401 401 403 403 403 403 200", body: fixed(map[string]any{"uid": 3, "type": "backend", "title": "Other", "trustLevel": "first_party"})},
	"POST /api/skill-sources/{uid}/sync":              {kind: sourceObj, want: "401 401 403 403 403 403 400/400/404"},

	"POST /api/conversations":     {want: "401 401 201 404 201 201 201", body: fixed(map[string]any{"page": 1, "language": 0})},
	"GET /api/conversations":      {want: "401 401 200 200 200 200 200"},
	"GET /api/conversations/{id}": {kind: convObj, want: "401 401 200/404/404 200/404/404 200/404/404 200/404/404 200/404/404"},
	"POST /api/conversations/{id}/messages": {kind: convObj, fresh: true, want: "401 401 202/404/404 202/404/404 202/404/404 202/404/404 202/404/404",
		body: fixed(map[string]any{"content": "Hello"})},
	"POST /api/conversations/{id}/answer": {kind: convObj, want: "401 401 409/404/404 409/404/404 409/404/404 409/404/404 409/404/404",
		body: fixed(map[string]any{"turnDigest": "v1:00", "answer": "apply"})},
	"POST /api/conversations/{id}/end-tour": {kind: convObj, want: "401 401 200/404/404 200/404/404 200/404/404 200/404/404 200/404/404"},
	// Nothing runs in the matrix's conversations: the owner's Stop is 409 not_running.
	"POST /api/conversations/{id}/stop": {kind: convObj, want: "401 401 409/404/404 409/404/404 409/404/404 409/404/404 409/404/404"},
	"POST /api/conversations/{id}/skill": {kind: convObj, want: "401 401 200/404/404 200/404/404 200/404/404 200/404/404 200/404/404",
		body: fixed(map[string]any{"skill": 0})},
	"GET /api/conversations/{id}/stream": {kind: convObj, want: "401 401 200/404/404 200/404/404 200/404/404 200/404/404 200/404/404"},
	"GET /api/pages/{uid}/open-points":   {kind: pageObj, want: "401 401 200/404/404 200/404/404 200/404/404 200/404/404 200/200/404"},
	"GET /api/open-points":               {want: "401 401 200 200 200 200 200"},

	// Campaigns: a campaign is its owner's and administrators'; others get
	// 404 like unknown. The objects are paused campaigns without pages (no
	// tour starts, no model reply is taken); a start the matrix sends asks
	// for a depth out of range, so nothing is worked either.
	"POST /api/campaigns":             {want: "401 401 400 400 400 400 400", body: fixed(map[string]any{"process": "tone", "rootPage": 1, "depth": 11})},
	"POST /api/campaigns/estimate":    {want: "401 401 400 400 400 400 400", body: fixed(map[string]any{"process": "tone", "rootPage": 1, "depth": 11})},
	"GET /api/campaigns":              {want: "401 401 200 200 200 200 200"},
	"GET /api/campaigns/{id}":         {kind: campObj, want: "401 401 200/404/404 200/404/404 200/404/404 200/404/404 200/200/404"},
	"POST /api/campaigns/{id}/pause":  {kind: campObj, want: "401 401 409/404/404 409/404/404 409/404/404 409/404/404 409/409/404"},
	"POST /api/campaigns/{id}/resume": {kind: campObj, fresh: true, want: "401 401 200/404/404 200/404/404 200/404/404 200/404/404 200/200/404"},
	"POST /api/campaigns/{id}/cancel": {kind: campObj, fresh: true, want: "401 401 200/404/404 200/404/404 200/404/404 200/404/404 200/200/404"},
	"GET /api/campaigns/{id}/cards":   {kind: campObj, want: "401 401 200/404/404 200/404/404 200/404/404 200/404/404 200/200/404"},
	"POST /api/campaigns/{id}/answers": {kind: campObj, want: "401 401 200/404/404 200/404/404 200/404/404 200/404/404 200/200/404",
		body: fixed(map[string]any{"answer": "skip", "cards": []map[string]any{{"conversation": 999999, "turnDigest": "v1:00"}}})},

	// Administration: 403 to every non-admin before any lookup.
	"GET /api/admin/configurations": {want: "401 401 403 403 403 403 200"},
	"POST /api/admin/configurations": {want: "401 401 403 403 403 403 201",
		body: fixed(map[string]any{"identifier": "matrix", "providerType": "demo", "contextWindow": 8000})},
	"GET /api/admin/configurations/{uid}": {kind: configObj, want: "401 401 403 403 403 403 200/200/404"},
	"PUT /api/admin/configurations/{uid}": {kind: configObj, want: "401 401 403 403 403 403 200/200/404",
		body: func(ids map[string]string) any { return closedProvider(ids["uid"]) }},
	"GET /api/admin/configurations/{uid}/process-skills": {kind: configObj, want: "401 401 403 403 403 403 400/400/404"},
	"POST /api/admin/configurations/{uid}/test": {kind: configObj, want: "401 401 403 403 403 403 200/200/404",
		prepare: pointAtClosedPort},
	"GET /api/admin/users":       {want: "401 401 403 403 403 403 200"},
	"POST /api/admin/users":      {want: "401 401 403 403 403 403 201", body: fixed(map[string]any{"username": "matrix"})},
	"GET /api/admin/users/{uid}": {kind: userObj, want: "401 401 403 403 403 403 200/200/404"},
	"PUT /api/admin/users/{uid}": {kind: userObj, want: "401 401 403 403 403 403 200/200/404",
		body: func(ids map[string]string) any {
			return map[string]any{"username": ids["name"], "groups": json.RawMessage(ids["groups"])}
		}},
	"PUT /api/admin/users/{uid}/grants": {kind: userObj, want: "401 401 403 403 403 403 200/200/404",
		body: fixed(map[string]any{"grants": []string{"approve"}})},
	"POST /api/admin/users/{uid}/tokens": {kind: userObj, want: "401 401 403 403 403 403 201/201/404", body: fixed(map[string]any{"label": "matrix"})},
	"GET /api/admin/users/{uid}/tokens":  {kind: userObj, want: "401 401 403 403 403 403 200/200/404"},
	// No fixture token is deleted (its user calls later rows): the id names none.
	"DELETE /api/admin/users/{uid}/tokens/{id}": {kind: userObj, want: "401 401 403 403 403 403 404/404/404"},
	"GET /api/admin/groups":                     {want: "401 401 403 403 403 403 200"},
	"POST /api/admin/groups":                    {want: "401 401 403 403 403 403 201", body: fixed(map[string]any{"title": "Matrix"})},
	"GET /api/admin/groups/{uid}":               {kind: groupObj, want: "401 401 403 403 403 403 200/200/404"},
	"PUT /api/admin/groups/{uid}": {kind: groupObj, want: "401 401 403 403 403 403 200/200/404",
		body: fixed(map[string]any{"title": "Matrix", "tablesSelect": []string{"pages", "tt_content"}, "tablesModify": []string{"pages", "tt_content"}})},
	"PUT /api/admin/groups/{uid}/grants": {kind: groupObj, want: "401 401 403 403 403 403 200/200/404",
		body: fixed(map[string]any{"grants": []string{"approve"}})},
	"GET /api/admin/runs": {want: "401 401 403 403 403 403 200"},
	"GET /api/costs":      {want: "401 401 403 403 403 403 200"},
	"GET /api/changes":    {want: "401 401 200 200 200 200 200"},

	// What the editor's screens read.
	"GET /api/labels":              {want: "401 401 200 200 200 200 200"},
	"GET /api/pages":               {want: "401 401 200 200 200 200 200"},
	"GET /api/pages/{uid}/preview": {kind: pageObj, want: "401 401 200/404/404 200/404/404 200/404/404 200/404/404 200/200/404"},
	"GET /api/configurations":      {want: "401 401 200 200 200 200 200"},
	"GET /api/inbox/stream":        {want: "401 401 200 200 200 200 200"},
}

// closedProvider is a configuration body whose provider listens nowhere, so
// that a connection test answers without the scripted server.
func closedProvider(uid string) map[string]any {
	return map[string]any{"identifier": "matrix-" + uid, "name": "Matrix", "active": true, "providerType": "openai",
		"baseUrl": "http://127.0.0.1:9/v1", "model": "m", "contextWindow": 32000}
}

// pointAtClosedPort, before the administrator's connection tests, points
// configurations 1 and 4 at a port nothing listens on.
func pointAtClosedPort(e *wt.Env, caller int) {
	if callers[caller].token == admin {
		for _, uid := range []string{"1", "4"} {
			e.As(admin).Must("PUT", "/api/admin/configurations/"+uid, closedProvider(uid), http.StatusOK)
		}
	}
}

const skillMD = "---\nname: Matrix\ndescription: A skill of the matrix.\n---\nWrite plainly."

func fixed(v any) func(map[string]string) any { return func(map[string]string) any { return v } }

func raw(s string) func(map[string]string) any { return fixed(s) }

// currentDigest is filled in by the fixture: the digest of each skill now.
var currentDigest = func(ids map[string]string) any { return map[string]any{"digest": ids["digest"]} }

// wantOf parses row.want for caller c and object o.
func wantOf(t *testing.T, route string, row matrixRow, c, o int) (int, bool) {
	t.Helper()
	groups := strings.Fields(row.want)
	if len(groups) != len(callers) {
		t.Fatalf("matrix row %q: %d want groups, want one per caller (%d)", route, len(groups), len(callers))
	}
	g := strings.Split(groups[c], "/")
	if len(g) == 3 {
		g = g[o : o+1]
	}
	if g[0] == "-" {
		return 0, false
	}
	n, err := strconv.Atoi(g[0])
	if err != nil || len(g) != 1 {
		t.Fatalf("matrix row %q: want group %q of %s is not a status or own/foreign/unknown", route, groups[c], callers[c].name)
	}
	return n, true
}

var wildcard = regexp.MustCompile(`\{([a-z]+)\}`)

// fixtureObjects makes the objects of the matrix through the API.
type fixtureObjects struct {
	t   *testing.T
	e   *wt.Env
	ids map[kind]map[string][3]map[string]string // kind → caller token → own/foreign/unknown path values
}

func ownerPage(token string) (page, lang int) {
	if token == bernd {
		return 50, 1
	}
	return 1, 0
}

func (f *fixtureObjects) newRun(token string) string {
	t := f.t
	t.Helper()
	cfg := 1
	if token == erika {
		cfg = 2 // four-eyes, page 1: in the approver's scope
	}
	page, _ := ownerPage(token)
	if token == bernd {
		page = 51 // his page in his language: a write he may not perform would be no card
	}
	return waitingRun(t, f.e, f.e.As(token), cfg, strconv.Itoa(page)).UUID
}

func (f *fixtureObjects) newConversation(token string) string {
	t := f.t
	t.Helper()
	page, lang := ownerPage(token)
	c := wt.Decode[wt.Conversation](t, f.e.As(token).Must("POST", "/api/conversations", map[string]any{"page": page, "language": lang}, http.StatusCreated))
	return strconv.FormatInt(c.ID, 10)
}

// newCampaign makes a paused campaign of token's user without pages.
func (f *fixtureObjects) newCampaign(token string) string {
	uid := map[string]int64{admin: 1, erika: 2, paula: 3, bernd: 4, robot: 5}[token]
	var id int64
	if err := f.e.DB.QueryRow(context.Background(), `INSERT INTO campaigns (owner_uid, skill_uid, configuration_uid, root_page, languages,
		concurrency, state, created_at, updated_at) VALUES (?, 12, 1, 1, '[0]', 1, 'paused', 1, 1) RETURNING id`, uid).Scan(&id); err != nil {
		f.t.Fatal(err)
	}
	return strconv.FormatInt(id, 10)
}

// objects returns the path values of caller token's own, foreign and
// unknown objects of kind k; fresh makes new ones.
func (f *fixtureObjects) objects(k kind, token string, fresh bool) [3]map[string]string {
	if token == "" || token == callers[1].token {
		token = bernd // anonymous and the wrong token are refused before any object counts
	}
	other := erika
	if token == erika {
		other = bernd
	}
	one := func(name, v string) map[string]string { return map[string]string{name: v} }
	switch k {
	case runObj, convObj:
		if !fresh {
			if ids, ok := f.ids[k][token]; ok {
				return ids
			}
		}
		newObj := f.newRun
		name, unknownID := "uuid", unknownRun
		if k == convObj {
			newObj, name, unknownID = f.newConversation, "id", "999999"
			if fresh {
				done(f.e) // the model's reply to a turn the route may start
			}
		}
		ids := [3]map[string]string{one(name, newObj(token)), one(name, newObj(other)), one(name, unknownID)}
		if !fresh {
			if f.ids[k] == nil {
				f.ids[k] = map[string][3]map[string]string{}
			}
			f.ids[k][token] = ids
		}
		return ids
	case campObj:
		if !fresh {
			if ids, ok := f.ids[k][token]; ok {
				return ids
			}
		}
		ids := [3]map[string]string{one("id", f.newCampaign(token)), one("id", f.newCampaign(other)), one("id", "999999")}
		if !fresh {
			if f.ids[k] == nil {
				f.ids[k] = map[string][3]map[string]string{}
			}
			f.ids[k][token] = ids
		}
		return ids
	case configObj:
		return [3]map[string]string{{"uid": "1", "cfg": "1"}, {"uid": "4", "cfg": "4"}, {"uid": "999", "cfg": "999"}}
	case skillObj:
		return [3]map[string]string{f.skill(12), f.skill(13), {"uid": "999", "digest": f.skill(12)["digest"]}}
	case sourceObj:
		return [3]map[string]string{one("uid", "2"), one("uid", "3"), one("uid", "999")}
	case pageObj: // page 1 is in the mounts of all but editor B, page 50 in editor B's
		p, q := "1", "50"
		if token == bernd {
			p, q = q, p
		}
		return [3]map[string]string{one("uid", p), one("uid", q), one("uid", "999")}
	case userObj: // erika and bernd, with their names and groups kept
		return [3]map[string]string{{"uid": "2", "name": "erika", "groups": "[1, 4]", "id": "999999"},
			{"uid": "4", "name": "bernd", "groups": "[2]", "id": "999999"}, {"uid": "999", "name": "ghost", "groups": "[]", "id": "999999"}}
	case groupObj:
		return [3]map[string]string{one("uid", "1"), one("uid", "2"), one("uid", "999")}
	case attachment:
		return [3]map[string]string{{"cfg": "1", "skill": "12"}, {"cfg": "2", "skill": "13"}, {"cfg": "1", "skill": "999"}}
	}
	return [3]map[string]string{{}, {}, {}}
}

// skill reads a skill's uid and current digest as the administrator sees it.
func (f *fixtureObjects) skill(uid int) map[string]string {
	k := f.e.As(admin).Must("GET", "/api/skills/"+strconv.Itoa(uid), nil, http.StatusOK).Map(f.t)
	return map[string]string{"uid": strconv.Itoa(uid), "digest": k["digest"].(string)}
}

// send sends one request of the matrix and returns its status and body; an
// event stream that opened is closed at once (its status is what counts).
func send(t *testing.T, e *wt.Env, token, method, path string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(data)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, e.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp.StatusCode, nil
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, data
}

// A route registered in routes.go without a row in the matrix fails here,
// naming the route; so does a row whose route is gone.
func TestAuthorizationMatrixCoversEveryRoute(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := newEnv(t, db)
		registered := map[string]bool{}
		for _, p := range e.App.Server.Routes() {
			registered[p] = true
			if _, ok := matrix[p]; !ok {
				t.Errorf("route %q has no row in the authorization matrix (scenario/authz/item05_matrix_test.go): add one", p)
			}
		}
		for p := range matrix {
			if !registered[p] {
				t.Errorf("the authorization matrix has a row for %q, which routes.go does not register", p)
			}
		}
	})
}

// Every route answers every kind of caller, on their own object, another
// user's and an unknown one, with the status of the matrix; where a foreign
// object is 404, its body is byte-identical to the unknown one's.
func TestAuthorizationMatrix(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		e := wt.New(t, db, site, &wt.Options{MaxOpenRuns: 10000})
		f := &fixtureObjects{t: t, e: e, ids: map[kind]map[string][3]map[string]string{}}
		for _, pattern := range e.App.Server.Routes() {
			row, ok := matrix[pattern]
			if !ok {
				continue // TestAuthorizationMatrixCoversEveryRoute names it
			}
			method, path, _ := strings.Cut(pattern, " ")
			for c, caller := range callers {
				if row.prepare != nil {
					row.prepare(e, c)
				}
				objs := f.objects(row.kind, caller.token, row.fresh && c >= 2)
				n := 3
				if row.kind == noObject {
					n = 1
				}
				var got [3]int
				var bodies [3][]byte
				for o := range n {
					want, check := wantOf(t, pattern, row, c, o)
					if !check {
						continue
					}
					p := wildcard.ReplaceAllStringFunc(path, func(w string) string { return objs[o][w[1:len(w)-1]] })
					var body any
					if row.body != nil {
						body = row.body(objs[o])
					}
					got[o], bodies[o] = send(t, e, caller.token, method, p, body)
					if got[o] != want {
						obj := ""
						if n == 3 {
							obj = " on the " + objectNames[o] + " object"
						}
						t.Errorf("%s as %s%s (%s) = %d %s, want %d", pattern, caller.name, obj, p, got[o], bodies[o], want)
					}
				}
				if n == 3 && got[foreign] == http.StatusNotFound && !bytes.Equal(bodies[foreign], bodies[unknown]) {
					t.Errorf("%s as %s: the foreign object's 404 %s differs from the unknown one's %s", pattern, caller.name, bodies[foreign], bodies[unknown])
				}
			}
		}
		e.App.Chat.Wait() // no background turn of the messages row outlives the test
	})
}
