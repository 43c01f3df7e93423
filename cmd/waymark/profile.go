package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// writeHeapProfile writes the heap profile beside the CPU profile (issue
// 15: what holds the server's memory with 500 conversations); a failure
// only loses the profile.
func writeHeapProfile(path string) {
	f, err := os.Create(path)
	if err != nil {
		return
	}
	defer f.Close()
	_ = pprof.Lookup("heap").WriteTo(f, 0)
}

// startCPUProfile starts the profile of --cpuprofile; the returned stop
// writes it. With path "" it does nothing.
func startCPUProfile(path string) (stop func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
		writeHeapProfile(path + ".heap")
	}, nil
}
