package auth

// HoldChecks takes every password-check slot until release is called.
func (a *Authenticator) HoldChecks() (release func()) {
	for range cap(a.checks) {
		a.checks <- struct{}{}
	}
	return func() {
		for range cap(a.checks) {
			<-a.checks
		}
	}
}
