package main

import (
	"os"
	"testing"
)

// TestMain lets the tests run pop-sim with -parallel: runApart starts this
// executable, here the test binary, with childEnv set, and it then acts as
// pop-sim itself.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) != "" {
		main()
	}
	os.Exit(m.Run())
}
