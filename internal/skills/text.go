package skills

import "github.com/evokore/evokore/internal/search"

// normalize lowercases s and folds every run of characters other than
// letters and digits into one space, so "Release_Readiness" and
// "release readiness" compare equal.
func normalize(s string) string { return search.Normalize(s) }
