package web

import (
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"waymark/internal/access"
	"waymark/internal/catalog"
	"waymark/internal/llmconfig"
)

// formState is what every administration form shows besides its values:
// the error at each field (by the API's field name), the text entered in a
// field that did not parse, a form-level error and a notice (bad
// input shows a clear error at the field and changes nothing).
type formState struct {
	Errors map[string]string
	Raw    map[string]string
	Error  string
	Notice string
}

// Err is the error shown at field name ("" for none).
func (f *formState) Err(name string) string { return f.Errors[name] }

// Val is the value of field name: the text entered when it did not parse,
// else v.
func (f *formState) Val(name string, v any) string {
	if s, ok := f.Raw[name]; ok {
		return s
	}
	return fmt.Sprint(v)
}

func (f *formState) failed() bool { return len(f.Errors) > 0 || f.Error != "" }

// formReader reads an administration form, noting a value that does not
// parse as an error at its field.
type formReader struct {
	r  *http.Request
	me *user
	st *formState
}

func newFormReader(r *http.Request, me *user, st *formState) *formReader {
	_ = r.ParseForm()
	if st.Errors == nil {
		st.Errors = map[string]string{}
	}
	if st.Raw == nil {
		st.Raw = map[string]string{}
	}
	return &formReader{r: r, me: me, st: st}
}

func (f *formReader) str(name string) string { return f.r.PostForm.Get(name) }

// bool reads a checkbox.
func (f *formReader) bool(name string) bool { return f.r.PostForm.Get(name) != "" }

// int reads a whole number; empty is 0.
func (f *formReader) int(name string) int64 {
	v := strings.TrimSpace(f.str(name))
	if v == "" {
		return 0
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		f.st.Raw[name] = v
		f.st.Errors[name] = f.me.T.Get("admin.error.number", v)
	}
	return n
}

// float reads a decimal number ("2.5" or "2,5"); a value that is not one is
// kept and named as the field's error.
func (f *formReader) float(name string) float64 {
	v := strings.TrimSpace(f.str(name))
	if v == "" {
		return 0
	}
	n, err := strconv.ParseFloat(strings.Replace(v, ",", ".", 1), 64)
	if err != nil {
		f.st.Raw[name] = v
		f.st.Errors[name] = f.me.T.Get("admin.error.number", v)
	}
	return n
}

// words reads a list: every value of name (checkboxes), each split at
// commas and spaces (text fields).
func (f *formReader) words(name string) []string {
	out := []string{}
	for _, v := range f.r.PostForm[name] {
		out = append(out, strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '\n' || r == '\r' || r == '\t' })...)
	}
	return out
}

// ints reads a list of uids like words.
func (f *formReader) ints(name string) []int64 {
	out := []int64{}
	for _, w := range f.words(name) {
		n, err := strconv.ParseInt(w, 10, 64)
		if err != nil {
			f.st.Raw[name] = strings.Join(f.r.PostForm[name], ", ")
			f.st.Errors[name] = f.me.T.Get("admin.error.number", w)
			continue
		}
		out = append(out, n)
	}
	return out
}

// refusal shows a refused save: a validation error at its field, a taken
// name at the name field, anything else above the form.
func (u *UI) refusal(r *http.Request, me *user, st *formState, err error, nameField string) {
	if err == nil {
		return
	}
	// Every refused field of a change is shown at once, not one per answer.
	var all access.FieldErrors
	if errors.As(err, &all) {
		for _, one := range all {
			u.refusal(r, me, st, one, nameField)
		}
		return
	}
	var cfe *llmconfig.FieldError
	var afe *access.FieldError
	field, reason := "", ""
	switch {
	case errors.As(err, &cfe):
		field, reason = cfe.Field, cfe.Reason
	case errors.As(err, &afe):
		field, reason = afe.Field, afe.Reason
	case errors.Is(err, llmconfig.ErrTaken), errors.Is(err, access.ErrUsernameTaken), errors.Is(err, access.ErrExists):
		st.Errors[nameField] = me.T.Get("admin.error.taken")
		return
	case errors.Is(err, access.ErrLastAdmin):
		st.Error = me.T.Get("admin.error.lastAdmin")
		return
	default:
		u.logErr(r.Context(), "admin save", err)
		st.Error = u.errorText(me, errCode(err))
		return
	}
	if st.Errors[field] != "" {
		return // the form's own error at this field (a value that did not parse) stays
	}
	msg := me.T.Get("admin.error.invalid", reason)
	if k := "admin.invalid." + field; hasKey(k) {
		msg = me.T.Get(k) + " (" + reason + ")"
	}
	st.Errors[field] = msg
}

// formStatus is the status of a refused form: htmx swaps only 2xx answers,
// so its requests get 200; others 400.
func formStatus(r *http.Request) int {
	if r.Header.Get("HX-Request") == "true" {
		return http.StatusOK
	}
	return http.StatusBadRequest
}

// pathUID reads the uid path value; ok false when it is not a positive integer.
func pathUID(r *http.Request) (int64, bool) {
	n, err := strconv.ParseInt(r.PathValue("uid"), 10, 64)
	return n, err == nil && n > 0
}

// notFound renders the not-found answer of an administration screen.
func (u *UI) notFound(w http.ResponseWriter, r *http.Request, me *user) {
	http.Error(w, me.T.Get("error.not_found"), http.StatusNotFound)
}

// fieldData is one labelled input of an administration form
// (partials_admin.html): its label "admin.field.NAME", its value (or the
// text entered when it did not parse), its hint and its error.
type fieldData struct {
	T       catalog.T
	Name    string
	Value   string
	Checked bool
	Hint    string
	Err     string
	Type    string
}

// formView is the data of a screen with a form.
type formView interface {
	Err(name string) string
	Val(name string, v any) string
}

// fieldOf is the template function that builds a fieldData; hintKey "" is no hint.
func fieldOf(p *page, name string, value any, hintKey string) fieldData {
	f := fieldData{T: p.T, Name: name, Type: "text"}
	if b, ok := value.(bool); ok {
		f.Checked = b
	}
	f.Value = fmt.Sprint(value)
	if v, ok := p.Data.(formView); ok {
		f.Value, f.Err = v.Val(name, value), v.Err(name)
	}
	if hintKey != "" {
		f.Hint = p.T.Get(hintKey)
	}
	switch value.(type) {
	case int, int64:
		f.Type = "number"
	}
	if name == "password" {
		f.Type, f.Value = "password", ""
	}
	return f
}
