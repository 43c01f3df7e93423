package tool_test

import (
	"errors"
	"strings"
	"testing"

	"waymark/internal/tool"
)

func TestChooseBuildsAnEnumeratedInputSchema(t *testing.T) {
	t.Parallel()
	schema, err := tool.InputSchema([]byte(`{"question":"Which tone?","options":["formal","casual"]}`))
	if err != nil {
		t.Fatal(err)
	}
	want := `{"additionalProperties":false,"properties":{"choice":{"enum":["formal","casual"],"type":"string"}},` +
		`"required":["choice"],"title":"Which tone?","type":"object"}`
	if string(schema) != want {
		t.Errorf("InputSchema = %s\nwant %s", schema, want)
	}
	if err := tool.ValidateInput(schema, []byte(`{"choice":"casual"}`)); err != nil {
		t.Errorf("ValidateInput(casual) = %v, want nil", err)
	}
	for values, wantMsg := range map[string]string{
		`{"choice":"rude"}`:                 "choice: ",
		`{}`:                                "choice: missing required property",
		`{"choice":"formal","text":"mine"}`: "text: unknown property",
		`"formal"`:                          "input: got string, want object",
	} {
		err := tool.ValidateInput(schema, []byte(values))
		var ae *tool.ArgsError
		if !errors.As(err, &ae) || ae.What != "input" || !strings.Contains(err.Error(), wantMsg) {
			t.Errorf("ValidateInput(%s) = %v, want an input error containing %q", values, err, wantMsg)
		}
	}
}

func TestChooseWithFreeTextAcceptsEitherAChoiceOrText(t *testing.T) {
	t.Parallel()
	schema, err := tool.InputSchema([]byte(`{"question":"Which tone?","options":["formal"],"freeText":true}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, ok := range []string{`{"choice":"formal"}`, `{"text":"somewhat playful"}`} {
		if err := tool.ValidateInput(schema, []byte(ok)); err != nil {
			t.Errorf("ValidateInput(%s) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{`{}`, `{"choice":"formal","text":"both"}`, `{"text":""}`, `{"text":5}`} {
		if err := tool.ValidateInput(schema, []byte(bad)); err == nil {
			t.Errorf("ValidateInput(%s) = nil, want an error", bad)
		}
	}
}

func TestChooseRefusesBadOptions(t *testing.T) {
	t.Parallel()
	for args, want := range map[string]string{
		`{"question":"?","options":[]}`:                                              "options: ",
		`{"question":"?","options":["a","a"]}`:                                       "options: ",
		`{"question":"?","options":["1","2","3","4","5","6","7","8","9","10","11"]}`: "options: ",
		`{"options":["a"]}`:                                                          "question: missing required property",
		`{"question":"?","options":["a"],"freeText":"yes"}`:                          "freeText: got string, want boolean",
	} {
		_, err := tool.InputSchema([]byte(args))
		var ae *tool.ArgsError
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), want) {
			t.Errorf("InputSchema(%s) = %v, want an *ArgsError containing %q", args, err, want)
		}
	}
	if err := tool.ValidateInput([]byte(`{"type":"nonsense"}`), []byte(`{}`)); err == nil {
		t.Errorf("ValidateInput with a broken schema = nil, want an error")
	}
}

func TestChooseIsAnInputTool(t *testing.T) {
	t.Parallel()
	reg := tool.NewRegistry(nil, nil)
	if err := tool.RegisterBuiltins(reg, nil, nil, nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	d, _ := reg.Def("choose")
	if !d.Input || d.Effect != tool.EffectRead || d.NeedsApproval() {
		t.Errorf("choose def = %+v, want an input tool with read effect and no approval", d)
	}
	for _, name := range []string{"update_page_metadata", "update_content"} {
		if d, _ := reg.Def(name); d.Effect != tool.EffectWrite || !d.ApprovalBound || d.Input {
			t.Errorf("%s def = %+v, want an approval-bound write", name, d)
		}
	}
}
