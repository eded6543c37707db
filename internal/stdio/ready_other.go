//go:build !unix

package stdio

import "io"

// inputWaiting reports false where polling a file is not available: Open
// then does not wait for the greeting.
func inputWaiting(io.Reader) bool { return false }
