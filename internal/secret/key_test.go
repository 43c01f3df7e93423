package secret

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadKeyGeneratesFileOnceAndReusesIt(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "data", "nested")
	first, err := LoadKey(dir, "")
	if err != nil {
		t.Fatalf("LoadKey (generate): %v", err)
	}
	if len(first) != KeySize || bytes.Equal(first, make([]byte, KeySize)) {
		t.Fatalf("generated key = %x, want %d random bytes", first, KeySize)
	}
	fi, err := os.Stat(filepath.Join(dir, KeyFile))
	if err != nil {
		t.Fatalf("key file: %v", err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("key file mode = %o, want 600", perm)
	}
	di, _ := os.Stat(dir)
	if perm := di.Mode().Perm(); perm != 0o700 {
		t.Errorf("data directory mode = %o, want 700", perm)
	}
	second, err := LoadKey(dir, "")
	if err != nil {
		t.Fatalf("LoadKey (reuse): %v", err)
	}
	if !bytes.Equal(first, second) {
		t.Errorf("second LoadKey gave another key: a restart could not open what was sealed")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("data directory holds %d entries, want only %s", len(entries), KeyFile)
	}
}

func TestLoadKeyFromEnvironment(t *testing.T) {
	t.Parallel()
	want := bytes.Repeat([]byte{0xab}, KeySize)
	dir := t.TempDir()
	for _, env := range []string{
		base64.StdEncoding.EncodeToString(want),
		base64.RawURLEncoding.EncodeToString(want),
		hex.EncodeToString(want),
		" " + hex.EncodeToString(want) + "\n",
	} {
		got, err := LoadKey(dir, env)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("LoadKey(env %q) = %x, %v, want %x", env, got, err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, KeyFile)); !os.IsNotExist(err) {
		t.Errorf("a key from the environment wrote %s (stat: %v)", KeyFile, err)
	}
}

func TestLoadKeyRejectsBadEnvironmentKey(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, env := range []string{
		"correct-horse-battery-staple",
		base64.StdEncoding.EncodeToString(make([]byte, 16)), // too short
		hex.EncodeToString(make([]byte, 31)),
		strings.Repeat("zz", KeySize), // 64 characters, not hex
	} {
		key, err := LoadKey(dir, env)
		if err == nil {
			t.Errorf("LoadKey(env %q) = %x, want an error", env, key)
			continue
		}
		if !strings.Contains(err.Error(), EnvKey) || !strings.Contains(err.Error(), "base64") {
			t.Errorf("LoadKey(env %q) error %q should name %s and the expected format", env, err, EnvKey)
		}
		if strings.Contains(err.Error(), env) {
			t.Errorf("LoadKey error %q repeats the key", err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a rejected key left %d files in the data directory", len(entries))
	}
}

func TestLoadKeyRejectsCorruptKeyFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, KeyFile)
	if err := os.WriteFile(path, []byte("garbage\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKey(dir, ""); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("LoadKey with a corrupt key file: error %v, want one naming %s", err, path)
	}
	if data, _ := os.ReadFile(path); string(data) != "garbage\n" {
		t.Errorf("corrupt key file was replaced with %q: values sealed with it would be lost", data)
	}
}

func TestLoadKeyNeedsEnvironmentOrDataDirectory(t *testing.T) {
	t.Parallel()
	if _, err := LoadKey("", ""); err == nil || !strings.Contains(err.Error(), EnvKey) {
		t.Errorf("LoadKey(\"\", \"\") error = %v, want one naming %s", err, EnvKey)
	}
}
