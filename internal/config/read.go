package config

import (
	"errors"

	"github.com/evokore/evokore/internal/safefile"
)

// ReadFile reads a configuration file (mcp.config.json, permissions.yml,
// voices.json, a .env, a plugin manifest) under the rule for every file
// evokore reads: a regular file, at most safefile.MaxConfigBytes. A
// missing file is an error that errors.Is fs.ErrNotExist.
func ReadFile(path string) ([]byte, error) {
	return safefile.Load(path, safefile.MaxConfigBytes)
}

// ReadProblem is a failed ReadFile as a diagnostic positioned at the
// file: "<file>: error: not a regular file [read]", "exceeds N bytes".
func ReadProblem(path string, err error) Diagnostic {
	msg := err.Error()
	var fe *safefile.FileError
	if errors.As(err, &fe) {
		msg = fe.Reason()
	}
	return errAt(Position{File: path}, "read", "%s", msg)
}
