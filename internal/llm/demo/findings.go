package demo

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"waymark/internal/content"
)

// Recommended lengths of the fields the demo proposes, in runes: the ranges
// of the built-in schema (content.DefaultSchemas), which the card measures.
var ranges = map[string][2]int{
	"description": {140, 160},
	"seoTitle":    {30, 60},
	"header":      {10, 70},
}

// Skills of the demo site (site.yaml) and what each looks at.
const (
	skillSEO     = "seo-optimieren"
	skillContent = "inhalt-verbessern"
)

// minBody is the length below which a text element says too little.
const minBody = 40

// finding is one proposed change.
type finding struct {
	key, tool, field string
	uid              int64
	record           record
	count            int // the current value's length in runes
}

// findings lists every finding of the page read, decided or not, in the
// order the tour takes them: open points offered again first, then the meta
// description, the SEO title, the headers and the texts.
func (t *tour) findings() []finding {
	if t.read == nil {
		return nil
	}
	target := t.read.Page
	if t.read.Translation != nil {
		target = *t.read.Translation
	}
	seo := t.skill == "" || t.skill == skillSEO
	body := t.skill == "" || t.skill == skillContent
	var out []finding
	meta := func(field string) {
		n := utf8.RuneCountInString(strings.TrimSpace(target.Fields[field]))
		if r := ranges[field]; n < r[0] || n > r[1] {
			out = append(out, finding{key: fmt.Sprintf("pages:%d:%s", target.UID, field), tool: "update_page_metadata",
				field: field, uid: target.UID, record: target, count: n})
		}
	}
	if seo && t.offered["update_page_metadata"] {
		meta("description")
		meta("seoTitle")
	}
	if t.offered["update_content"] {
		for _, c := range t.read.Content {
			if c.Fields["CType"] != "text" || !t.inLanguage(c) {
				continue
			}
			n := utf8.RuneCountInString(strings.TrimSpace(c.Fields["header"]))
			if r := ranges["header"]; seo && (n < r[0] || n > r[1]) {
				out = append(out, finding{key: fmt.Sprintf("tt_content:%d:header", c.UID), tool: "update_content",
					field: "header", uid: c.UID, record: c, count: n})
			}
		}
		for _, c := range t.read.Content {
			if c.Fields["CType"] != "text" || !t.inLanguage(c) {
				continue
			}
			n := utf8.RuneCountInString(content.PlainText(c.Fields["bodytext"])) // the text, not its HTML
			if body && n < minBody {
				out = append(out, finding{key: fmt.Sprintf("tt_content:%d:bodytext", c.UID), tool: "update_content",
					field: "bodytext", uid: c.UID, record: c, count: n})
			}
		}
	}
	// Open points from earlier runs come first, in the order found.
	var again, rest []finding
	for _, f := range out {
		if t.reopen[f.key] {
			again = append(again, f)
		} else {
			rest = append(rest, f)
		}
	}
	return append(again, rest...)
}

// inLanguage reports whether a content element is written in the page's language.
func (t *tour) inLanguage(c record) bool { return c.Language == t.read.Language }

// label names a finding for the editor: the field, and the element for content.
func (t *tour) label(f finding) string {
	switch f.field {
	case "description":
		return t.say("meta description", "Meta-Beschreibung")
	case "seoTitle":
		return t.say("SEO title", "SEO-Titel")
	case "header":
		return t.say(fmt.Sprintf("header “%s”", f.record.Fields["header"]), fmt.Sprintf("Überschrift „%s“", f.record.Fields["header"]))
	}
	return t.say(fmt.Sprintf("text of “%s”", f.record.Fields["header"]), fmt.Sprintf("Text von „%s“", f.record.Fields["header"]))
}

