package typo3

import (
	"errors"
	"os/exec"
	"strings"
	"testing"
)

// The hashes below were written by PHP 8.2's password_hash (libargon2, the
// "standard" provider) on the development machine, the bcrypt ones over
// TYPO3's pre-hash base64_encode(hash('sha384', $password, true)) exactly as
// BcryptPasswordHash::getHashedPassword does. The argon2 known-answer vectors
// with the salt "somesalt" come from the reference implementation's test
// suite (phc-winner-argon2 src/test.c, version 19); PHP verifies them too.
var phpHashes = []struct {
	name, password, hash string
}{
	{"argon2i", "admin-demo-pass", "$argon2i$v=19$m=1024,t=2,p=1$Q0ZGTnQ2ejU5Znd6TVJRWQ$tyVtP1l4HGkxk6Yeoaab/1fhssQyERm82x6A+57xwIM"},
	{"argon2id", "admin-demo-pass", "$argon2id$v=19$m=1024,t=2,p=1$eWtlM1ppbXhaRWFTRy56Lg$4B7DLwPr5Dh2oKDvxepMwV/0RRR4QFiDMIShtc8yAG4"},
	{"bcrypt", "admin-demo-pass", "$2y$10$DcdSQ25NwE4gWsZFjEOFB.M6KrovWkQg9LI0shTo5FfmFCbE3LhzK"},
	{"argon2i with a NUL byte", "pass\x00word", "$argon2i$v=19$m=1024,t=2,p=1$RXZrS2p5T2h0VDBTNTdlaw$9rRPLSOb8XNLZDb+VBY34xuu3nYabRLaEoc9LScBFi0"},
	{"argon2id with a NUL byte", "pass\x00word", "$argon2id$v=19$m=1024,t=2,p=1$U0VlNnlmbHVHQ3NMNjdJRQ$NN2RDI6fJjxPb2R7Poz+NOLGWgzoqo1BEKzvvz/eHak"},
	{"bcrypt with a NUL byte", "pass\x00word", "$2y$10$YsMQzW3JQiCLqxYXw3XaXecwkBJoJ2Fy7WAJQEzYbSLmJuAZfcpJy"},
	{"argon2i over 72 bytes", strings.Repeat("a", 72) + "one", "$argon2i$v=19$m=1024,t=2,p=1$L3ZwalhEUy5PLkhhMEpmUA$wb39hoR2BHfOliskVDErPRNdrW3poruTy+mcKOmWeV0"},
	{"argon2id over 72 bytes", strings.Repeat("a", 72) + "one", "$argon2id$v=19$m=1024,t=2,p=1$clNvVVkvN1VSdDZVLlJldg$6/irS/sGXNHH35/9rjmdmBI6FBv37Xr1Qzt+hOrQEZs"},
	{"bcrypt over 72 bytes", strings.Repeat("a", 72) + "one", "$2y$10$A8aXLHcGhWvjn9l4d783w.g3f5R9xlt578D5GvPHJSlo0DWC8zz2O"},
	{"argon2i of UTF-8", "Grüße, Ölmühle! €", "$argon2i$v=19$m=1024,t=2,p=1$TFRCTE5UNnU3QWVXZDQ0Mg$h9QDuUqcj9eQSO1EXmJ2cCwF7OZ1ZeHgA2Mxw9ARUoU"},
	{"argon2id of UTF-8", "Grüße, Ölmühle! €", "$argon2id$v=19$m=1024,t=2,p=1$MmpncTlKSDhIUmFyQ3BCNg$QZHdVTnl0dj7RV+XIUITczXDOEOFWyqDhtbHBInnBaE"},
	{"bcrypt of UTF-8", "Grüße, Ölmühle! €", "$2y$10$mqI8OFvTNOb0/zVvywPYM.NAvLe6Krj3zlTn7tALlSNHDVnZOIxLO"},
	{"argon2id with two lanes", "password", "$argon2id$v=19$m=1024,t=2,p=2$MHhBMXUubTg5Q01FZE9qdA$pMSRukmY0Che+dItQhBfGaIVkbJtMIakEQ6xkdB9Q+8"},
	{"reference argon2i, one lane", "password", "$argon2i$v=19$m=256,t=2,p=1$c29tZXNhbHQ$iekCn0Y3spW+sCcFanM2xBT63UP2sghkUoHLIUpWRS8"},
	{"reference argon2i, two lanes", "password", "$argon2i$v=19$m=256,t=2,p=2$c29tZXNhbHQ$T/XOJ2mh1/TIpJHfCdQan76Q5esCFVoT5MAeIM1Oq2E"},
	{"reference argon2id, one lane", "password", "$argon2id$v=19$m=256,t=2,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4"},
	{"reference argon2id, two lanes", "password", "$argon2id$v=19$m=256,t=2,p=2$c29tZXNhbHQ$bQk8UB/VmZZF4Oo79iDXuL5/0ttZwg2f/5U52iv1cDc"},
}

