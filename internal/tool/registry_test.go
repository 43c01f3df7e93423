package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"waymark/internal/store"
	"waymark/internal/store/storetest"
	"waymark/internal/tool"
)

const objectSchema = `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`

// counter returns a read tool that counts its executions.
func counter(name string, defaultEnabled bool, runs *int) tool.Tool {
	return tool.NewFuncTool(tool.Def{Name: name, Description: "counts", Schema: json.RawMessage(objectSchema),
		Effect: tool.EffectRead, DefaultEnabled: defaultEnabled},
		func(context.Context, tool.Call) (tool.Result, error) {
			*runs++
			return tool.Result{Content: map[string]int{"runs": *runs}}, nil
		})
}

func TestRegisterRejectsDuplicateInvalidSchemaAndUnknownEffect(t *testing.T) {
	t.Parallel()
	reg := tool.NewRegistry(nil, nil)
	var runs int
	if err := reg.Register(counter("count", true, &runs)); err != nil {
		t.Fatalf("Register(count) = %v, want nil", err)
	}
	cases := []struct {
		name string
		def  tool.Def
		want string
	}{
		{"duplicate", tool.Def{Name: "count", Schema: json.RawMessage(objectSchema), Effect: tool.EffectRead}, "already registered"},
		{"schema not JSON", tool.Def{Name: "a", Schema: json.RawMessage(`{"type":`), Effect: tool.EffectRead}, "schema of a"},
		{"schema invalid", tool.Def{Name: "b", Schema: json.RawMessage(`{"type":"nonsense"}`), Effect: tool.EffectRead}, "schema of b"},
		{"no schema", tool.Def{Name: "c", Effect: tool.EffectRead}, "no argument schema"},
		{"unknown effect", tool.Def{Name: "d", Schema: json.RawMessage(objectSchema), Effect: "delete"}, "unknown effect"},
		{"empty name", tool.Def{Schema: json.RawMessage(objectSchema), Effect: tool.EffectRead}, "empty name"},
	}
	for _, c := range cases {
		err := reg.Register(tool.NewFuncTool(c.def, nil))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Register(%s) = %v, want an error containing %q", c.name, err, c.want)
		}
	}
	if got := len(reg.List()); got != 1 {
		t.Errorf("List() has %d tools after refused registrations, want 1", got)
	}
}

func TestWritesAreAlwaysApprovalBound(t *testing.T) {
	t.Parallel()
	reg := tool.NewRegistry(nil, nil)
	for _, e := range []tool.Effect{tool.EffectRead, tool.EffectWrite, tool.EffectNonIdempotentWrite, tool.EffectExternal} {
		d := tool.Def{Name: string(e), Schema: json.RawMessage(objectSchema), Effect: e}
		if err := reg.Register(tool.NewFuncTool(d, nil)); err != nil {
			t.Fatal(err)
		}
		got, _ := reg.Def(string(e))
		if want := e != tool.EffectRead; got.ApprovalBound != want || got.NeedsApproval() != want {
			t.Errorf("Def(%s).ApprovalBound = %v, NeedsApproval = %v, want %v", e, got.ApprovalBound, got.NeedsApproval(), want)
		}
	}
}

func TestValidateNamesTheBadField(t *testing.T) {
	t.Parallel()
	reg := tool.NewRegistry(nil, nil)
	if err := tool.RegisterBuiltins(reg, nil, nil, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		tool, args, want string
	}{
		{"read_page", `{}`, "page: missing required property"},
		{"read_page", ``, "page: missing required property"},
		{"read_page", `{"page":"1"}`, "page: got string, want integer"},
		{"read_page", `{"page":1,"lang":0}`, "lang: unknown property"},
		{"read_page", `[1]`, "arguments: got array, want object"},
		{"read_page", `{"page":`, "arguments: not a JSON value"},
		{"update_page_metadata", `{"page":1,"fields":{"title":"x"}}`, "fields.title: unknown property"},
		{"update_page_metadata", `{"page":1,"fields":{}}`, "fields: "},
		{"update_page_metadata", `{"page":1,"fields":{"description":5}}`, "fields.description: got number, want string"},
		{"update_content", `{"fields":{"header":"x"}}`, "uid: missing required property"},
		{"choose", `{"question":"?","options":["a","a"]}`, "options: "},
	}
	for _, c := range cases {
		err := reg.Validate(c.tool, json.RawMessage(c.args))
		var ae *tool.ArgsError
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%s, %s) = %v, want an *ArgsError containing %q", c.tool, c.args, err, c.want)
		}
	}
	for _, ok := range []struct{ tool, args string }{
		{"read_page", `{"page":1}`},
		{"read_page", `{"page":1,"language":1}`},
		{"update_page_metadata", `{"page":1,"fields":{"description":"d","keywords":"k"}}`},
		{"choose", `{"question":"?","options":["a","b"],"freeText":true}`},
	} {
		if err := reg.Validate(ok.tool, json.RawMessage(ok.args)); err != nil {
			t.Errorf("Validate(%s, %s) = %v, want nil", ok.tool, ok.args, err)
		}
	}
	if err := reg.Validate("nope", nil); !errors.Is(err, tool.ErrUnknown) {
		t.Errorf("Validate(nope) = %v, want ErrUnknown", err)
	}
}

