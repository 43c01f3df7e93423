package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"time"
)

// The backup archive is a gzip-compressed tar file holding, in this order,
// manifest.json, the database copy and — unless the database holds nothing
// sealed and no key was found — the secret key, so that one file restores
// an installation.
const (
	archiveFormat   = "waymark-backup/1"
	archiveManifest = "manifest.json"
	archiveDB       = "waymark.db"
	archiveKey      = "secret.key"
)

// manifest describes an archive; restore checks every member against it.
type manifest struct {
	Format  string           `json:"format"`
	Waymark string           `json:"waymark"` // the version of the waymark that made it
	Dialect string           `json:"dialect"`
	Schema  int64            `json:"schema"` // the copy's schema version
	Created time.Time        `json:"created"`
	Files   map[string]entry `json:"files"`
}

// entry is one member's size and SHA-256.
type entry struct {
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// errDamaged marks an archive that is not one backup made, or was cut or
// changed since.
var errDamaged = errors.New("is not a complete waymark backup")

// writeArchive writes the archive of the database copy at dbPath and key
// (nil: none) to w.
func writeArchive(w io.Writer, m manifest, dbPath string, key []byte) error {
	f, err := os.Open(dbPath)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return err
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return err
	}
	m.Files = map[string]entry{archiveDB: {Size: st.Size(), SHA256: hex.EncodeToString(h.Sum(nil))}}
	if key != nil {
		sum := sha256.Sum256(key)
		m.Files[archiveKey] = entry{Size: int64(len(key)), SHA256: hex.EncodeToString(sum[:])}
	}
	man, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	gz := gzip.NewWriter(w)
	tw := tar.NewWriter(gz)
	put := func(name string, size int64, r io.Reader) error {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o600, Size: size, ModTime: m.Created, Typeflag: tar.TypeReg}); err != nil {
			return err
		}
		_, err := io.Copy(tw, r)
		return err
	}
	if err := put(archiveManifest, int64(len(man)), bytes.NewReader(man)); err != nil {
		return err
	}
	if err := put(archiveDB, st.Size(), f); err != nil {
		return err
	}
	if key != nil {
		if err := put(archiveKey, int64(len(key)), bytes.NewReader(key)); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return gz.Close()
}

// readArchive reads the archive r: its manifest, the database copy, written
// to the new file dbPath, and the key (nil when it holds none). Every member
// is checked against the manifest's size and SHA-256; any difference, or a
// member too many or missing, fails with errDamaged.
func readArchive(r io.Reader, dbPath string) (m manifest, key []byte, err error) {
	gz, err := gzip.NewReader(r)
	if err != nil {
		return m, nil, fmt.Errorf("%w (%v)", errDamaged, err)
	}
	tr := tar.NewReader(gz)
	hdr, err := tr.Next()
	if err != nil || hdr.Name != archiveManifest || hdr.Size > 1<<20 {
		return m, nil, fmt.Errorf("%w (no manifest first)", errDamaged)
	}
	if err := json.NewDecoder(tr).Decode(&m); err != nil || m.Format != archiveFormat {
		return m, nil, fmt.Errorf("%w (manifest of format %q; want %s)", errDamaged, m.Format, archiveFormat)
	}
	seen := map[string]bool{}
	for {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return m, nil, fmt.Errorf("%w (%v)", errDamaged, err)
		}
		want, ok := m.Files[hdr.Name]
		if !ok || seen[hdr.Name] {
			return m, nil, fmt.Errorf("%w (unexpected member %q)", errDamaged, hdr.Name)
		}
		seen[hdr.Name] = true
		h := sha256.New()
		var n int64
		switch hdr.Name {
		case archiveDB:
			f, err := os.OpenFile(dbPath, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
			if err != nil {
				return m, nil, err
			}
			n, err = io.Copy(io.MultiWriter(f, h), tr)
			if err == nil {
				err = f.Sync()
			}
			if err := errors.Join(err, f.Close()); err != nil {
				return m, nil, fmt.Errorf("%w (%v)", errDamaged, err)
			}
		case archiveKey:
			if key, err = io.ReadAll(io.LimitReader(tr, 1<<10)); err != nil {
				return m, nil, fmt.Errorf("%w (%v)", errDamaged, err)
			}
			h.Write(key)
			n = int64(len(key))
		}
		if n != want.Size || hex.EncodeToString(h.Sum(nil)) != want.SHA256 {
			return m, nil, fmt.Errorf("%w (%s differs from its manifest)", errDamaged, hdr.Name)
		}
	}
	// Reading to the end of the gzip stream checks its CRC and length.
	if _, err := io.Copy(io.Discard, gz); err != nil {
		return m, nil, fmt.Errorf("%w (%v)", errDamaged, err)
	}
	for name := range m.Files {
		if !seen[name] {
			return m, nil, fmt.Errorf("%w (%s missing)", errDamaged, name)
		}
	}
	if !seen[archiveDB] {
		return m, nil, fmt.Errorf("%w (no database)", errDamaged)
	}
	return m, key, nil
}
