//go:build !unix

package doctor

import "testing"

// rerunAsNobody reports false: there is no other user to run as here.
func rerunAsNobody(t *testing.T) bool { return false }
