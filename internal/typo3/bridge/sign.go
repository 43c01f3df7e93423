package bridge

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"strconv"
)

// Headers of a signed request.
const (
	HeaderTime      = "X-Waymark-Time"
	HeaderNonce     = "X-Waymark-Nonce"
	HeaderSignature = "X-Waymark-Signature"
)

// MinSecretLen is the shortest shared secret accepted on either side.
const MinSecretLen = 32

// Sign is the signature of a request: "v1=" and the hex HMAC-SHA256 of
// METHOD, PATH, TIME (unix seconds), NONCE and the hex SHA-256 of the body,
// one per line.
func Sign(secret, method, path string, unix int64, nonce string, body []byte) string {
	sum := sha256.Sum256(body)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write([]byte(method + "\n" + path + "\n" + strconv.FormatInt(unix, 10) + "\n" + nonce + "\n" + hex.EncodeToString(sum[:])))
	return "v1=" + hex.EncodeToString(m.Sum(nil))
}

// newNonce returns 16 random bytes as 32 hex characters.
func newNonce() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}
