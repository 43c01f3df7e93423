package typo3

import (
	"crypto/sha512"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/bcrypt"
)

// HashKind names a kind of password hash found in be_users.password.
type HashKind string

// The kinds a TYPO3 database may hold. Only Argon2i, Argon2id and Bcrypt are
// verified; TYPO3 13 writes only these (its default is Argon2i), the others
// are left over from older installations and refused with ErrUnsupportedHash.
const (
	HashArgon2i  HashKind = "argon2i"
	HashArgon2id HashKind = "argon2id"
	HashBcrypt   HashKind = "bcrypt"

	HashBlowfish HashKind = "blowfish (salted $2a$ crypt of TYPO3 before 9)"
	HashMD5Crypt HashKind = "salted md5 ($1$ crypt)"
	HashPhpass   HashKind = "phpass ($P$)"
	HashPBKDF2   HashKind = "pbkdf2 ($pbkdf2-sha256$)"
	HashMD5      HashKind = "unsalted md5"
	HashMigrated HashKind = "migrated hash of the saltedpasswords extension (M$ or C$ prefix)"
	HashEmpty    HashKind = "empty (no password set)"
	HashUnknown  HashKind = "unknown or plain text"
)

// ErrUnsupportedHash is returned (wrapped in a *HashError) by VerifyPassword
// for a hash of a kind Waymark does not verify; the user cannot log in with a
// password until TYPO3 rehashes it (TYPO3 does on the next backend login).
var ErrUnsupportedHash = errors.New("unsupported password hash")

// ErrMalformedHash is returned (wrapped in a *HashError) for a hash whose
// kind is known but whose text is broken.
var ErrMalformedHash = errors.New("malformed password hash")

// HashError tells which kind of hash could not be verified and why. The hash
// itself never appears in the message.
type HashError struct {
	Kind   HashKind
	Detail string
	Err    error // ErrUnsupportedHash or ErrMalformedHash
}

func (e *HashError) Error() string {
	if e.Detail == "" {
		return fmt.Sprintf("%s: %s", e.Err, e.Kind)
	}
	return fmt.Sprintf("%s: %s: %s", e.Err, e.Kind, e.Detail)
}

func (e *HashError) Unwrap() error { return e.Err }

// LogNote is what the operator reads in the server log of a login refused
// for this hash (auth.LogNoter): the kind, never the hash.
func (e *HashError) LogNote() string {
	return fmt.Sprintf("the user's TYPO3 password hash (%s) cannot be verified by Waymark: %s; a login to TYPO3 rehashes it", e.Kind, e.Err)
}

// ClassifyHash tells the kind of a stored password hash by its form, the way
// TYPO3's PasswordHashFactory asks each hashing class in turn.
func ClassifyHash(hash string) HashKind {
	switch {
	case hash == "":
		return HashEmpty
	case strings.HasPrefix(hash, "$argon2id$"):
		return HashArgon2id
	case strings.HasPrefix(hash, "$argon2i$"):
		return HashArgon2i
	case strings.HasPrefix(hash, "$2y$"):
		return HashBcrypt
	case strings.HasPrefix(hash, "$2a$"), strings.HasPrefix(hash, "$2x$"), strings.HasPrefix(hash, "$2b$"):
		return HashBlowfish
	case strings.HasPrefix(hash, "$1$"):
		return HashMD5Crypt
	case strings.HasPrefix(hash, "$P$"), strings.HasPrefix(hash, "$H$"):
		return HashPhpass
	case strings.HasPrefix(hash, "$pbkdf2-"):
		return HashPBKDF2
	case strings.HasPrefix(hash, "M$"), strings.HasPrefix(hash, "C$"):
		return HashMigrated
	case len(hash) == 32 && isHex(hash):
		return HashMD5
	}
	return HashUnknown
}

// VerifyPassword checks password against a be_users.password value as TYPO3
// does: Argon2i and Argon2id PHC strings as PHP's password_hash writes them,
// and bcrypt over TYPO3's pre-hash (see bcryptInput). It returns (false, nil)
// for a wrong password, and an error wrapping ErrUnsupportedHash or
// ErrMalformedHash when the hash cannot be checked at all. An empty password
// never verifies.
func VerifyPassword(hash, password string) (bool, error) {
	kind := ClassifyHash(hash)
	switch kind {
	case HashArgon2i, HashArgon2id:
		return verifyArgon2(kind, hash, password)
	case HashBcrypt:
		return verifyBcrypt(hash, password)
	}
	return false, &HashError{Kind: kind, Err: ErrUnsupportedHash}
}

