package orchestration

import (
	"errors"

	"github.com/evokore/evokore/internal/native/fleet"
)

// Message is the text the model reads for an error of a run, in
// EVOKORE-MCP's words where clients match on them.
func Message(err error) string {
	var unknown *UnknownRunError
	if errors.As(err, &unknown) {
		return fleet.InContext(err, unknown, "Unknown runId: "+unknown.ID)
	}
	return fleet.Message(err)
}
