package skill

import (
	"crypto/sha256"
	"strings"
	"testing"
)

func digestFixture() Version {
	return Version{
		Name:         "seo-titles",
		Description:  "Writes page titles.",
		Body:         "# SEO titles\n\nKeep titles under 60 characters.",
		Support:      "full",
		AllowedTools: []string{"content.read", "content.write"},
		Process:      true,
	}
}

// The golden value guards serialisation format 1: it is stored and compared,
// so it must never change.
func TestDigestOfAFixedVersionIsStable(t *testing.T) {
	t.Parallel()
	const want = "v1:d2db039461f4496ba6b609b9ce2c3aa12e3934c0c687c38d6369a19120939855"
	if got := digestFixture().Digest(); got != want {
		t.Errorf("Digest() = %s, want %s (format 1 must never change)", got, want)
	}
	if got := (Version{}).Digest(); got != "v1:edacde311081c663dcd2b9d15e59ea7a210272dfe6bd3393f9292230f663af01" {
		t.Errorf("Digest() of the zero Version = %s, want v1:edacde31…", got)
	}
}

func TestDigestIsTheSha256OfTheDocumentedSerialisation(t *testing.T) {
	t.Parallel()
	v := Version{Name: "ab", Description: "c", Body: "é", AllowedTools: []string{"b", "a", "b"}}
	ser := "waymark-skill-version:1\n" +
		"name:2:ab\n" + "description:1:c\n" + "body:2:é\n" + "support:0:\n" +
		"allowed-tools:2\n" + "tool:1:a\n" + "tool:1:b\n" + "process:0\n"
	sum := sha256.Sum256([]byte(ser))
	if got, want := v.Digest(), "v1:"+hexString(sum[:]); got != want {
		t.Errorf("Digest() = %s, want %s", got, want)
	}
	v.AllowedTools = nil
	v.Process = true
	ser = strings.Replace(ser, "allowed-tools:2\ntool:1:a\ntool:1:b\n", "allowed-tools:null\n", 1)
	ser = strings.Replace(ser, "process:0\n", "process:1\n", 1)
	sum = sha256.Sum256([]byte(ser))
	if got, want := v.Digest(), "v1:"+hexString(sum[:]); got != want {
		t.Errorf("Digest() without declared tools = %s, want %s", got, want)
	}
}

func hexString(b []byte) string {
	const digits = "0123456789abcdef"
	out := make([]byte, 0, 2*len(b))
	for _, c := range b {
		out = append(out, digits[c>>4], digits[c&15])
	}
	return string(out)
}

func TestDigestChangesWithEveryDigestedField(t *testing.T) {
	t.Parallel()
	base := digestFixture()
	for name, change := range map[string]func(*Version){
		"name":                    func(v *Version) { v.Name += "x" },
		"description":             func(v *Version) { v.Description += "x" },
		"body":                    func(v *Version) { v.Body += "x" },
		"body trailing newline":   func(v *Version) { v.Body += "\n" },
		"support":                 func(v *Version) { v.Support = "partial" },
		"support cleared":         func(v *Version) { v.Support = "" },
		"a tool added":            func(v *Version) { v.AllowedTools = append(v.AllowedTools, "Read") },
		"a tool removed":          func(v *Version) { v.AllowedTools = v.AllowedTools[:1] },
		"no tools declared":       func(v *Version) { v.AllowedTools = []string{} },
		"no declaration":          func(v *Version) { v.AllowedTools = nil },
		"process":                 func(v *Version) { v.Process = false },
		"tool name case":          func(v *Version) { v.AllowedTools = []string{"Content.read", "content.write"} },
		"tools split differently": func(v *Version) { v.AllowedTools = []string{"content.readcontent.write"} },
	} {
		v := digestFixture()
		v.AllowedTools = append([]string(nil), v.AllowedTools...)
		change(&v)
		if v.Digest() == base.Digest() {
			t.Errorf("changing %s left the digest at %s", name, base.Digest())
		}
	}
}

