package web

import "waymark/internal/catalog"

func hasKey(k string) bool { return catalog.Has(k) }
