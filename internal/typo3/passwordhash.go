package typo3

import (
	"crypto/rand"
	"encoding/base64"
	"fmt"

	"golang.org/x/crypto/argon2"
)

// Argon2Params are the cost parameters of a new Argon2 hash.
type Argon2Params struct {
	Memory  uint32 // KiB
	Time    uint32
	Threads uint8
}

// TYPO3Argon2 are the parameters TYPO3 13 hashes backend passwords with
// (its AbstractArgon2PasswordHash defaults: 64 MiB, 16 passes, one thread).
var TYPO3Argon2 = Argon2Params{Memory: 65536, Time: 16, Threads: 1}

// HashArgon2iPassword hashes password as PHP's password_hash(…, PASSWORD_ARGON2I)
// does: a random 16-byte salt, a 32-byte key, version 19, written as a PHC
// string. TYPO3 verifies the result like one of its own; the demo database
// stores its users' passwords this way.
func HashArgon2iPassword(password string, p Argon2Params) (string, error) {
	if password == "" {
		return "", fmt.Errorf("hash password: the password is empty")
	}
	if p.Memory < 8*uint32(p.Threads) || p.Time == 0 || p.Threads == 0 {
		return "", fmt.Errorf("hash password: argon2 parameters m=%d,t=%d,p=%d are out of range", p.Memory, p.Time, p.Threads)
	}
	salt := make([]byte, 16)
	if _, err := rand.Read(salt); err != nil {
		return "", fmt.Errorf("hash password: salt: %w", err)
	}
	key := argon2.Key([]byte(password), salt, p.Time, p.Memory, p.Threads, 32)
	return fmt.Sprintf("$argon2i$v=19$m=%d,t=%d,p=%d$%s$%s", p.Memory, p.Time, p.Threads,
		base64.RawStdEncoding.EncodeToString(salt), base64.RawStdEncoding.EncodeToString(key)), nil
}