func TestDigestFieldBoundariesAreUnambiguous(t *testing.T) {
	t.Parallel()
	for _, pair := range [][2]Version{
		{{Name: "ab", Description: "c"}, {Name: "a", Description: "bc"}},
		{{Description: "a", Body: "b"}, {Description: "ab"}},
		{{Body: "x", Support: ""}, {Body: "", Support: "x"}},
		{{Name: "a\ndescription:0:"}, {Name: "a"}},
		{{AllowedTools: []string{"a", "b"}}, {AllowedTools: []string{"ab"}}},
		{{AllowedTools: []string{}}, {AllowedTools: nil}},
		{{Support: "allowed-tools:null"}, {}},
	} {
		if pair[0].Digest() == pair[1].Digest() {
			t.Errorf("%+v and %+v have the same digest %s", pair[0], pair[1], pair[0].Digest())
		}
	}
}

func TestDigestIgnoresToolOrderDuplicatesAndUnreadKeys(t *testing.T) {
	t.Parallel()
	a := Version{Name: "a", Description: "b", AllowedTools: []string{"Write", "Read"}}
	b := Version{Name: "a", Description: "b", AllowedTools: []string{"Read", "Write", "Read"}}
	if a.Digest() != b.Digest() {
		t.Errorf("tool order or duplicates changed the digest: %s vs %s", a.Digest(), b.Digest())
	}
	if got := a.AllowedTools; got[0] != "Write" {
		t.Errorf("Digest reordered the caller's slice: %v", got)
	}
	plain := "---\nname: a\ndescription: b\n---\nBody.\n"
	extra := "---\nname: a\nlicense: MIT\nmetadata: {author: x}\ndescription: b\nversion: 7\n---\n\nBody.\n"
	pv, err1 := Parse([]byte(plain))
	ev, err2 := Parse([]byte(extra))
	if err1 != nil || err2 != nil {
		t.Fatalf("Parse: %v, %v", err1, err2)
	}
	if pv.Digest() != ev.Digest() {
		t.Errorf("unread front-matter keys changed the digest: %s vs %s", pv.Digest(), ev.Digest())
	}
	tools := "---\nname: a\nallowed-tools: Read\ndescription: b\n---\nBody.\n"
	tv, err := Parse([]byte(tools))
	if err != nil {
		t.Fatal(err)
	}
	if tv.Digest() == pv.Digest() {
		t.Errorf("declaring allowed-tools left the digest at %s", pv.Digest())
	}
}

func TestParseDigest(t *testing.T) {
	t.Parallel()
	if err := ParseDigest(digestFixture().Digest()); err != nil {
		t.Errorf("ParseDigest(Digest()) = %v", err)
	}
	good := strings.Repeat("0f", 32)
	for in, fragment := range map[string]string{
		"":                            `want the prefix "v1:"`,
		"1:" + good:                   `want the prefix "v1:"`,
		"v2:" + good:                  `want the prefix "v1:"`,
		"v1:" + good[:63]:             "want 64 hex digits",
		"v1:" + good + "0":            "want 64 hex digits",
		"v1:" + strings.ToUpper(good): "want lowercase hex digits",
		"v1:" + good[:63] + "g":       `got 'g' at position 66`,
	} {
		err := ParseDigest(in)
		if err == nil || !strings.Contains(err.Error(), fragment) {
			t.Errorf("ParseDigest(%q) = %v, want an error containing %q", in, err, fragment)
		}
	}
}

// BenchmarkDigest20KB digests a skill with a 20 kB body, beside a plain
// sha256 of the same 20 kB as the baseline.
func BenchmarkDigest20KB(b *testing.B) {
	v := digestFixture()
	v.Body = strings.Repeat("Keep titles short and specific. ", 20<<10/32)
	raw := []byte(v.Body)
	b.Run("digest", func(b *testing.B) {
		b.SetBytes(int64(len(v.Body)))
		b.ReportAllocs()
		for b.Loop() {
			_ = v.Digest()
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N), "µs/op")
	})
	b.Run("sha256-baseline", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			_ = sha256.Sum256(raw)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e3/float64(b.N), "µs/op")
	})
}
