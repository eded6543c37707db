package nav

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/native"
	"github.com/evokore/evokore/internal/safefile"
)

// Register binds nav_get_map and nav_read_anchor, which read files within
// scope only.
func Register(t *native.Table, scope safefile.Scope) {
	n := &navigator{scope: scope}
	t.Bind(native.NavGetMap, n.getMap)
	t.Bind(native.NavReadAnchor, n.readAnchor)
}

// navigator reads the files of one scope.
type navigator struct {
	scope safefile.Scope
}

// open checks the path and opens it; a problem is an isError result. A
// file outside the scope, a missing file, one the router may not read or
// may read only by privilege, and anything that is not a regular file (a
// device, a FIFO, /proc) all get the same answer, so that the tools tell
// nothing about files they will not read.
func (n *navigator) open(path string) (*safefile.File, *mcp.CallToolResult) {
	if path == "" {
		return nil, native.Errorf("Missing required argument: path")
	}
	if !filepath.IsAbs(path) {
		return nil, native.Errorf("Path must be absolute: %s", path)
	}
	unavailable := native.Errorf("File not found or not readable: %s", path)
	real, err := n.scope.Resolve(path)
	if err != nil {
		return nil, unavailable
	}
	f, err := safefile.Open(real, safefile.Options{MaxBytes: MaxFileBytes, RefusePrivileged: true})
	if err != nil {
		return nil, unavailable
	}
	return f, nil
}

// readError words a failure while reading an opened file.
func readError(path string, err error) *mcp.CallToolResult {
	var tl *safefile.TooLargeError
	if errors.As(err, &tl) {
		return native.Errorf("Cannot read %s: the file is larger than %d MiB", path, MaxFileBytes>>20)
	}
	return native.Errorf("Cannot read %s: %v", path, err)
}

func (n *navigator) getMap(ctx context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var in struct {
		Path string `json:"path"`
	}
	if err := call.Decode(&in); err != nil {
		return call.Invalid(err), nil
	}
	f, bad := n.open(in.Path)
	if bad != nil {
		return bad, nil
	}
	defer f.Close()
	m, err := BuildMap(in.Path, f.Reader(ctx))
	if err != nil {
		return readError(in.Path, err), nil
	}
	return native.JSON(m), nil
}

func (n *navigator) readAnchor(ctx context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var in struct {
		Path        string `json:"path"`
		AnchorID    string `json:"anchor_id"`
		LinesBefore int    `json:"lines_before"`
		LinesAfter  int    `json:"lines_after"`
		AnchorType  string `json:"anchor_type"`
	}
	if err := call.Decode(&in); err != nil {
		return call.Invalid(err), nil
	}
	if in.Path == "" {
		return native.Errorf("Missing required argument: path"), nil
	}
	if in.AnchorID == "" {
		return native.Errorf("Missing required argument: anchor_id"), nil
	}
	f, bad := n.open(in.Path)
	if bad != nil {
		return bad, nil
	}
	defer f.Close()
	w, found, err := ReadWindow(in.Path, f.Reader(ctx), in.AnchorID, in.AnchorType, in.LinesBefore, in.LinesAfter)
	switch {
	case err != nil:
		return readError(in.Path, err), nil
	case !found:
		return native.Errorf("Anchor '%s' not found in %s. Run nav_get_map to see available anchors.", in.AnchorID, in.Path), nil
	}
	return native.JSON(w), nil
}
