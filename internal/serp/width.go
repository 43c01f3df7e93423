package serp

import (
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// The fonts of a results page: titles in Arial 20 px, descriptions and the
// breadcrumb in Arial 14 px (Google's desktop and mobile results, 2024–2026).
const (
	TitleFontPx       = 20
	DescriptionFontPx = 14
)

// advance is the advance width of a character in Arial, in 1/1000 em.
//
// The table is the Adobe Font Metrics (AFM) of Helvetica (Core 14 fonts,
// Helvetica.afm, "WX" values): Arial was drawn metric-compatible with
// Helvetica, so every character of this table has the same width in both.
// Accented Latin letters (ä, é, ñ …) are not listed: they take the width of
// their base letter (an approximation exact for Arial's Latin-1 letters),
// see charUnits. A character the table does not know counts as a digit's
// width (556), a wide East Asian one as 1000.
var advance = map[rune]int{
	' ': 278, '!': 278, '"': 355, '#': 556, '$': 556, '%': 889, '&': 667, '\'': 191,
	'(': 333, ')': 333, '*': 389, '+': 584, ',': 278, '-': 333, '.': 278, '/': 278,
	'0': 556, '1': 556, '2': 556, '3': 556, '4': 556, '5': 556, '6': 556, '7': 556, '8': 556, '9': 556,
	':': 278, ';': 278, '<': 584, '=': 584, '>': 584, '?': 556, '@': 1015,
	'A': 667, 'B': 667, 'C': 722, 'D': 722, 'E': 667, 'F': 611, 'G': 778, 'H': 722, 'I': 278,
	'J': 500, 'K': 667, 'L': 556, 'M': 833, 'N': 722, 'O': 778, 'P': 667, 'Q': 778, 'R': 722,
	'S': 667, 'T': 611, 'U': 722, 'V': 667, 'W': 944, 'X': 667, 'Y': 667, 'Z': 611,
	'[': 278, '\\': 278, ']': 278, '^': 469, '_': 556, '`': 333,
	'a': 556, 'b': 556, 'c': 500, 'd': 556, 'e': 556, 'f': 278, 'g': 556, 'h': 556, 'i': 222,
	'j': 222, 'k': 500, 'l': 222, 'm': 833, 'n': 556, 'o': 556, 'p': 556, 'q': 556, 'r': 333,
	's': 500, 't': 278, 'u': 556, 'v': 500, 'w': 722, 'x': 500, 'y': 500, 'z': 500,
	'{': 334, '|': 260, '}': 334, '~': 584,
	// Latin-1 and typographic characters of German and English text.
	'ß': 611, 'Æ': 1000, 'æ': 889, 'Ø': 778, 'ø': 611, 'Œ': 1000, 'œ': 944,
	'«': 556, '»': 556, '§': 556, '°': 400, '€': 556, '£': 556, '©': 737, '®': 737, '™': 1000,
	'…': 1000, '–': 556, '—': 1000, '‘': 222, '’': 222, '‚': 222, '“': 333, '”': 333, '„': 333,
	'•': 350, '·': 278, '›': 333, '‹': 333, '\u00a0': 278,
}

// charUnits is the width of r in 1/1000 em.
func charUnits(r rune) int {
	if w, ok := advance[r]; ok {
		return w
	}
	// An accented letter: the width of its base letter (NFD's first rune).
	if d := norm.NFD.String(string(r)); len([]rune(d)) > 1 {
		if w, ok := advance[[]rune(d)[0]]; ok {
			return w
		}
	}
	switch {
	case unicode.Is(unicode.Mn, r) || r == '\u200b' || r == '\u00ad':
		return 0 // combining marks, zero-width space, soft hyphen
	case unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul):
		return 1000
	}
	return 556
}

// Width is the width of s in pixels, set in Arial at px pixels.
func Width(s string, px float64) float64 {
	units := 0
	for _, r := range s {
		units += charUnits(r)
	}
	return float64(units) * px / 1000
}
