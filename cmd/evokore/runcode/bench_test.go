package runcode_test

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/budget"
	"github.com/evokore/evokore/internal/testutil"
	"github.com/evokore/evokore/internal/testutil/routertest"
)

// The saving of code mode, measured: list a directory of 50 files, read
// each, name the three largest by line count, over the npm filesystem
// server. Done as the model would without run_code, each call's
// arguments and result enter its context; with run_code only the program
// and its answer do. Wall time is the router's and the child's alone
// (no model turns between the sequential calls, which would add more).
//
//	go test -run '^$' -bench CodeModeSaving ./cmd/evokore
var codeModeReport = flag.String("codemode-report", "", "BenchmarkCodeModeSaving: also write the table as markdown to this file (make bench-report)")

func BenchmarkCodeModeSaving(b *testing.B) {
	server := testutil.NPMServer(b, "server-filesystem")
	files := b.TempDir()
	for i := range 50 {
		lines := strings.Repeat(fmt.Sprintf("line of file %02d, some ordinary text to read\n", i), 10+(i*37)%90)
		if err := os.WriteFile(filepath.Join(files, fmt.Sprintf("file%02d.txt", i)), []byte(lines), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	h := routertest.New(b, map[string]any{"fs": map[string]any{"command": "node", "args": []string{server, files}}}, nil)
	cs := h.Connect(nil)
	h.Booted()

	var ctxBytes, ctxTokens int
	see := func(text string) {
		ctxBytes += len(text)
		n, err := budget.Count(budget.Cl100k, text)
		if err != nil {
			b.Fatal(err)
		}
		ctxTokens += n
	}
	call := func(name string, args map[string]any) string {
		req, _ := json.Marshal(map[string]any{"name": name, "arguments": args})
		see(string(req))
		res, err := cs.CallTool(b.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil || res.IsError {
			b.Fatalf("%s: %v %s", name, err, routertest.Text(res))
		}
		text := routertest.Text(res)
		see(text)
		return text
	}

	// Sequential: what the model reads and writes, call by call.
	var seqWall time.Duration
	var seqTop []string
	for range b.N {
		ctxBytes, ctxTokens = 0, 0
		start := time.Now()
		listing := call("fs_list_directory", map[string]any{"path": files})
		type sized struct {
			name  string
			lines int
		}
		var all []sized
		for _, line := range strings.Split(listing, "\n") {
			name, ok := strings.CutPrefix(line, "[FILE] ")
			if !ok {
				continue
			}
			text := call("fs_read_text_file", map[string]any{"path": filepath.Join(files, name)})
			all = append(all, sized{name, strings.Count(text, "\n")})
		}
		slices.SortStableFunc(all, func(x, y sized) int { return y.lines - x.lines })
		seqTop = []string{all[0].name, all[1].name, all[2].name}
		seqWall = time.Since(start)
	}
	seqBytes, seqTokens := ctxBytes, ctxTokens

	program := `const dir = ` + fmt.Sprintf("%q", files) + `;
const list = await tools.fs_list_directory({path: dir});
const names = list.content.split("\n").filter(l => l.startsWith("[FILE] ")).map(l => l.slice(7));
const sized = await Promise.all(names.map(async n => {
  const r = await tools.fs_read_text_file({path: dir + "/" + n});
  return {n, lines: r.content.split("\n").length - 1};
}));
return sized.sort((a, b) => b.lines - a.lines).slice(0, 3).map(s => s.n);`
	var codeWall time.Duration
	var answer string
	for range b.N {
		ctxBytes, ctxTokens = 0, 0
		start := time.Now()
		answer = call("run_code", map[string]any{"code": program})
		codeWall = time.Since(start)
	}
	var r codeRun
	if err := json.Unmarshal([]byte(answer), &r); err != nil || r.Error != "" {
		b.Fatalf("run_code: %s", answer)
	}
	var codeTop []string
	_ = json.Unmarshal(r.Value, &codeTop)
	if !slices.Equal(codeTop, seqTop) || r.Calls != 51 {
		b.Fatalf("run_code found %v in %d calls, the sequential calls %v", codeTop, r.Calls, seqTop)
	}
	b.ReportMetric(float64(seqBytes), "seq-bytes")
	b.ReportMetric(float64(seqTokens), "seq-cl100k")
	b.ReportMetric(float64(ctxBytes), "code-bytes")
	b.ReportMetric(float64(ctxTokens), "code-cl100k")
	b.ReportMetric(float64(seqWall.Milliseconds()), "seq-ms")
	b.ReportMetric(float64(codeWall.Milliseconds()), "code-ms")
	if *codeModeReport != "" {
		pct := func(code, seq int) string { return fmt.Sprintf("%.1f %%", 100*float64(code)/float64(seq)) }
		table := "| | tool calls in the model's turns | bytes into the context | cl100k tokens | wall ms |\n|---|---|---|---|---|\n" +
			fmt.Sprintf("| sequential calls | 51 | %d | %d | %d |\n", seqBytes, seqTokens, seqWall.Milliseconds()) +
			fmt.Sprintf("| one `run_code` | 1 | %d | %d | %d |\n", ctxBytes, ctxTokens, codeWall.Milliseconds()) +
			fmt.Sprintf("| run_code ÷ sequential | | %s | %s | %s |\n", pct(ctxBytes, seqBytes), pct(ctxTokens, seqTokens), pct(int(codeWall), int(seqWall)))
		if err := os.WriteFile(*codeModeReport, []byte(table), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("sequential: 51 calls, %d bytes, %d cl100k tokens, %s; run_code: 1 call, %d bytes, %d cl100k tokens, %s; top 3 %v",
		seqBytes, seqTokens, seqWall, ctxBytes, ctxTokens, codeWall, seqTop)
}
