package httpapi

import (
	"bytes"
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"waymark/internal/access"
	"waymark/internal/agent"
	"waymark/internal/campaign"
	"waymark/internal/fault"
	"waymark/internal/store"
)

// Fuzz targets for every JSON request body the handlers decode.
// Each checks what a client can rely on for any input: DecodeJSON never
// panics; a refusal is a 400 (or 413) fault with a stable code and a
// one-line message; an accepted body holds no text a database cannot store,
// and encoding what was decoded decodes to the same value. The seeds are in
// testdata/fuzz/<target>; plain go test runs them.

// fuzzBody runs the properties for bodies decoded into T.
func fuzzBody[T any](f *testing.F) {
	f.Fuzz(func(t *testing.T, body string) {
		var v T
		err := DecodeJSON(post(body), &v)
		if err != nil {
			f, msg, ok := fault.Of(err)
			if !ok {
				t.Fatalf("DecodeJSON(%q) = %v, want a fault", body, err)
			}
			if st := StatusOf(f.Kind()); st != http.StatusBadRequest && st != http.StatusRequestEntityTooLarge {
				t.Errorf("DecodeJSON(%q): status %d, want 400 or 413", body, st)
			}
			if !slices.Contains([]string{"bad_request", "invalid_text", "body_too_large"}, f.Code()) {
				t.Errorf("DecodeJSON(%q): code %q", body, f.Code())
			}
			if msg == "" || strings.ContainsAny(msg, "\n\r") {
				t.Errorf("DecodeJSON(%q): message %q, want one line", body, msg)
			}
			return
		}
		enc, err := json.Marshal(v)
		if err != nil {
			t.Fatalf("encode decoded %q: %v", body, err)
		}
		if err := checkJSONText(enc); err != nil {
			t.Errorf("DecodeJSON(%q) accepted text a database cannot store: %v", body, err)
		}
		var again T
		if err := DecodeJSON(post(string(enc)), &again); err != nil {
			t.Fatalf("decoding the encoding %s of accepted %q: %v", enc, body, err)
		}
		if enc2, _ := json.Marshal(again); !bytes.Equal(enc, enc2) {
			t.Errorf("round trip of %q: %s, then %s", body, enc, enc2)
		}
	})
}

func post(body string) *http.Request {
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	r.Header.Set("Content-Type", "application/json")
	return r
}

func FuzzLoginBody(f *testing.F)              { fuzzBody[loginRequest](f) }
func FuzzTicketLoginBody(f *testing.F)        { fuzzBody[ticketRequest](f) }
func FuzzRunBody(f *testing.F)                { fuzzBody[runRequest](f) }
func FuzzDecisionBody(f *testing.F)           { fuzzBody[agent.Decision](f) }
func FuzzInputBody(f *testing.F)              { fuzzBody[inputRequest](f) }
func FuzzConversationStartBody(f *testing.F)  { fuzzBody[conversationStartRequest](f) }
func FuzzMessageBody(f *testing.F)            { fuzzBody[messageRequest](f) }
func FuzzAnswerBody(f *testing.F)             { fuzzBody[answerRequest](f) }
func FuzzConversationSkillBody(f *testing.F)  { fuzzBody[conversationSkillRequest](f) }
func FuzzSkillCreateBody(f *testing.F)        { fuzzBody[skillCreateRequest](f) }
func FuzzSkillUpdateBody(f *testing.F)        { fuzzBody[skillUpdateRequest](f) }
func FuzzDigestBody(f *testing.F)             { fuzzBody[digestRequest](f) }
func FuzzAttachBody(f *testing.F)             { fuzzBody[attachRequest](f) }
func FuzzSourceBody(f *testing.F)             { fuzzBody[sourceRequest](f) }
func FuzzAdminConfigurationBody(f *testing.F) { fuzzBody[configurationBody](f) }
func FuzzAdminUserBody(f *testing.F)          { fuzzBody[userBody](f) }
func FuzzAdminGroupBody(f *testing.F)         { fuzzBody[access.Group](f) }
func FuzzAdminTokenBody(f *testing.F)         { fuzzBody[tokenBody](f) }
func FuzzMeLanguageBody(f *testing.F)         { fuzzBody[languageRequest](f) }
func FuzzAdminGrantsBody(f *testing.F)        { fuzzBody[grantsBody](f) }
func FuzzCampaignBody(f *testing.F)           { fuzzBody[campaign.Request](f) }
func FuzzCampaignAnswersBody(f *testing.F)    { fuzzBody[campaign.Answers](f) }

