//go:build !race

package scale_test

// raceStride widens the fault proof's stride under the race detector.
const raceStride = 1