func TestVerifyPasswordAcceptsHashesWrittenByPHPAndTYPO3(t *testing.T) {
	t.Parallel()
	for _, c := range phpHashes {
		ok, err := VerifyPassword(c.hash, c.password)
		if err != nil || !ok {
			t.Errorf("VerifyPassword(%s, right password) = %v, %v, want true, nil", c.name, ok, err)
		}
	}
}

// TYPO3 13 hashes with 64 MiB and 16 passes; one such hash is checked (it
// takes about a second on a loaded machine).
func TestVerifyPasswordAcceptsArgon2iOfTYPO3sDefaultCost(t *testing.T) {
	t.Parallel()
	const hash = "$argon2i$v=19$m=65536,t=16,p=1$ZVd3SFpWTmtMYmN5TzFueQ$wro8tkfM8YCY6NM6reu+psWNTroNJlogIZ1dahq6pzI"
	if ok, err := VerifyPassword(hash, "admin-demo-pass"); !ok || err != nil {
		t.Errorf("VerifyPassword(TYPO3 default argon2i, right password) = %v, %v, want true, nil", ok, err)
	}
}

func TestVerifyPasswordRefusesAWrongPassword(t *testing.T) {
	t.Parallel()
	for _, c := range phpHashes {
		for _, wrong := range []string{c.password + "INVALID", strings.ToUpper(c.password), ""} {
			if wrong == c.password {
				continue
			}
			ok, err := VerifyPassword(c.hash, wrong)
			if err != nil || ok {
				t.Errorf("VerifyPassword(%s, %q) = %v, %v, want false, nil", c.name, wrong, ok, err)
			}
		}
	}
}

// Bcrypt alone stops at a NUL byte and after 72 bytes; TYPO3's pre-hash does
// not, so passwords that differ only there must not verify each other.
func TestVerifyPasswordBcryptDoesNotTruncateAtNULOrAfter72Bytes(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ hash, other string }{
		{"$2y$10$YsMQzW3JQiCLqxYXw3XaXecwkBJoJ2Fy7WAJQEzYbSLmJuAZfcpJy", "pass\x00phrase"},
		{"$2y$10$A8aXLHcGhWvjn9l4d783w.g3f5R9xlt578D5GvPHJSlo0DWC8zz2O", strings.Repeat("a", 72) + "two"},
	} {
		if ok, err := VerifyPassword(c.hash, c.other); ok || err != nil {
			t.Errorf("VerifyPassword(bcrypt, %q) = %v, %v, want false, nil", c.other, ok, err)
		}
	}
}

// A plain bcrypt of the password (what a non-TYPO3 application writes) is not
// what TYPO3 stores under $2y$, and must not verify.
func TestVerifyPasswordBcryptNeedsTYPO3sPrehash(t *testing.T) {
	t.Parallel()
	// PHP: password_hash('admin-demo-pass', PASSWORD_BCRYPT, ['cost' => 10]), no pre-hash.
	const plain = "$2y$10$7caJRBkGFEBQ3J3XvhNjVuo.9bFqtPwhFVZW0zKXiv.2T7yToPuUe"
	ok, err := VerifyPassword(plain, "admin-demo-pass")
	if ok || err != nil {
		t.Errorf("VerifyPassword(bcrypt without pre-hash) = %v, %v, want false, nil", ok, err)
	}
}

func TestVerifyPasswordRefusesOtherKindsNamingTheKind(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		hash string
		kind HashKind
		says string
	}{
		{"$P$C6RmB5q1GJ3mGhNDbnCgXBpgFZ4XxD/", HashPhpass, "phpass"},
		{"$1$GNu9HdMt$RwkPb28pce4nXZfnplVZY/", HashMD5Crypt, "md5"},
		{"$2a$07$Rvtl6CyMhR8GZGhHypjwOuydeN0nKFAlgo1LmmGrLowtIrtkov5Na", HashBlowfish, "blowfish"},
		{"$pbkdf2-sha256$25000$14ZL8gx3OTWxSR2mQsUeSQ$ixbRzI7HJ8RaDiC4nsqbQ4yw9dRQ9qwTMzMVcVPXLHk", HashPBKDF2, "pbkdf2"},
		{"5f4dcc3b5aa765d61d8327deb882cf99", HashMD5, "md5"},
		{"M$P$C6RmB5q1GJ3mGhNDbnCgXBpgFZ4XxD/", HashMigrated, "saltedpasswords"},
		{"geheim123", HashUnknown, "plain"},
		{"", HashEmpty, "empty"},
		{"$argon2i$m=65536,t=2,p=1$c29tZXNhbHQAAAAAAAAAAA$HH7u+eDpabMCRyL8hkocqfbKINpz+b8/FzGIG+riA54", HashArgon2i, "version 16"},
		{"$argon2id$v=19$m=4194304,t=2,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4", HashArgon2id, "beyond Waymark's limit"},
		{"$argon2i$v=19$m=1024,t=100000,p=1$c29tZXNhbHQ$nf65EOgLrQMR/uIPnA4rEsF5h7TKyQwu9U1bMCHGi/4", HashArgon2i, "beyond Waymark's limit"},
	} {
		ok, err := VerifyPassword(c.hash, "password")
		var he *HashError
		if ok || !errors.Is(err, ErrUnsupportedHash) || !errors.As(err, &he) || he.Kind != c.kind {
			t.Errorf("VerifyPassword(%q) = %v, %v, want ErrUnsupportedHash of kind %q", c.hash, ok, err, c.kind)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, c.says) || strings.Contains(msg, "\n") {
			t.Errorf("VerifyPassword(%q) error %q, want one line naming %q", c.hash, msg, c.says)
		}
		if c.hash != "" && strings.Contains(err.Error(), c.hash) {
			t.Errorf("VerifyPassword(%q) error %q shows the hash", c.hash, err)
		}
	}
}

