//go:build !race

package scale_test

// raceDetector: the test binary runs with -race (the fault proof widens
// its sample's stride there; see stride).
const raceDetector = false