func TestExecuteWithBadArgumentsIsAnErrorResultAndDoesNotRun(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		reg := tool.NewRegistry(db, nil)
		var runs int
		if err := reg.Register(counter("count", true, &runs)); err != nil {
			t.Fatal(err)
		}
		for _, args := range []string{`{}`, `{"n":"x"}`, `{"n":1,"m":2}`} {
			res, err := reg.Execute(context.Background(), "count", tool.Call{Args: json.RawMessage(args)})
			if err != nil {
				t.Fatalf("Execute(%s) error: %v", args, err)
			}
			if msg := errorText(t, res); !strings.HasPrefix(msg, "invalid arguments: ") {
				t.Errorf("Execute(%s) error = %q, want invalid arguments", args, msg)
			}
		}
		if runs != 0 {
			t.Errorf("tool ran %d times on bad arguments, want 0", runs)
		}
		res, _ := reg.Execute(context.Background(), "count", tool.Call{Args: json.RawMessage(`{"n":1}`)})
		if res.IsError || runs != 1 {
			t.Errorf("Execute(valid) = %s, runs %d; want a result and 1 run", asJSON(t, res.Content), runs)
		}
		res, _ = reg.Execute(context.Background(), "missing_tool", tool.Call{})
		if msg := errorText(t, res); msg != `unknown tool "missing_tool"` {
			t.Errorf("Execute(missing_tool) error = %q", msg)
		}
	})
}

func TestDisabledToolIsAnErrorResultAndSetEnabledPersists(t *testing.T) {
	storetest.Each(t, func(t *testing.T, db *store.DB) {
		ctx := context.Background()
		reg := tool.NewRegistry(db, nil)
		var onRuns, offRuns int
		if err := reg.Register(counter("on_by_default", true, &onRuns)); err != nil {
			t.Fatal(err)
		}
		if err := reg.Register(counter("off_by_default", false, &offRuns)); err != nil {
			t.Fatal(err)
		}
		args := tool.Call{Args: json.RawMessage(`{"n":1}`)}

		res, err := reg.Execute(ctx, "off_by_default", args)
		if err != nil {
			t.Fatal(err)
		}
		if msg := errorText(t, res); msg != `tool "off_by_default" is disabled` || offRuns != 0 {
			t.Errorf("Execute(off_by_default) = %q after %d runs, want disabled and no run", msg, offRuns)
		}
		if specs, _ := reg.EnabledSpecs(ctx, []string{"off_by_default", "on_by_default"}); len(specs) != 1 || specs[0].Name != "on_by_default" {
			t.Errorf("EnabledSpecs = %+v, want only on_by_default", specs)
		}

		if err := reg.SetEnabled(ctx, "on_by_default", false); err != nil {
			t.Fatal(err)
		}
		if err := reg.SetEnabled(ctx, "off_by_default", true); err != nil {
			t.Fatal(err)
		}
		res, _ = reg.Execute(ctx, "on_by_default", args)
		if !res.IsError || onRuns != 0 {
			t.Errorf("Execute(on_by_default) after disabling = %s, runs %d", asJSON(t, res.Content), onRuns)
		}

		// A new registry over the same database reads the stored state.
		again := tool.NewRegistry(db, nil)
		_ = again.Register(counter("on_by_default", true, &onRuns))
		_ = again.Register(counter("off_by_default", false, &offRuns))
		for name, want := range map[string]bool{"on_by_default": false, "off_by_default": true} {
			if got, err := again.Enabled(ctx, name); err != nil || got != want {
				t.Errorf("Enabled(%s) = %v, %v; want %v", name, got, err, want)
			}
		}
		res, _ = again.Execute(ctx, "off_by_default", args)
		if res.IsError || offRuns != 1 {
			t.Errorf("Execute(off_by_default) after enabling = %s, runs %d", asJSON(t, res.Content), offRuns)
		}

		if err := reg.SetEnabled(ctx, "typo", true); !errors.Is(err, tool.ErrUnknown) {
			t.Errorf("SetEnabled(typo) = %v, want ErrUnknown", err)
		}
		var rows int
		if err := db.QueryRow(ctx, "SELECT COUNT(*) FROM tool_settings").Scan(&rows); err != nil || rows != 2 {
			t.Errorf("tool_settings rows = %d, %v; want 2 (no row for the unknown name)", rows, err)
		}
	})
}

func TestSpecsFollowTheRequestedOrder(t *testing.T) {
	t.Parallel()
	reg := tool.NewRegistry(nil, nil)
	if err := tool.RegisterBuiltins(reg, nil, nil, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	specs := reg.Specs([]string{"update_content", "unknown", "read_page"})
	if len(specs) != 2 || specs[0].Name != "update_content" || specs[1].Name != "read_page" {
		t.Fatalf("Specs = %+v, want update_content, read_page", specs)
	}
	if !json.Valid(specs[0].Schema) || specs[0].Description == "" {
		t.Errorf("spec of update_content = %+v, want a description and a JSON schema", specs[0])
	}
	var names []string
	for _, d := range reg.List() {
		names = append(names, d.Name)
	}
	if got := strings.Join(names, ","); got != "chat_list_open_points,choose,highlight_record,list_open_points,read_page,read_record,set_progress,update_content,update_page_metadata" {
		t.Errorf("List() = %s", got)
	}
}
