package config

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// Severity says whether a [Diagnostic] fails a check.
type Severity string

// Severities, from worst.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Position is a place in a file. Line and Col are 1-based; zero means the
// problem concerns the whole file.
type Position struct {
	File string `json:"file"`
	Line int    `json:"line"`
	Col  int    `json:"col"`
}

// String renders file:line:col, dropping the parts that are unknown.
func (p Position) String() string {
	switch {
	case p.Line == 0:
		return p.File
	case p.Col == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Diagnostic is one problem found in a file.
type Diagnostic struct {
	Position
	Severity Severity `json:"severity"`
	// Code is a stable identifier a script can match on, such as
	// "schema" or "unknown-native-tool".
	Code    string `json:"code"`
	Message string `json:"message"`
}

// String renders the diagnostic the way compilers do.
func (d Diagnostic) String() string {
	return fmt.Sprintf("%s: %s: %s [%s]", d.Position, d.Severity, d.Message, d.Code)
}

// Diagnostics is a list of problems. As an error it reports all of them.
type Diagnostics []Diagnostic

// Error joins every diagnostic, one per line.
func (ds Diagnostics) Error() string {
	lines := make([]string, len(ds))
	for i, d := range ds {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// HasErrors reports whether any diagnostic is an error.
func (ds Diagnostics) HasErrors() bool {
	return slices.ContainsFunc(ds, func(d Diagnostic) bool { return d.Severity == SeverityError })
}

// Sort orders diagnostics by file, line, column, then message, so output is
// stable enough to diff.
func (ds Diagnostics) Sort() {
	slices.SortStableFunc(ds, func(a, b Diagnostic) int {
		return cmp.Or(
			cmp.Compare(a.File, b.File),
			cmp.Compare(a.Line, b.Line),
			cmp.Compare(a.Col, b.Col),
			cmp.Compare(a.Message, b.Message),
		)
	})
}

// errAt builds an error diagnostic.
func errAt(pos Position, code, format string, args ...any) Diagnostic {
	return Diagnostic{Position: pos, Severity: SeverityError, Code: code, Message: fmt.Sprintf(format, args...)}
}
