package engine

import "testing"

// testBackends lists the backends the end-to-end tests run on.
func testBackends(t *testing.T) []string {
	return []string{"cpu"}
}
