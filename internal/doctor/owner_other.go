//go:build !unix

package doctor

import "io/fs"

// othersCanWrite has no owner or mode bits to judge by here: Windows
// reports every directory as 0777.
func othersCanWrite(fs.FileInfo) bool { return false }
