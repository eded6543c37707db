package nav

import (
	"context"
	"os"
	"path/filepath"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/native"
)

// Register binds nav_get_map and nav_read_anchor.
func Register(t *native.Table) {
	t.Bind(native.NavGetMap, getMap)
	t.Bind(native.NavReadAnchor, readAnchor)
}

// open checks the path and opens it; a problem is an isError result.
func open(path string) (*os.File, *mcp.CallToolResult) {
	if path == "" {
		return nil, native.Errorf("Missing required argument: path")
	}
	if !filepath.IsAbs(path) {
		return nil, native.Errorf("Path must be absolute: %s", path)
	}
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return nil, native.Errorf("File not found: %s", path)
	case !fi.Mode().IsRegular():
		return nil, native.Errorf("Not a regular file: %s", path)
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, native.Errorf("Cannot read %s: %v", path, err)
	}
	return f, nil
}

func getMap(_ context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var in struct {
		Path string `json:"path"`
	}
	if err := call.Decode(&in); err != nil {
		return nil, err
	}
	f, bad := open(in.Path)
	if bad != nil {
		return bad, nil
	}
	defer f.Close()
	m, err := BuildMap(in.Path, f)
	if err != nil {
		return native.Errorf("Cannot read %s: %v", in.Path, err), nil
	}
	return native.JSON(m), nil
}

func readAnchor(_ context.Context, call *native.Call) (*mcp.CallToolResult, error) {
	var in struct {
		Path        string `json:"path"`
		AnchorID    string `json:"anchor_id"`
		LinesBefore int    `json:"lines_before"`
		LinesAfter  int    `json:"lines_after"`
		AnchorType  string `json:"anchor_type"`
	}
	if err := call.Decode(&in); err != nil {
		return nil, err
	}
	if in.Path == "" {
		return native.Errorf("Missing required argument: path"), nil
	}
	if in.AnchorID == "" {
		return native.Errorf("Missing required argument: anchor_id"), nil
	}
	f, bad := open(in.Path)
	if bad != nil {
		return bad, nil
	}
	defer f.Close()
	w, found, err := ReadWindow(in.Path, f, in.AnchorID, in.AnchorType, in.LinesBefore, in.LinesAfter)
	switch {
	case err != nil:
		return native.Errorf("Cannot read %s: %v", in.Path, err), nil
	case !found:
		return native.Errorf("Anchor '%s' not found in %s. Run nav_get_map to see available anchors.", in.AnchorID, in.Path), nil
	}
	return native.JSON(w), nil
}
