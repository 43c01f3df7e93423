package bridge_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"waymark/internal/typo3/bridge"
)

// A ticket verifies only with its secret, within its at most 60 s, with
// the fields it must name; each refusal wraps ErrBadTicket.
func TestATicketVerifiesOnlyWithItsSecretWithinItsMinute(t *testing.T) {
	secret := strings.Repeat("s", 40)
	now := time.Unix(1_800_000_000, 0)
	good := bridge.Ticket{V: 1, User: 3, Username: "editor", Session: "abc", Page: 2, Language: 1,
		IssuedAt: now.Unix(), Expires: now.Unix() + 60, Nonce: strings.Repeat("0123456789abcdef", 2)}
	got, err := bridge.ParseTicket(secret, bridge.SignTicket(secret, good), now.Add(59*time.Second))
	if err != nil || got != good {
		t.Fatalf("ParseTicket = %+v, %v; want %+v", got, err, good)
	}
	with := func(f func(*bridge.Ticket)) bridge.Ticket { c := good; f(&c); return c }
	for name, c := range map[string]struct {
		ticket string
		at     time.Time
	}{
		"another secret":     {bridge.SignTicket(strings.Repeat("x", 40), good), now},
		"expired":            {bridge.SignTicket(secret, good), now.Add(61 * time.Second)},
		"lives over 60 s":    {bridge.SignTicket(secret, with(func(t *bridge.Ticket) { t.Expires = t.IssuedAt + 61 })), now},
		"issued in future":   {bridge.SignTicket(secret, good), now.Add(-10 * time.Second)},
		"unknown version":    {bridge.SignTicket(secret, with(func(t *bridge.Ticket) { t.V = 2 })), now},
		"no session":         {bridge.SignTicket(secret, with(func(t *bridge.Ticket) { t.Session = "" })), now},
		"short nonce":        {bridge.SignTicket(secret, with(func(t *bridge.Ticket) { t.Nonce = "ab" })), now},
		"no user":            {bridge.SignTicket(secret, with(func(t *bridge.Ticket) { t.User = 0 })), now},
		"payload changed":    {"eyJ2IjoxfQ." + strings.SplitN(bridge.SignTicket(secret, good), ".", 2)[1], now},
		"not a ticket":       {"garbage", now},
		"empty":              {"", now},
		"signature only hex": {strings.SplitN(bridge.SignTicket(secret, good), ".", 2)[0] + ".", now},
	} {
		if _, err := bridge.ParseTicket(secret, c.ticket, c.at); !errors.Is(err, bridge.ErrBadTicket) {
			t.Errorf("%s: ParseTicket = %v, want ErrBadTicket", name, err)
		}
	}
}

// The signature of a request is the contract's: HMAC-SHA256 over method,
// path, time, nonce and the body's SHA-256 (the extension's own tests sign
// the same way; this pins one value).
func TestTheRequestSignatureIsTheContracts(t *testing.T) {
	got := bridge.Sign("k", "POST", "/waymark-bridge/v1/ping", 1700000000, "00112233445566778899aabbccddeeff", []byte("{}"))
	// printf 'POST\n/waymark-bridge/v1/ping\n1700000000\n00112233445566778899aabbccddeeff\n%s' \
	//   "$(printf '{}' | sha256sum | cut -d' ' -f1)" | openssl dgst -sha256 -hmac k
	const want = "v1=519c97dc08dcd615425c9365f81e05c9a3ac12e2ded1291e57136679b8ba2816"
	if got != want {
		t.Fatalf("Sign = %q, want %q", got, want)
	}
}

// DataHandler's reasons reach the card without its log prefixes.
func TestTYPO3sReasonReachesTheCardWithoutDataHandlersPrefix(t *testing.T) {
	for in, want := range map[string]string{
		"[1.2]: Attempt to modify record pages:3 without permission or non-existing page": "Attempt to modify record pages:3 without permission or non-existing page",
		"[1.2]: a; [1.12]: b":   "a; b",
		"no prefix [1.2]: kept": "no prefix [1.2]: kept",
	} {
		if got := bridge.TYPO3Words(in); got != want {
			t.Errorf("TYPO3Words(%q) = %q, want %q", in, got, want)
		}
	}
}
