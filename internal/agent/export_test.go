package agent

// SetTestHookBeforeWrite sets testHookBeforeWrite until the returned restore is called.
func SetTestHookBeforeWrite(f func()) (restore func()) {
	old := testHookBeforeWrite
	testHookBeforeWrite = f
	return func() { testHookBeforeWrite = old }
}
