//go:build !unix

package stdio

import (
	"context"
	"io"
)

// inputWaiting reports false where polling a file is not available: Open
// then does not wait for the greeting.
func inputWaiting(io.Reader) bool { return false }

// watchReader never reports where polling a file is not available: the
// end of input then waits for the drain bound.
func watchReader(context.Context, io.Writer, func()) {}
