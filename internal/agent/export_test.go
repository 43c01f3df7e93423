package agent

// SetTestHookBeforeWrite sets testHookBeforeWrite until the returned restore is called.
func SetTestHookBeforeWrite(f func()) (restore func()) {
	old := testHookBeforeWrite
	testHookBeforeWrite = f
	return func() { testHookBeforeWrite = old }
}

// SetTestHookBeat makes rt call f with the run after each won heartbeat renewal.
func SetTestHookBeat(rt *Runtime, f func(run string)) { rt.testHookBeat = f }
