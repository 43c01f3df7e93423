// Package auth turns credentials into a backend user uid: API tokens (bearer),
// UI sessions (cookie + CSRF token), passwords. Secrets are stored only as
// hashes: passwords and tokens with bcrypt, session ids and CSRF tokens with sha256.
// The bcrypt work factor of new hashes is the caller's (DefaultCost in
// production, MinCost in tests; the wiring passes app.Config.HashCost): the
// package does not look at its surroundings to choose it.
//
// The Authenticator answers "which uid do these credentials name?" and
// nothing more. Every failure of a credential is ErrUnauthenticated, whatever
// part was wrong. Whether that user may act (exists, not disabled) is decided
// by the caller, which loads the user fresh on every request
// (access.LoadActor): nothing about the user is cached here.
package auth
