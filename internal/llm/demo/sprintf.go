package demo

import "fmt"

func sprintf(format string, a, b string) string { return fmt.Sprintf(format, a, b) }
