package claims

import "fmt"

// ContendedError is a claim still held by another owner after the retry.
// Its text is EVOKORE-MCP's, which clients match on.
type ContendedError struct{ Resource string }

func (e *ContendedError) Error() string {
	return fmt.Sprintf("Failed to acquire claim for '%s' after retry", e.Resource)
}
