package auth_test

import (
	"strings"
	"testing"

	"golang.org/x/crypto/bcrypt"

	"waymark/internal/auth"
)

// TestHashCostIsTheCallersAndAnyCostVerifies checks that the work factor is
// the one the caller passes (0: DefaultCost), that hashes of either cost
// verify, and that a cost bcrypt would not take as given is refused (issue
// 16 item 5: the cost is a dependency, not a guess from the test binary).
func TestHashCostIsTheCallersAndAnyCostVerifies(t *testing.T) {
	for _, c := range []struct{ give, want int }{{0, auth.DefaultCost}, {auth.MinCost, bcrypt.MinCost}, {auth.DefaultCost, 10}} {
		h, err := auth.HashPassword("secret-pass", c.give)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := bcrypt.Cost([]byte(h)); err != nil || got != c.want {
			t.Errorf("HashPassword at %d: cost %d, %v; want %d", c.give, got, err, c.want)
		}
		if !auth.CheckPassword(h, "secret-pass") || auth.CheckPassword(h, "wrong-pass") {
			t.Errorf("hash at cost %d: the password does not verify, or a wrong one does", c.give)
		}
		_, th, err := auth.HashToken("wm_token-123456", c.give)
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := bcrypt.Cost([]byte(th)); got != c.want || !auth.CheckToken(th, "wm_token-123456") {
			t.Errorf("HashToken at %d: cost %d or does not verify", c.give, got)
		}
	}
	for _, bad := range []int{-1, 1, bcrypt.MinCost - 1, bcrypt.MaxCost + 1} {
		if _, err := auth.HashPassword("secret-pass", bad); err == nil || !strings.Contains(err.Error(), "bcrypt cost") {
			t.Errorf("HashPassword at cost %d: %v, want a cost error", bad, err)
		}
		if _, _, err := auth.HashToken("wm_token-123456", bad); err == nil {
			t.Errorf("HashToken at cost %d: no error", bad)
		}
		if auth.CheckCost(bad) == nil {
			t.Errorf("CheckCost(%d) = nil", bad)
		}
	}
}
