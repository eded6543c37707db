package server

import (
	"github.com/evokore/evokore/internal/native"
)

// registerManagers binds every native manager's handlers and returns the
// content (resources and prompts) sessions serve. Each manager is one line
// here; the router core never names a manager.
func registerManagers(t *native.Table, host *native.Host, s *Server) Content {
	_ = host
	_ = s
	return nil
}
