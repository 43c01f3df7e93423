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

// ErrNoKey is returned by Find when WAYMARK_SECRET_KEY is not set and the
// data directory holds no key file.
var ErrNoKey = errors.New("no secret key")

// Load finds the key. env is the value of WAYMARK_SECRET_KEY: when it is
// set it must be 32 bytes as base64 or hex, and the data directory is not
// touched. Otherwise the key is read from dataDir/secret.key; when that file
// does not exist, a random key is generated and written there with mode 0600
// (the directory is created with mode 0700), so every later start reads the
// same key. Two processes starting at once agree on one file. The data
// directory is made absolute, so Source never depends on the working
// directory of a later reader of the message. A caller that must not
// generate a key for a database that already holds sealed values calls
// Find and Generate instead.
func Load(dataDir string, env string) (Key, error) {
	k, err := Find(dataDir, env)
	if errors.Is(err, ErrNoKey) {
		return Generate(dataDir)
	}
	return k, err
}

// Find is Load without generating: it fails with ErrNoKey when env is empty
// and dataDir holds no key file, and writes nothing.
func Find(dataDir string, env string) (Key, error) {
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
	path := KeyPath(dataDir)
	key, err := readKeyFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Key{Source: path}, fmt.Errorf("%w: neither %s set nor a file %s", ErrNoKey, EnvKey, path)
	}
	return Key{Bytes: key, Source: path}, err
}

// KeyPath is the absolute path of the key file of dataDir.
func KeyPath(dataDir string) string {
	if abs, err := filepath.Abs(dataDir); err == nil {
		dataDir = abs
	}
	return filepath.Join(dataDir, KeyFile)
}

// Generate writes a new random key to dataDir/secret.key (see Load); when
// another process was first, its key is returned.
func Generate(dataDir string) (Key, error) {
	key := make([]byte, KeySize)
	if _, err := rand.Read(key); err != nil {
		return Key{}, fmt.Errorf("secret key: generate: %w", err)
	}
	path, err := Write(dataDir, key)
	if errors.Is(err, fs.ErrExist) { // another process was first: use its key
		key, err := readKeyFile(path)
		return Key{Bytes: key, Source: path}, err
	}
	if err != nil {
		return Key{}, err
	}
	return Key{Bytes: key, Source: path, Generated: true}, nil
}

// Write stores key as dataDir/secret.key with mode 0600, creating dataDir
// with mode 0700, and returns the file's path. It never replaces an
// existing file (the error then wraps fs.ErrExist): the values sealed with
// that key would no longer open.
func Write(dataDir string, key []byte) (string, error) {
	if len(key) != KeySize {
		return "", fmt.Errorf("secret key: want %d bytes, got %d", KeySize, len(key))
	}
	path := KeyPath(dataDir)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return path, fmt.Errorf("secret key: create data directory: %w", err)
	}
	return path, writeKeyFile(path, key)
}

// Encode is the text of a key file holding key.
func Encode(key []byte) string { return base64.StdEncoding.EncodeToString(key) + "\n" }

// Parse reads the text of a key file (or of WAYMARK_SECRET_KEY).
func Parse(text string) ([]byte, error) { return parseKey(strings.TrimSpace(text)) }

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
		_, werr = f.WriteString(Encode(key))
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