// The highest Argon2 cost Waymark verifies: 1 GiB and 64 passes, far above
// TYPO3's default (64 MiB, 16 passes) and any sane configuration.
const (
	maxArgon2Memory = 1 << 20 // KiB
	maxArgon2Time   = 64
)

// verifyArgon2 checks a PHC string $argon2i$v=19$m=…,t=…,p=…$salt$hash, with
// salt and hash in base64 without padding, as libargon2 (PHP's backend) writes it.
func verifyArgon2(kind HashKind, hash, password string) (bool, error) {
	bad := func(detail string) (bool, error) {
		return false, &HashError{Kind: kind, Detail: detail, Err: ErrMalformedHash}
	}
	parts := strings.Split(hash, "$")
	// "", kind, v=19, params, salt, key
	if len(parts) != 6 {
		if len(parts) == 5 && !strings.HasPrefix(parts[2], "v=") {
			return false, &HashError{Kind: kind, Detail: "version 16 (no v= field) is not supported", Err: ErrUnsupportedHash}
		}
		return bad(fmt.Sprintf("%d fields separated by $, want 5", len(parts)-1))
	}
	if parts[2] != "v=19" {
		return false, &HashError{Kind: kind, Detail: fmt.Sprintf("version %q is not supported, want v=19", parts[2]), Err: ErrUnsupportedHash}
	}
	var m, t, p uint64
	params := strings.Split(parts[3], ",")
	if len(params) != 3 {
		return bad("parameters are not m=…,t=…,p=…")
	}
	for i, want := range []struct {
		key string
		dst *uint64
		max uint64
	}{{"m", &m, 1 << 32}, {"t", &t, 1 << 32}, {"p", &p, 255}} {
		k, v, ok := strings.Cut(params[i], "=")
		if !ok || k != want.key {
			return bad(fmt.Sprintf("parameter %d is %q, want %s=…", i+1, params[i], want.key))
		}
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n == 0 || n >= want.max {
			return bad(fmt.Sprintf("parameter %s=%q is out of range", k, v))
		}
		*want.dst = n
	}
	if m < 8*p {
		return bad("memory below 8 KiB per lane")
	}
	if m > maxArgon2Memory || t > maxArgon2Time {
		// A login must not let a stored hash take the server's memory or time.
		return false, &HashError{Kind: kind, Err: ErrUnsupportedHash,
			Detail: fmt.Sprintf("cost m=%d,t=%d is beyond Waymark's limit of m=%d,t=%d", m, t, maxArgon2Memory, maxArgon2Time)}
	}
	salt, err := base64.RawStdEncoding.DecodeString(parts[4])
	if err != nil || len(salt) < 8 {
		return bad("salt is not base64 of at least 8 bytes")
	}
	key, err := base64.RawStdEncoding.DecodeString(parts[5])
	if err != nil || len(key) < 4 {
		return bad("hash is not base64 of at least 4 bytes")
	}
	if password == "" {
		return false, nil
	}
	var got []byte
	if kind == HashArgon2id {
		got = argon2.IDKey([]byte(password), salt, uint32(t), uint32(m), uint8(p), uint32(len(key)))
	} else {
		got = argon2.Key([]byte(password), salt, uint32(t), uint32(m), uint8(p), uint32(len(key)))
	}
	return subtle.ConstantTimeCompare(got, key) == 1, nil
}

// verifyBcrypt checks a $2y$ hash of TYPO3's BcryptPasswordHash, which hashes
// not the password but bcryptInput(password).
func verifyBcrypt(hash, password string) (bool, error) {
	if password == "" {
		return false, nil
	}
	err := bcrypt.CompareHashAndPassword([]byte(hash), bcryptInput(password))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, bcrypt.ErrMismatchedHashAndPassword):
		return false, nil
	}
	return false, &HashError{Kind: HashBcrypt, Detail: err.Error(), Err: ErrMalformedHash}
}

// bcryptInput is TYPO3's pre-hash before bcrypt: the base64 of the raw
// SHA-384 of the password, 64 characters, so bcrypt neither truncates after
// 72 bytes nor at a NUL byte.
func bcryptInput(password string) []byte {
	sum := sha512.Sum384([]byte(password))
	return []byte(base64.StdEncoding.EncodeToString(sum[:]))
}

func isHex(s string) bool {
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