// fuzzedBodies are the body types with a fuzz target above.
var fuzzedBodies = []string{"loginRequest", "ticketRequest", "runRequest", "agent.Decision", "inputRequest",
	"conversationStartRequest", "messageRequest", "answerRequest", "conversationSkillRequest",
	"skillCreateRequest", "skillUpdateRequest", "digestRequest", "attachRequest", "sourceRequest",
	"configurationBody", "userBody", "access.Group", "tokenBody", "languageRequest", "grantsBody",
	"campaign.Request", "campaign.Answers"}

// A handler that decodes a new kind of body without a fuzz target fails here:
// every DecodeJSON(r, &v) of the package names a declared type, and each is
// in fuzzedBodies.
func TestEveryDecodedBodyHasAFuzzTarget(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var found []string
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range file.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			vars := map[string]string{} // var name → type as written
			ast.Inspect(fn.Body, func(n ast.Node) bool {
				switch n := n.(type) {
				case *ast.ValueSpec:
					for _, id := range n.Names {
						vars[id.Name] = typeString(n.Type)
					}
				case *ast.CallExpr:
					if id, ok := n.Fun.(*ast.Ident); !ok || id.Name != "DecodeJSON" || len(n.Args) != 2 {
						return true
					}
					var v *ast.Ident
					if arg, ok := n.Args[1].(*ast.UnaryExpr); ok {
						v, _ = arg.X.(*ast.Ident)
					}
					if v == nil {
						t.Errorf("%s: DecodeJSON into %s, want &variable", fset.Position(n.Pos()), typeString(n.Args[1]))
						return true
					}
					typ := vars[v.Name]
					if typ == "" || strings.HasPrefix(typ, "struct") {
						t.Errorf("%s: DecodeJSON into a body without a named type: name it and add a fuzz target", fset.Position(n.Pos()))
					}
					found = append(found, typ)
				}
				return true
			})
		}
	}
	for _, typ := range found {
		if !slices.Contains(fuzzedBodies, typ) {
			t.Errorf("body %s is decoded but has no fuzz target in fuzz_test.go", typ)
		}
	}
	if len(found) < len(fuzzedBodies) {
		t.Errorf("found %d DecodeJSON calls, fewer than the %d fuzzed bodies: %v", len(found), len(fuzzedBodies), found)
	}
}

func typeString(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.Ident:
		return e.Name
	case *ast.SelectorExpr:
		return typeString(e.X) + "." + e.Sel.Name
	case *ast.StructType:
		return "struct{…}"
	case nil:
		return ""
	}
	return "?"
}

// The body check and the decoder agree: checkJSONText refuses a body
// exactly when a string in it, decoded, is text the database cannot store,
// or when a string as sent holds bytes that are not UTF-8 (the decoder would
// replace them by U+FFFD silently). JSON allows such bytes nowhere but inside
// a string, so a body that parses and is not UTF-8 has them in a string.
func FuzzCheckJSONTextAgreesWithTheDecoder(f *testing.F) {
	f.Add(`["\u0000"]`)
	f.Add("[\"\x94\"]")
	f.Add(`{"a":"b"}`)
	f.Fuzz(func(t *testing.T, body string) {
		var v any
		if json.Unmarshal([]byte(body), &v) != nil {
			return
		}
		want := hasBadText(v) || !utf8.ValidString(body)
		if got := checkJSONText([]byte(body)) != nil; got != want {
			t.Errorf("checkJSONText(%q) refused %v, want %v", body, got, want)
		}
	})
}

func hasBadText(v any) bool {
	switch x := v.(type) {
	case string:
		return store.CheckText(x) != nil
	case []any:
		return slices.ContainsFunc(x, hasBadText)
	case map[string]any:
		for k, e := range x {
			if store.CheckText(k) != nil || hasBadText(e) {
				return true
			}
		}
	}
	return false
}
