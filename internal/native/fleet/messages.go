package fleet

import (
	"errors"
	"fmt"
	"strings"
)

// Message is the text the model reads for an error of the fleet, in
// EVOKORE-MCP's words where clients match on them. A fleet error wrapped
// in context keeps the context around its text.
func Message(err error) string {
	var unknown *UnknownAgentError
	var spawn *SpawnError
	var released *ReleasedAgentError
	switch {
	case errors.As(err, &unknown):
		return InContext(err, unknown, "Unknown agentId: "+unknown.ID)
	case errors.As(err, &spawn):
		return InContext(err, spawn, fmt.Sprintf("Failed to spawn '%s': %v", spawn.Command, spawn.Err))
	case errors.As(err, &released):
		return InContext(err, released, "Cannot claim released agent: "+released.ID)
	}
	return err.Error()
}

// InContext renders err with the text of inner, an error it wraps,
// replaced by text.
func InContext(err, inner error, text string) string {
	return strings.Replace(err.Error(), inner.Error(), text, 1)
}
