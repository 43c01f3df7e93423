package skill

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"strconv"
	"strings"
)

// digestHeader opens serialisation format 1; see Version.Digest.
const digestHeader = "waymark-skill-version:1\n"

// digestPrefix marks a digest of format 1.
const digestPrefix = "v1:"

// Digest names this exact version (ADR-214 item 1): "v1:" followed by the
// lowercase hex sha256 of the canonical serialisation below. Approvals,
// revocations, pins and the sync change test compare it, and it is stored,
// so format 1 must never change; a different serialisation needs a new
// header, a new prefix and a new function.
//
// Format 1 is the byte string
//
//	"waymark-skill-version:1\n"
//	"name:" N ":" <name bytes> "\n"
//	"description:" N ":" <description bytes> "\n"
//	"body:" N ":" <body bytes> "\n"
//	"support:" N ":" <support bytes> "\n"
//	"allowed-tools:null\n"                      when AllowedTools is nil, else
//	"allowed-tools:" C "\n" then per tool "tool:" N ":" <tool bytes> "\n"
//	"process:0\n" or "process:1\n"
//
// where N is the byte length of the following field and C the number of
// tools, both in decimal ASCII without leading zeros, and the tools are those
// of v.Normalized() (sorted by byte value, de-duplicated), so their order and
// repetition in the file do not matter while nil (no declaration) and an empty
// list (declared nothing) differ. Strings are hashed as they are, with no
// Unicode normalisation. Front-matter keys the Version does not hold are not
// part of it.
func (v Version) Digest() string {
	h := sha256.New()
	d := digester{h: h}
	d.raw(digestHeader)
	d.field("name", v.Name)
	d.field("description", v.Description)
	d.field("body", v.Body)
	d.field("support", v.Support)
	if v.AllowedTools == nil {
		d.raw("allowed-tools:null\n")
	} else {
		tools := v.Normalized().AllowedTools
		d.buf = append(d.buf[:0], "allowed-tools:"...)
		d.buf = strconv.AppendInt(d.buf, int64(len(tools)), 10)
		d.buf = append(d.buf, '\n')
		d.h.Write(d.buf)
		for _, t := range tools {
			d.field("tool", t)
		}
	}
	if v.Process {
		d.raw("process:1\n")
	} else {
		d.raw("process:0\n")
	}
	var sum [sha256.Size]byte
	return digestPrefix + hex.EncodeToString(h.Sum(sum[:0]))
}

// digester writes the length-prefixed fields of format 1 into h through one
// scratch buffer, so hashing a long body copies it in small chunks rather
// than allocating a copy of it.
type digester struct {
	h   hash.Hash
	buf []byte
}

// chunk is the size of the scratch buffer.
const chunk = 4096

func (d *digester) raw(s string) {
	for len(s) > 0 {
		if d.buf == nil {
			d.buf = make([]byte, 0, chunk)
		}
		n := copy(d.buf[:cap(d.buf)], s)
		d.h.Write(d.buf[:n])
		s = s[n:]
	}
}

// field writes tag ":" len(value) ":" value "\n".
func (d *digester) field(tag, value string) {
	if d.buf == nil {
		d.buf = make([]byte, 0, chunk)
	}
	d.buf = append(d.buf[:0], tag...)
	d.buf = append(d.buf, ':')
	d.buf = strconv.AppendInt(d.buf, int64(len(value)), 10)
	d.buf = append(d.buf, ':')
	d.h.Write(d.buf)
	d.raw(value)
	d.raw("\n")
}

// ParseDigest checks that s is a version digest of a known format: "v1:"
// followed by 64 lowercase hex digits.
func ParseDigest(s string) error {
	hexPart, ok := strings.CutPrefix(s, digestPrefix)
	if !ok {
		return fmt.Errorf("version digest %.80q: want the prefix %q", s, digestPrefix)
	}
	if len(hexPart) != 2*sha256.Size {
		return fmt.Errorf("version digest %.80q: want %d hex digits after %q, got %d", s, 2*sha256.Size, digestPrefix, len(hexPart))
	}
	for i := 0; i < len(hexPart); i++ {
		if c := hexPart[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return fmt.Errorf("version digest %.80q: want lowercase hex digits, got %q at position %d", s, c, len(digestPrefix)+i)
		}
	}
	return nil
}
