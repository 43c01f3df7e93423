package demo

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"waymark/internal/content"
)

// wording is the demo's text material in one language: every entry is a
// whole sentence (or a whole title), %s is the page title or the header.
type wording struct {
	leads   []string // first sentence of a description, one per variant
	extras  []string // further whole sentences a description may take
	titles  []string // SEO titles
	headers []string // headers of a content element
	bodies  []string // texts of a content element
}

// words is the wording of the demo site, Nordlicht Digital: it states the
// agency's facts (Hamburg-Altona, since 2009, a team of 24) and is used only
// on a page of the demo site (onDemoSite); plainWords, for every other page,
// states nothing but the page's title, the element's header and the page's
// own first sentence.
var words = map[bool]wording{
	false: {
		leads: []string{
			"%s at Nordlicht Digital, the web agency in Hamburg-Altona.",
			"Everything about %s at Nordlicht Digital in Hamburg.",
			"%s, explained by the team of Nordlicht Digital.",
		},
		extras: []string{
			"We plan, build and look after websites for companies in the north.",
			"Talk to us about your next project.",
			"Clear advice, fair prices and pages that load fast.",
			"Personal advice since 2009.",
			"Made in Hamburg.",
			"Fast and accessible.",
		},
		titles: []string{"%s – Nordlicht Digital, web agency in Hamburg", "%s | Websites from Hamburg – Nordlicht Digital",
			"Nordlicht Digital: %s for companies in the north", "%s – Nordlicht Digital"},
		headers: []string{"%s: who we are and what we do", "%s – Nordlicht Digital in Hamburg", "%s at Nordlicht Digital: people and projects"},
		bodies: []string{
			"%s: our team of 24 plans, designs and builds websites for companies in trade, tourism and the public sector. Every site is accessible, fast and easy to maintain.",
			"Under “%s” you find what drives us: websites that load fast, are easy to edit and work for every visitor. Ask us for references from your industry.",
			"%s at Nordlicht Digital means one contact person from the first sketch to hosting. You get clear prices and a team that stays after the launch.",
		},
	},
	true: {
		leads: []string{
			"%s bei Nordlicht Digital, der Webagentur in Hamburg-Altona.",
			"Alles über %s bei Nordlicht Digital in Hamburg.",
			"%s, erklärt vom Team von Nordlicht Digital.",
		},
		extras: []string{
			"Wir planen, bauen und betreuen Websites für Unternehmen im Norden.",
			"Sprechen Sie mit uns über Ihr nächstes Projekt.",
			"Klare Beratung, faire Preise und Seiten, die schnell laden.",
			"Persönliche Beratung seit 2009.",
			"Aus Hamburg.",
			"Schnell und barrierefrei.",
		},
		titles: []string{"%s – Nordlicht Digital, Webagentur in Hamburg", "%s | Websites aus Hamburg – Nordlicht Digital",
			"Nordlicht Digital: %s für Unternehmen im Norden", "%s – Nordlicht Digital"},
		headers: []string{"%s: wer wir sind und was wir tun", "%s – Nordlicht Digital in Hamburg", "%s bei Nordlicht Digital: Menschen und Projekte"},
		bodies: []string{
			"%s: Unser Team aus 24 Menschen plant, gestaltet und baut Websites für Handel, Tourismus und öffentliche Hand. Jede Seite ist barrierefrei, schnell und leicht zu pflegen.",
			"Unter „%s“ finden Sie, was uns antreibt: Websites, die schnell laden, leicht zu pflegen sind und für alle funktionieren. Fragen Sie nach Referenzen aus Ihrer Branche.",
			"%s bei Nordlicht Digital heißt: eine Ansprechperson von der ersten Skizze bis zum Hosting. Sie bekommen klare Preise und ein Team, das nach dem Start bleibt.",
		},
	},
}

// Every title of plainWords adds 28 to 31 characters: a page title of 4 to
// 29 characters gets an SEO title within its range in every variant.
var plainWords = map[bool]wording{
	false: {
		leads: []string{
			"%s: what this page is about, at a glance.",
			"Everything you need to know about %s, on one page.",
			"%s – read what matters and find the details here.",
		},
		extras: []string{
			"Read the details and find what you are looking for.",
			"All the important information in one place.",
			"Clear, short and easy to read.",
			"Take a look around and read on.",
			"Find out more on this page.",
			"Questions? Get in touch.",
		},
		titles: []string{"%s – the essentials at a glance", "%s: the information on one page",
			"%s | overview and all the details", "%s – all you need to know here"},
		headers: []string{"%s: what you should know", "%s at a glance", "%s – an overview"},
		bodies: []string{
			"%s: this section gives you the most important information, clearly summarised. Read on for the details, or get in touch if you have questions.",
			"Under “%s” you find what matters most on this topic, in a few clear sentences. Read on for the details.",
			"%s in short: the essentials first, then the details. If something is missing, let us know and we will add it.",
		},
	},
	true: {
		leads: []string{
			"%s: worum es auf dieser Seite geht, auf einen Blick.",
			"Alles Wichtige über %s auf einer Seite.",
			"%s – lesen Sie hier, worauf es ankommt.",
		},
		extras: []string{
			"Hier finden Sie die Details und das, was Sie suchen.",
			"Alle wichtigen Informationen an einem Ort.",
			"Klar, kurz und leicht zu lesen.",
			"Schauen Sie sich um und lesen Sie weiter.",
			"Mehr dazu auf dieser Seite.",
			"Fragen? Sprechen Sie uns an.",
		},
		titles: []string{"%s – das Wichtigste im Überblick", "%s: alles auf einer Seite erklärt",
			"%s | Überblick und alle Details", "%s – was Sie dazu wissen sollten"},
		headers: []string{"%s: was Sie wissen sollten", "%s auf einen Blick", "%s im Überblick"},
		bodies: []string{
			"%s: Dieser Abschnitt fasst die wichtigsten Informationen klar zusammen. Lesen Sie weiter für die Details oder sprechen Sie uns an, wenn Sie Fragen haben.",
			"Unter „%s“ finden Sie das Wichtigste zum Thema in wenigen klaren Sätzen. Lesen Sie weiter für die Details.",
			"%s in Kürze: zuerst das Wesentliche, dann die Details. Fehlt etwas, sagen Sie uns Bescheid, und wir ergänzen es.",
		},
	},
}

