package demo

import (
	"strings"
	"unicode/utf8"
)

// propose writes the value of a finding; variant picks another wording.
func (t *tour) propose(f finding, variant int) string {
	title := t.read.Page.Fields["title"]
	if t.read.Translation != nil && t.read.Translation.Fields["title"] != "" {
		title = t.read.Translation.Fields["title"]
	}
	topic := t.topic()
	switch f.field {
	case "description":
		return fitRange(pick(t.german, variant, title, topic,
			[]string{
				"%[1]s at Nordlicht Digital: %[2]s Find out how we plan, build and look after websites for companies in Hamburg and the north.",
				"Everything about %[1]s at Nordlicht Digital, the web agency in Hamburg-Altona. %[2]s Talk to us about your next project.",
				"%[1]s – explained by the team of Nordlicht Digital. %[2]s Clear advice, fair prices and websites that load fast.",
			},
			[]string{
				"%[1]s bei Nordlicht Digital: %[2]s Erfahren Sie, wie wir Websites für Unternehmen in Hamburg und im Norden planen und betreuen.",
				"Alles über %[1]s bei Nordlicht Digital, der Webagentur in Hamburg-Altona. %[2]s Sprechen Sie mit uns über Ihr nächstes Projekt.",
				"%[1]s – erklärt vom Team von Nordlicht Digital. %[2]s Klare Beratung, faire Preise und Websites, die schnell laden.",
			}), 140, 160, t.german)
	case "seoTitle":
		return fitRange(pick(t.german, variant, title, topic,
			[]string{"%[1]s – Nordlicht Digital, web agency in Hamburg", "%[1]s | Websites from Hamburg – Nordlicht Digital", "Nordlicht Digital: %[1]s for companies in the north"},
			[]string{"%[1]s – Nordlicht Digital, Webagentur in Hamburg", "%[1]s | Websites aus Hamburg – Nordlicht Digital", "Nordlicht Digital: %[1]s für Unternehmen im Norden"}), 30, 60, t.german)
	default:
		header := f.record.Fields["header"]
		return pick(t.german, variant, header, topic,
			[]string{
				"%[1]s: our team of 24 plans, designs and builds websites for companies in trade, tourism and the public sector – accessible, fast and easy to maintain.",
				"Under “%[1]s” you find what drives us: websites that load fast, are easy to edit and work for every visitor. Ask us for references from your industry.",
				"%[1]s at Nordlicht Digital means one contact person from the first sketch to hosting, clear prices and a team that stays after the launch.",
			},
			[]string{
				"%[1]s: Unser Team aus 24 Menschen plant, gestaltet und baut Websites für Handel, Tourismus und öffentliche Hand – barrierefrei, schnell und leicht zu pflegen.",
				"Unter „%[1]s“ finden Sie, was uns antreibt: Websites, die schnell laden, leicht zu pflegen sind und für alle funktionieren. Fragen Sie nach Referenzen.",
				"%[1]s bei Nordlicht Digital heißt: eine Ansprechperson von der ersten Skizze bis zum Hosting, klare Preise und ein Team, das nach dem Start bleibt.",
			})
	}
}

// topic is the first sentence of the page's first text element, if any.
func (t *tour) topic() string {
	for _, c := range t.read.Content {
		body := strings.TrimSpace(c.Fields["bodytext"])
		if utf8.RuneCountInString(body) < 20 {
			continue
		}
		if i := strings.IndexAny(body, ".!?"); i > 0 {
			return body[:i+1]
		}
		return body + "."
	}
	return ""
}

func pick(german bool, variant int, a, b string, en, de []string) string {
	list := en
	if german {
		list = de
	}
	return strings.Join(strings.Fields(sprintf(list[variant%len(list)], a, b)), " ")
}

var fillers = map[bool][]string{
	false: {"Personal advice.", "Made in Hamburg.", "Since 2009.", "Fast and accessible."},
	true:  {"Persönliche Beratung.", "Aus Hamburg.", "Seit 2009.", "Schnell und barrierefrei."},
}

// fitRange pads with short sentences or trims whole words so the text lands in [min, max] runes.
func fitRange(s string, min, max int, german bool) string {
	for i := 0; utf8.RuneCountInString(s) < min && i < len(fillers[german]); i++ {
		s += " " + fillers[german][i]
	}
	for utf8.RuneCountInString(s) > max {
		i := strings.LastIndex(strings.TrimRight(s, " .,–"), " ")
		if i <= 0 {
			r := []rune(s)
			return string(r[:max])
		}
		s = strings.TrimRight(s[:i], " ,–") + "."
		if utf8.RuneCountInString(s) < min {
			for j := 0; utf8.RuneCountInString(s) < min && j < len(fillers[german]); j++ {
				cand := s + " " + fillers[german][j]
				if utf8.RuneCountInString(cand) <= max {
					s = cand
				}
			}
			return s
		}
	}
	return s
}
