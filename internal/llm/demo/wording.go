package demo

import (
	"fmt"
	"strings"
	"unicode/utf8"
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

// propose writes the value of a finding; variant picks another wording. A
// ranged field's value lies within its recommended length.
func (t *tour) propose(f finding, variant int) string {
	w := words[t.german]
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
// language, if it is long enough to say something.
func (t *tour) topic() string {
	for _, c := range t.read.Content {
		body := strings.TrimSpace(c.Fields["bodytext"])
		if !t.inLanguage(c) || utf8.RuneCountInString(body) < 20 {
			continue
		}
		if i := strings.IndexAny(body, ".!?"); i > 0 {
			body = body[:i+1]
		} else {
			body += "."
		}
		if utf8.RuneCountInString(body) > 90 {
			return ""
		}
		return body
	}
	return ""
}