func TestVerifyPasswordReportsMalformedHashes(t *testing.T) {
	t.Parallel()
	for _, hash := range []string{
		"$argon2i$",
		"$argon2i$v=19$m=1024,t=2,p=1$c29tZXNhbHQ",
		"$argon2i$v=19$m=1024,t=2$c29tZXNhbHQ$iekCn0Y3spW+sCcFanM2xBT63UP2sghkUoHLIUpWRS8",
		"$argon2id$v=19$m=0,t=2,p=1$c29tZXNhbHQ$iekCn0Y3spW+sCcFanM2xBT63UP2sghkUoHLIUpWRS8",
		"$argon2id$v=19$t=2,m=256,p=1$c29tZXNhbHQ$iekCn0Y3spW+sCcFanM2xBT63UP2sghkUoHLIUpWRS8",
		"$argon2i$v=19$m=256,t=2,p=1$!!!$iekCn0Y3spW+sCcFanM2xBT63UP2sghkUoHLIUpWRS8",
		"$argon2i$v=19$m=256,t=2,p=1$c29tZXNhbHQ$",
		"$2y$10$short",
	} {
		ok, err := VerifyPassword(hash, "password")
		if ok || !errors.Is(err, ErrMalformedHash) {
			t.Errorf("VerifyPassword(%q) = %v, %v, want ErrMalformedHash", hash, ok, err)
		}
	}
}

func TestHashArgon2iPasswordWritesWhatVerifyPasswordAccepts(t *testing.T) {
	t.Parallel()
	p := Argon2Params{Memory: 1024, Time: 2, Threads: 1}
	a, err := HashArgon2iPassword("erika-demo-pass", p)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := HashArgon2iPassword("erika-demo-pass", p)
	if a == b {
		t.Errorf("two hashes of one password are equal (%s): the salt does not change", a)
	}
	if !strings.HasPrefix(a, "$argon2i$v=19$m=1024,t=2,p=1$") || len(a) != len("$argon2i$v=19$m=1024,t=2,p=1$")+22+1+43 {
		t.Errorf("hash %q is not PHP's form (16-byte salt, 32-byte key, unpadded base64)", a)
	}
	if ok, err := VerifyPassword(a, "erika-demo-pass"); !ok || err != nil {
		t.Errorf("VerifyPassword(own hash, right) = %v, %v", ok, err)
	}
	if ok, _ := VerifyPassword(a, "erika-demo-pas"); ok {
		t.Error("VerifyPassword(own hash, wrong) = true")
	}
	if _, err := HashArgon2iPassword("", p); err == nil {
		t.Error("HashArgon2iPassword(empty) succeeded")
	}
}

// PHP's password_verify is what TYPO3 calls; when PHP is installed, it must
// accept the hashes Waymark writes for the demo database.
func TestHashArgon2iPasswordIsAcceptedByPHP(t *testing.T) {
	php, err := exec.LookPath("php")
	if err != nil {
		t.Skip("php is not installed: the hashes above, written by PHP, stand in for this check")
	}
	hash, err := HashArgon2iPassword("paula-demo-pass", Argon2Params{Memory: 1024, Time: 2, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(php, "-r", `echo password_verify($argv[1], $argv[2]) ? "yes" : "no", password_verify($argv[1]."x", $argv[2]) ? "yes" : "no";`, "paula-demo-pass", hash).CombinedOutput()
	if err != nil {
		t.Fatalf("php: %v: %s", err, out)
	}
	if string(out) != "yesno" {
		t.Errorf("PHP password_verify(right, wrong) of %s = %q, want yesno", hash, out)
	}
}
