package bridge

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// TicketTTL is the longest a ticket may live from its issue.
const TicketTTL = 60 * time.Second

// ErrBadTicket is wrapped by every refused ticket.
var ErrBadTicket = errors.New("the sign-in ticket from TYPO3 is not valid")

// Ticket is what the extension vouches for: the backend user signed in to
// TYPO3 (second factor included), her backend session, and the page and
// language she opened Waymark for.
type Ticket struct {
	V        int    `json:"v"`
	User     int64  `json:"user"`
	Username string `json:"username"`
	Session  string `json:"session"`
	Page     int64  `json:"page"`
	Language int64  `json:"language"`
	IssuedAt int64  `json:"iat"`
	Expires  int64  `json:"exp"`
	Nonce    string `json:"nonce"`
}

// ExpiresAt is the ticket's expiry.
func (t Ticket) ExpiresAt() time.Time { return time.Unix(t.Expires, 0) }

// SignTicket makes the ticket string of t with secret, as the extension does
// (the extension is the issuer; Waymark's tests sign with it).
func SignTicket(secret string, t Ticket) string {
	raw, _ := json.Marshal(t)
	payload := base64.RawURLEncoding.EncodeToString(raw)
	return payload + "." + ticketMAC(secret, payload)
}

func ticketMAC(secret, payload string) string {
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte("waymark-ticket\n" + payload))
	return hex.EncodeToString(m.Sum(nil))
}

// ParseTicket verifies s with secret at now: the signature, the version, a
// lifetime of at most TicketTTL, not expired and not issued in the future
// (beyond a few seconds of clock skew), and the fields it must name. It does
// not know whether the ticket was used before: the caller keeps the nonces.
func ParseTicket(secret, s string, now time.Time) (Ticket, error) {
	payload, mac, ok := strings.Cut(strings.TrimSpace(s), ".")
	if !ok || payload == "" || mac == "" {
		return Ticket{}, fmt.Errorf("%w: malformed", ErrBadTicket)
	}
	if !hmac.Equal([]byte(mac), []byte(ticketMAC(secret, payload))) {
		return Ticket{}, fmt.Errorf("%w: the signature does not verify (is the secret the same on both sides?)", ErrBadTicket)
	}
	raw, err := base64.RawURLEncoding.DecodeString(payload)
	if err != nil {
		return Ticket{}, fmt.Errorf("%w: malformed payload", ErrBadTicket)
	}
	var t Ticket
	if err := json.Unmarshal(raw, &t); err != nil {
		return Ticket{}, fmt.Errorf("%w: malformed payload", ErrBadTicket)
	}
	const skew = 5
	switch {
	case t.V != 1:
		return Ticket{}, fmt.Errorf("%w: version %d is not known", ErrBadTicket, t.V)
	case t.User <= 0 || t.Session == "" || len(t.Nonce) < 16 || t.Page < 0 || t.Language < 0:
		return Ticket{}, fmt.Errorf("%w: user, session or nonce missing", ErrBadTicket)
	case t.Expires-t.IssuedAt > int64(TicketTTL/time.Second) || t.Expires < t.IssuedAt:
		return Ticket{}, fmt.Errorf("%w: a ticket lives at most %s", ErrBadTicket, TicketTTL)
	case t.IssuedAt > now.Unix()+skew:
		return Ticket{}, fmt.Errorf("%w: issued in the future", ErrBadTicket)
	case now.Unix() > t.Expires:
		return Ticket{}, fmt.Errorf("%w: expired", ErrBadTicket)
	}
	return t, nil
}