// demoAgency is the name every page of the demo site's own text carries
// somewhere: in a field of the page, of its translation or of an element.
const demoAgency = "Nordlicht Digital"

// onDemoSite reports whether the page read belongs to the demo site: whether
// it names the demo agency itself. A page that does not — another site's,
// or a demo page that never names it — gets the plain wording, so the demo
// site's facts are never stated on a site they are not true of.
func (t *tour) onDemoSite() bool {
	if t.read == nil {
		return false
	}
	recs := append([]record{t.read.Page}, t.read.Content...)
	if t.read.Translation != nil {
		recs = append(recs, *t.read.Translation)
	}
	for _, r := range recs {
		for _, v := range r.Fields {
			if strings.Contains(v, demoAgency) {
				return true
			}
		}
	}
	return false
}

// wording is the text material for the page read, in its language.
func (t *tour) wording() wording {
	if t.onDemoSite() {
		return words[t.german]
	}
	return plainWords[t.german]
}

// propose writes the value of a finding; variant picks another wording. A
// ranged field's value lies within its recommended length.
func (t *tour) propose(f finding, variant int) string {
	w := t.wording()
	title := t.read.Page.Fields["title"]
	if t.read.Translation != nil && t.read.Translation.Fields["title"] != "" {
		title = t.read.Translation.Fields["title"]
	}
	header := strings.TrimSpace(f.record.Fields["header"])
	if header == "" {
		header = title
	}
	switch f.field {
	case "description":
		return describe(w, title, t.topic(), variant)
	case "seoTitle":
		return first(w.titles, title, variant, ranges["seoTitle"])
	case "header":
		return first(w.headers, header, variant, ranges["header"])
	}
	return fmt.Sprintf(w.bodies[variant%len(w.bodies)], header)
}

// describe builds a meta description of whole sentences within its range:
// the variant's lead sentence, the page's own first sentence when it fits,
// then further sentences, each taken only if the text stays within the maximum.
func describe(w wording, title, topic string, variant int) string {
	r := ranges["description"]
	pool := []string{}
	if topic != "" {
		pool = append(pool, topic)
	}
	for i := range w.extras {
		pool = append(pool, w.extras[(i+variant)%len(w.extras)])
	}
	for skip := 0; skip <= len(pool); skip++ {
		s := fmt.Sprintf(w.leads[variant%len(w.leads)], title)
		for _, p := range pool[skip:] {
			if cand := s + " " + p; utf8.RuneCountInString(cand) <= r[1] {
				s = cand
			}
		}
		if n := utf8.RuneCountInString(s); n >= r[0] && n <= r[1] {
			return s
		}
	}
	return fmt.Sprintf(w.leads[variant%len(w.leads)], title)
}

// first is the first template, from the variant's on, whose text fits the range.
func first(templates []string, arg string, variant int, r [2]int) string {
	for i := range templates {
		s := fmt.Sprintf(templates[(i+variant)%len(templates)], arg)
		if n := utf8.RuneCountInString(s); n >= r[0] && n <= r[1] {
			return s
		}
	}
	return fmt.Sprintf(templates[variant%len(templates)], arg)
}

// topic is the first sentence of the page's first text element in the page's
// language, if it is long enough to say something: of its text
// (content.PlainText), never of its HTML.
func (t *tour) topic() string {
	for _, c := range t.read.Content {
		text := content.PlainText(c.Fields["bodytext"])
		if !t.inLanguage(c) || utf8.RuneCountInString(text) < 20 {
			continue
		}
		s := firstSentence(text)
		if utf8.RuneCountInString(s) > 90 {
			return ""
		}
		return s
	}
	return ""
}

// firstSentence is the first sentence of a plain text: of its first line,
// up to the first full stop, question or exclamation mark that ends a word,
// or the whole line with a full stop.
func firstSentence(text string) string {
	line, _, _ := strings.Cut(text, "\n")
	for i, r := range line {
		if strings.ContainsRune(".!?", r) && (i+1 == len(line) || line[i+1] == ' ') && i > 0 {
			return line[:i+1]
		}
	}
	return strings.TrimRight(line, ":;,–- ") + "."
}
