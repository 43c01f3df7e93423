// Package secret seals small secrets — provider API keys — for storage at
// rest with AES-256-GCM, and finds the key that does it: WAYMARK_SECRET_KEY
// when set, otherwise the file secret.key in the data directory, generated
// on first use.
//
// Neither a key nor a plaintext ever appears in an error message.
package secret
