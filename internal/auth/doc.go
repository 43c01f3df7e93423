// Package auth turns credentials into a backend user: API tokens (bearer),
// UI sessions (cookie + CSRF token), passwords. Secrets are stored only as
// bcrypt hashes.
package auth