// explain is the sentence the proposal comes with: which point, what is wrong, what the proposal measures.
func (t *tour) explain(f finding, value string, variant, point, total int) string {
	n := utf8.RuneCountInString(value)
	if variant > 0 {
		return t.say(fmt.Sprintf("Here is another wording for the %s (%d characters).", t.label(f), n),
			fmt.Sprintf("Hier ist eine andere Formulierung für %s (%d Zeichen).", t.germanObject(f), n))
	}
	lead := t.say(fmt.Sprintf("Point %d of %d: ", point, total), fmt.Sprintf("Punkt %d von %d: ", point, total))
	r, ranged := ranges[f.field]
	switch {
	case ranged && f.count == 0:
		return lead + t.say(fmt.Sprintf("The %s is missing. I propose one with %d characters (recommended: %d to %d).", t.label(f), n, r[0], r[1]),
			fmt.Sprintf("%s fehlt. Ich schlage %s mit %d Zeichen vor (empfohlen: %d bis %d).", capitalize(t.germanSubject(f)), t.germanAccusative(f), n, r[0], r[1]))
	case ranged:
		return lead + t.say(fmt.Sprintf("The %s has %d characters; %d to %d work best. My proposal has %d.", t.label(f), f.count, r[0], r[1], n),
			fmt.Sprintf("%s hat %d Zeichen, empfohlen sind %d bis %d. Mein Vorschlag hat %d.", capitalize(t.germanSubject(f)), f.count, r[0], r[1], n))
	}
	return lead + t.say(fmt.Sprintf("The %s is too thin to tell the reader anything. I propose a fuller text.", t.label(f)),
		fmt.Sprintf("%s ist zu dünn, um den Lesern etwas zu sagen. Ich schlage einen ausführlicheren Text vor.", capitalize(t.germanSubject(f))))
}

// German articles of the findings' labels.
func (t *tour) germanSubject(f finding) string {
	switch f.field {
	case "description", "header":
		return "die " + t.label(f)
	}
	return "der " + t.label(f)
}

func (t *tour) germanAccusative(f finding) string {
	switch f.field {
	case "description", "header":
		return "eine"
	case "seoTitle":
		return "einen"
	}
	return "einen Text"
}

func (t *tour) germanObject(f finding) string {
	switch f.field {
	case "description", "header":
		return "die " + t.label(f)
	}
	return "den " + t.label(f)
}

func capitalize(s string) string {
	r, n := utf8.DecodeRuneInString(s)
	return strings.ToUpper(string(r)) + s[n:]
}

// summary is the closing message: how many points, and what became of each.
func (t *tour) summary(all []finding) string {
	title := t.read.Page.Fields["title"]
	if t.read.Translation != nil && t.read.Translation.Fields["title"] != "" {
		title = t.read.Translation.Fields["title"]
	}
	if len(all) == 0 {
		return t.say(fmt.Sprintf("I went through “%s”: everything is within the recommendations, there is nothing to propose. The page is done.", title),
			fmt.Sprintf("Ich habe „%s“ durchgesehen: Alles liegt im empfohlenen Rahmen, es gibt nichts vorzuschlagen. Die Seite ist fertig.", title))
	}
	labels := map[string]finding{}
	for _, f := range all {
		labels[f.key] = f
	}
	group := map[string][]string{}
	for _, key := range t.order {
		if f, ok := labels[key]; ok {
			group[t.outcome[key]] = append(group[t.outcome[key]], t.label(f))
		}
	}
	var b strings.Builder
	en, de := "%d points", "%d Punkte"
	if len(all) == 1 {
		en, de = "%d point", "%d Punkt"
	}
	b.WriteString(t.say(fmt.Sprintf("The tour of “%s” is done: "+en+".", title, len(all)),
		fmt.Sprintf("Die Tour durch „%s“ ist fertig: "+de+".", title, len(all))))
	line := func(out, en, de string) {
		if l := group[out]; len(l) > 0 {
			b.WriteString(" " + t.say(en, de) + " " + strings.Join(l, ", ") + ".")
		}
	}
	line(outApplied, "Applied:", "Übernommen:")
	line(outSkipped, "Skipped, and kept on the dashboard as open points:", "Übersprungen und als offene Punkte im Dashboard:")
	line(outKept, "Kept as they are:", "Unverändert behalten:")
	line(outNotApplied, "Not saved:", "Nicht gespeichert:")
	return b.String()
}
