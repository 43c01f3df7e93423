//go:build tools

// Package deps pins modules the later packages use, so go mod tidy keeps them
// while those packages are being written. Remove an import once a package uses it.
package deps

import (
	_ "github.com/openai/openai-go/v3"
	_ "github.com/riverqueue/river"
	_ "github.com/riverqueue/river/riverdriver/riverdatabasesql"
	_ "github.com/riverqueue/river/riverdriver/riverpgxv5"
	_ "github.com/riverqueue/river/riverdriver/riversqlite"
	_ "github.com/santhosh-tekuri/jsonschema/v6"
	_ "github.com/prometheus/client_golang/prometheus"
	_ "github.com/prometheus/client_golang/prometheus/promhttp"
	_ "golang.org/x/crypto/bcrypt"
	_ "go.yaml.in/yaml/v3"
	_ "github.com/google/uuid"
)
