// Package serp draws a page as a search engine lists it: the search-result
// preview of a card that changes a page's title or description, on a
// desktop and on a phone — the title cut at about 600 px, the description
// at about 920 px (desktop) and 680 px (phone), with "…", the address as a
// breadcrumb from the site's base and the page's slug, and the page's
// language. Everything here is a pure function of its input; widths come
// from a per-character table of the font a results page uses (width.go).
package serp
