// Package starter carries evokore's starter skill library, compiled into
// the binary. The router serves it when no skills directory exists, so a
// fresh install has useful skills out of the box.
//
// Each top-level directory is a category and each SKILL.md below it a
// skill; see internal/skills for the layout rules. This file is the only
// Go file here: it is not a skill and the indexer ignores top-level
// files.
package starter

import "embed"

// FS is the starter library.
//
//go:embed *
var FS embed.FS
