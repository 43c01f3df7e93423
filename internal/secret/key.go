package secret

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// EnvKey names the environment variable that holds the key.
const EnvKey = "WAYMARK_SECRET_KEY"

// KeyFile is the name of the generated key file inside the data directory.
const KeyFile = "secret.key"

// Key is a loaded key and where it came from.
type Key struct {
	Bytes     []byte
	Source    string // EnvKey, or the absolute path of the key file
	Generated bool   // the file did not exist and was created now
}

// LoadKey is Load returning only the key's bytes.
func LoadKey(dataDir string, env string) ([]byte, error) {
	k, err := Load(dataDir, env)
	return k.Bytes, err
}

// Load finds the key. env is the value of WAYMARK_SECRET_KEY: when it is
// set it must be 32 bytes as base64 or hex, and the data directory is not
// touched. Otherwise the key is read from dataDir/secret.key; when that file
// does not exist, a random key is generated and written there with mode 0600
// (the directory is created with mode 0700), so every later start reads the
// same key. Two processes starting at once agree on one file. The data
// directory is made absolute, so Source never depends on the working
// directory of a later reader of the message.
func Load(dataDir string, env string) (Key, error) {
	if env = strings.TrimSpace(env); env != "" {
		key, err := parseKey(env)
		if err != nil {
			return Key{}, fmt.Errorf("%s: %w", EnvKey, err)
		}
		return Key{Bytes: key, Source: EnvKey}, nil
	}
	if dataDir == "" {
		return Key{}, fmt.Errorf("secret key: set %s or give --data-dir (WAYMARK_DATA_DIR) for its file: on PostgreSQL there is no database file to keep it beside", EnvKey)
	}
	if abs, err := filepath.Abs(dataDir); err == nil {
		dataDir = abs
	}
	path := filepath.Join(dataDir, KeyFile)
	key, err := readKeyFile(path)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return Key{Bytes: key, Source: path}, err
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return Key{}, fmt.Errorf("secret key: create data directory: %w", err)
	}
	key = make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return Key{}, fmt.Errorf("secret key: generate: %w", err)
	}
	if err := writeKeyFile(path, key); err != nil {
		if errors.Is(err, fs.ErrExist) { // another process was first: use its key
			key, err := readKeyFile(path)
			return Key{Bytes: key, Source: path}, err
		}
		return Key{}, err
	}
	return Key{Bytes: key, Source: path, Generated: true}, nil
}

func readKeyFile(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("secret key file: %w", err)
	}
	key, err := parseKey(strings.TrimSpace(string(data)))
	if err != nil {
		return nil, fmt.Errorf("secret key file %s: %w", path, err)
	}
	return key, nil
}

// writeKeyFile writes the key to a temporary file and links it to path, so
// path appears complete or not at all, and an existing file is never
// replaced: the values sealed with it would no longer open.
func writeKeyFile(path string, key []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), ".secret-*.tmp")
	if err != nil {
		return fmt.Errorf("secret key file: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	werr := f.Chmod(0o600)
	if werr == nil {
		_, werr = f.WriteString(base64.StdEncoding.EncodeToString(key) + "\n")
	}
	if werr == nil {
		werr = f.Sync()
	}
	if err := errors.Join(werr, f.Close()); err != nil {
		return fmt.Errorf("secret key file %s: %w", path, err)
	}
	if err := os.Link(tmp, path); err != nil {
		return fmt.Errorf("secret key file: %w", err)
	}
	return nil
}

// parseKey accepts 32 bytes as hex (64 characters) or base64 (standard or
// URL alphabet, padded or not). The error never repeats the value.
func parseKey(s string) ([]byte, error) {
	if len(s) == 2*KeySize {
		if key, err := hex.DecodeString(s); err == nil {
			return key, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if key, err := enc.DecodeString(s); err == nil && len(key) == KeySize {
			return key, nil
		}
	}
	return nil, fmt.Errorf("want %d bytes as base64 (44 characters) or hex (64 characters), got %d characters that are neither",
		KeySize, len(s))
}
