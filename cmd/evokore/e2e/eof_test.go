package e2e_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/evokore/evokore/internal/testutil"
)

// pipedScript is what `printf '...' | evokore serve` sends: three
// requests and the end of input right behind them.
const pipedScript = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"printf","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/list"}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"proxy_server_status","arguments":{}}}
`

// answers runs a server over the piped script and returns the ids of the
// responses it wrote before exiting.
func answers(t *testing.T, cmd *exec.Cmd) []float64 {
	t.Helper()
	cmd.Stdin = bytes.NewReader([]byte(pipedScript))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%v\n%s", err, stderr.String())
	}
	var ids []float64
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		var m struct {
			ID    *float64        `json:"id"`
			Error json.RawMessage `json:"error"`
		}
		if json.Unmarshal(sc.Bytes(), &m) == nil && m.ID != nil && m.Error == nil {
			ids = append(ids, *m.ID)
		}
	}
	return ids
}

// Every request read before the end of input is answered before exit.
func TestPipedRequestsAreAllAnsweredAtEOF(t *testing.T) {
	bin := testutil.Evokore(t)
	dir := t.TempDir()
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "EVOKORE_HOME=" + filepath.Join(dir, "home")}
	runs := 100
	if testing.Short() {
		runs = 10
	}
	complete := 0
	for i := range runs {
		cmd := exec.Command(bin, "serve")
		cmd.Dir, cmd.Env = dir, env
		ids := answers(t, cmd)
		slices.Sort(ids) // answers may come in any order
		if slices.Equal(ids, []float64{1, 2, 3}) {
			complete++
		} else if complete == i {
			t.Logf("run %d answered ids %v", i, ids)
		}
	}
	if complete != runs {
		t.Errorf("%d of %d runs answered all three requests", complete, runs)
	}
}

// The reference server answers the same script the same way: this is
// what clients expect of a stdio server.
func TestReferenceServerAnswersPipedRequests(t *testing.T) {
	script := testutil.NPMServer(t, "server-everything")
	cmd := exec.Command("node", script, "stdio")
	ids := answers(t, cmd)
	// The reference server has no proxy_server_status: ids 1 and 2 answer
	// with results, 3 with an error.
	if len(ids) < 2 || ids[0] != 1 || ids[1] != 2 {
		t.Errorf("server-everything answered %v", ids)
	}
}
