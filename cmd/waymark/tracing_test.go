package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An OTEL_* setting Waymark cannot honour is a usage error
// naming the variable, before anything is opened: the database file is not
// even created.
func TestServeAndWorkerRefuseATracesExporterTheyDoNotHave(t *testing.T) {
	for _, c := range []struct{ key, value string }{
		{"OTEL_TRACES_EXPORTER", "zipkin"},
		{"OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"},
	} {
		for _, cmd := range []string{"serve", "worker"} {
			t.Run(cmd+" "+c.key, func(t *testing.T) {
				file := filepath.Join(t.TempDir(), "w.db")
				t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
				t.Setenv(c.key, c.value)
				code, _, stderr := cli(t, cmd, "--db", "sqlite:"+file)
				if code != 2 || !strings.Contains(stderr, c.key+"=") {
					t.Errorf("%s with %s=%s = %d %q, want a usage error naming it", cmd, c.key, c.value, code, stderr)
				}
				if _, err := os.Stat(file); !os.IsNotExist(err) {
					t.Errorf("%s opened the database before refusing: %v", cmd, err)
				}
			})
		}
	}
}
