package workers

import (
	"fmt"
	"strings"
)

// UnknownTypeError is a worker_type evokore does not run. Its text is
// EVOKORE-MCP's.
type UnknownTypeError struct{ Type string }

func (e *UnknownTypeError) Error() string {
	return fmt.Sprintf("Unknown worker_type '%s'. Allowed: %s.", e.Type, strings.Join(Types, ", "))
}
