// Command capture builds the retrieval corpus in the directory above it: it
// starts real MCP servers over stdio with the official Go SDK client and
// records their tools/list results verbatim, renders evokore's native tool
// table, and checks queries.json against both.
//
// Usage (from this directory; see ../README.md for the whole procedure):
//
//	go run . -spec servers.json -root SCRATCH -install            # npm-install each server alone in SCRATCH/<id>
//	go run . -spec servers.json -root SCRATCH -out ../corpus.json # capture every server in the spec
//	go run . -table ../../../../native/tools_gen.go -out ../natives.json
//	go run . -list -out natives-live.json -- /path/to/evokore     # list any stdio server's tools
//	go run . -check ..                                            # validate queries.json
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Server is one entry of the spec file.
type Server struct {
	ID      string            `json:"id"`      // catalog prefix
	Package string            `json:"package"` // npm name@exact version
	Script  string            `json:"script"`  // entry point, relative to <root>/<id>
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	Command string            `json:"command"` // how it was started, as recorded in the corpus
}

type corpusServer struct {
	ID      string            `json:"id"`
	Package string            `json:"package"`
	Command string            `json:"command"`
	Env     map[string]string `json:"env,omitempty"`
	Tools   []json.RawMessage `json:"tools"`
}

type corpus struct {
	GeneratedBy string          `json:"generatedBy"`
	Servers     []*corpusServer `json:"servers"`
}

type toolList struct {
	Tools []json.RawMessage `json:"tools"`
}

// allowedDirArg in a spec's args is replaced by a fresh empty directory.
const allowedDirArg = "{allowed_dir}"

const generatedBy = "tools/list of each server over stdio (protocol 2025-11-25) with the go-sdk v1.8.0 client in capture/main.go, each tool kept byte-for-byte as the server sent it; each package installed alone from the npm registry at the pinned version (as npx would), run with Node.js v20, each in an empty scratch working directory with HOME set to an empty scratch directory"

func main() {
	spec := flag.String("spec", "", "capture every server listed in this spec file")
	root := flag.String("root", ".", "with -spec: directory with one npm install per server, in <root>/<id>")
	install := flag.Bool("install", false, "with -spec: npm-install each server's package alone into <root>/<id>, then exit")
	table := flag.String("table", "", "render evokore's native tool table (internal/native/tools_gen.go) as {\"tools\": [...]}")
	listCmd := flag.Bool("list", false, "list the tools of the stdio server command given after -- as {\"tools\": [...]}")
	check := flag.String("check", "", "check DIR/queries.json against DIR/corpus.json and DIR/natives.json")
	out := flag.String("out", "", "output file (default stdout)")
	timeout := flag.Duration("timeout", 60*time.Second, "per-server timeout")
	flag.Parse()

	var v any
	var err error
	switch {
	case *spec != "" && *install:
		if err := installSpec(*spec, *root); err != nil {
			log.Fatal(err)
		}
		return
	case *spec != "":
		v, err = captureSpec(*spec, *root, *timeout)
	case *table != "":
		v, err = renderTable(*table)
	case *listCmd:
		if flag.NArg() == 0 {
			log.Fatal("-list needs a command after --")
		}
		var tools []json.RawMessage
		tools, err = list(exec.Command(flag.Arg(0), flag.Args()[1:]...), *timeout)
		v = toolList{tools}
	case *check != "":
		if err := checkQueries(*check); err != nil {
			log.Fatal(err)
		}
		return
	default:
		flag.Usage()
		os.Exit(2)
	}
	if err != nil {
		log.Fatal(err)
	}
	if err := write(*out, v); err != nil {
		log.Fatal(err)
	}
}

// write encodes v with two-space indentation. Raw tool objects keep the key
// order the server sent; only whitespace is changed.
func write(path string, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	if path == "" {
		_, err := os.Stdout.Write(buf.Bytes())
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

func readSpec(path string) ([]Server, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var servers []Server
	if err := json.Unmarshal(data, &servers); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return servers, nil
}

// installSpec installs every server's package on its own, as npx would,
// so that no server's dependencies are resolved against another's. Install
// scripts are skipped: some download browsers, which listing does not need.
func installSpec(specPath, root string) error {
	servers, err := readSpec(specPath)
	if err != nil {
		return err
	}
	for _, s := range servers {
		dir := filepath.Join(root, s.ID)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte("{\"private\": true}\n"), 0o644); err != nil {
			return err
		}
		cmd := exec.Command("npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error", s.Package)
		cmd.Dir = dir
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		log.Printf("%s: npm install %s", s.ID, s.Package)
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: npm install %s: %w", s.ID, s.Package, err)
		}
	}
	return nil
}

func captureSpec(specPath, root string, timeout time.Duration) (*corpus, error) {
	servers, err := readSpec(specPath)
	if err != nil {
		return nil, err
	}
	absRoot, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	// Servers run in empty scratch directories, with HOME pointing at one of
	// them, so that nothing they write at start-up (config files, logs) lands
	// in the repository or in the user's home.
	scratch, err := os.MkdirTemp("", "capture-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(scratch)
	dirs := map[string]string{}
	for _, d := range []string{"cwd", "home", "allowed"} {
		dirs[d] = filepath.Join(scratch, d)
		if err := os.Mkdir(dirs[d], 0o755); err != nil {
			return nil, err
		}
	}
	c := &corpus{GeneratedBy: generatedBy}
	failed := 0
	for _, s := range servers {
		args := []string{filepath.Join(absRoot, s.ID, s.Script)}
		for _, a := range s.Args {
			args = append(args, strings.ReplaceAll(a, allowedDirArg, dirs["allowed"]))
		}
		cmd := exec.Command("node", args...)
		cmd.Dir = dirs["cwd"]
		cmd.Env = append(os.Environ(), "HOME="+dirs["home"])
		for k, val := range s.Env {
			cmd.Env = append(cmd.Env, k+"="+val)
		}
		tools, err := list(cmd, timeout)
		if err != nil {
			log.Printf("%s (%s): %v", s.ID, s.Package, err)
			failed++
			continue
		}
		log.Printf("%s (%s): %d tools", s.ID, s.Package, len(tools))
		c.Servers = append(c.Servers, &corpusServer{ID: s.ID, Package: s.Package, Command: s.Command, Env: s.Env, Tools: tools})
	}
	if failed > 0 {
		return nil, fmt.Errorf("%d of %d servers failed; nothing written", failed, len(servers))
	}
	return c, nil
}

// list connects to the server started by cmd and returns every tool exactly
// as the server sent it (the raw JSON of each element of result.tools),
// following pagination cursors. The go-sdk client drives the session;
// rawTransport only records the raw tools/list results it reads.
func list(cmd *exec.Cmd, timeout time.Duration) ([]json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	rt := &rawTransport{inner: &mcp.CommandTransport{Command: cmd}}
	client := mcp.NewClient(&mcp.Implementation{Name: "evokore-retrieval-capture", Version: "1"}, nil)
	cs, err := client.Connect(ctx, rt, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return nil, fmt.Errorf("connect: %w; stderr: %s", err, tail(stderr.String()))
	}
	defer cs.Close()
	var tools []json.RawMessage
	params := &mcp.ListToolsParams{}
	for {
		res, err := cs.ListTools(ctx, params)
		if err != nil {
			return nil, fmt.Errorf("tools/list: %w; stderr: %s", err, tail(stderr.String()))
		}
		var page toolList
		if err := json.Unmarshal(rt.take(), &page); err != nil {
			return nil, fmt.Errorf("raw tools/list result: %w", err)
		}
		if len(page.Tools) != len(res.Tools) {
			return nil, fmt.Errorf("raw result has %d tools, the client decoded %d", len(page.Tools), len(res.Tools))
		}
		tools = append(tools, page.Tools...)
		if res.NextCursor == "" {
			return tools, nil
		}
		params = &mcp.ListToolsParams{Cursor: res.NextCursor}
	}
}

// rawTransport wraps a transport and keeps the raw result of the latest
// response to a tools/list request.
type rawTransport struct {
	inner mcp.Transport
	mu    sync.Mutex
	ids   map[jsonrpc.ID]bool
	last  json.RawMessage
}

func (t *rawTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.inner.Connect(ctx)
	if err != nil {
		return nil, err
	}
	t.ids = map[jsonrpc.ID]bool{}
	return &rawConn{Connection: c, t: t}, nil
}

func (t *rawTransport) take() json.RawMessage {
	t.mu.Lock()
	defer t.mu.Unlock()
	r := t.last
	t.last = nil
	return r
}

type rawConn struct {
	mcp.Connection
	t *rawTransport
}

func (c *rawConn) Write(ctx context.Context, m jsonrpc.Message) error {
	if req, ok := m.(*jsonrpc.Request); ok && req.Method == "tools/list" && req.ID.IsValid() {
		c.t.mu.Lock()
		c.t.ids[req.ID] = true
		c.t.mu.Unlock()
	}
	return c.Connection.Write(ctx, m)
}

func (c *rawConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	m, err := c.Connection.Read(ctx)
	if resp, ok := m.(*jsonrpc.Response); ok && err == nil {
		c.t.mu.Lock()
		if c.t.ids[resp.ID] {
			delete(c.t.ids, resp.ID)
			c.t.last = append(json.RawMessage(nil), resp.Result...)
		}
		c.t.mu.Unlock()
	}
	return m, err
}

func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 600 {
		s = "…" + s[len(s)-600:]
	}
	return s
}

// nativeTool is a native tool as evokore.cue declares it: the four
// behaviour hints are all written, as declared, in the cue's order. (The
// router's tools/list writes only the hints that differ from the MCP
// defaults; the facts are the same.)
type nativeTool struct {
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"inputSchema"`
	Annotations nativeHints     `json:"annotations"`
}

type nativeHints struct {
	ReadOnlyHint    bool `json:"readOnlyHint"`
	DestructiveHint bool `json:"destructiveHint"`
	IdempotentHint  bool `json:"idempotentHint"`
	OpenWorldHint   bool `json:"openWorldHint"`
}

// renderTable parses the literal specs table of evokore's generated
// tools_gen.go (generated from evokore.cue) and renders every entry with
// name, title, description, input schema (byte-for-byte) and annotations.
func renderTable(path string) (*toolList, error) {
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		return nil, err
	}
	var lit *ast.CompositeLit
	ast.Inspect(f, func(n ast.Node) bool {
		if vs, ok := n.(*ast.ValueSpec); ok && len(vs.Names) == 1 && vs.Names[0].Name == "specs" && len(vs.Values) == 1 {
			lit, _ = vs.Values[0].(*ast.CompositeLit)
			return false
		}
		return true
	})
	if lit == nil {
		return nil, fmt.Errorf("%s: no specs table", path)
	}
	out := &toolList{}
	for _, el := range lit.Elts {
		fields := map[string]ast.Expr{}
		for _, e := range el.(*ast.CompositeLit).Elts {
			kv := e.(*ast.KeyValueExpr)
			fields[kv.Key.(*ast.Ident).Name] = kv.Value
		}
		str := func(k string) string {
			bl, ok := fields[k].(*ast.BasicLit)
			if !ok {
				log.Fatalf("%s: field %s is not a string literal", path, k)
			}
			s, err := strconv.Unquote(bl.Value)
			if err != nil {
				log.Fatal(err)
			}
			return s
		}
		b := func(k string) bool {
			id, ok := fields[k].(*ast.Ident)
			return ok && id.Name == "true"
		}
		raw, err := json.Marshal(&nativeTool{
			Name:        str("Name"),
			Title:       str("Title"),
			Description: str("Description"),
			InputSchema: json.RawMessage(str("InputSchema")),
			Annotations: nativeHints{
				ReadOnlyHint:    b("ReadOnly"),
				DestructiveHint: b("Destructive"),
				IdempotentHint:  b("Idempotent"),
				OpenWorldHint:   b("OpenWorld"),
			},
		})
		if err != nil {
			return nil, err
		}
		out.Tools = append(out.Tools, raw)
	}
	return out, nil
}

type query struct {
	ID     string         `json:"id"`
	Query  string         `json:"query"`
	Kind   string         `json:"kind"`
	Labels map[string]int `json:"labels"`
}

type named struct {
	Name string `json:"name"`
}

// checkQueries validates queries.json: ids and texts unique, kinds known,
// every label a catalog name with grade 1 or 2 and at least one grade 2;
// exact-name queries are a catalog name or a child name unique across the
// corpus, labelled alone; no other query contains a label's tool name or two
// or more of its words joined with '_' or '-'. It also reports coverage.
func checkQueries(dir string) error {
	var c checkCorpus
	var nat struct {
		Tools []named `json:"tools"`
	}
	var qs []query
	for name, v := range map[string]any{"corpus.json": &c, "natives.json": &nat, "queries.json": &qs} {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return err
		}
		if err := json.Unmarshal(data, v); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	qc := newQueryCheck(c, nat.Tools)
	for _, q := range qs {
		qc.query(q)
	}
	qc.report(c, nat.Tools, qs)
	if len(qc.errs) > 0 {
		return fmt.Errorf("%d problems:\n%s", len(qc.errs), strings.Join(qc.errs, "\n"))
	}
	fmt.Println("ok")
	return nil
}

// checkCorpus is what checkQueries reads of corpus.json: the tool names.
type checkCorpus struct {
	Servers []struct {
		ID    string  `json:"id"`
		Tools []named `json:"tools"`
	} `json:"servers"`
}

// origin is where a catalog name comes from: its server ("" for a
// native) and its name there.
type origin struct{ server, name string }

// queryCheck is the state of one check: the catalog, the problems found
// and what the queries covered.
type queryCheck struct {
	cat   map[string]origin
	child map[string][]string // a child's tool name → its catalog names
	errs  []string

	ids, texts                 map[string]bool
	kinds                      map[string]int
	servers, natives, labelled map[string]bool
}

// newQueryCheck builds the catalog names of the corpus and the natives,
// noting duplicates and collisions.
func newQueryCheck(c checkCorpus, natives []named) *queryCheck {
	qc := &queryCheck{
		cat: map[string]origin{}, child: map[string][]string{},
		ids: map[string]bool{}, texts: map[string]bool{}, kinds: map[string]int{},
		servers: map[string]bool{}, natives: map[string]bool{}, labelled: map[string]bool{},
	}
	for _, s := range c.Servers {
		for _, t := range s.Tools {
			n := s.ID + "_" + t.Name
			if _, dup := qc.cat[n]; dup {
				qc.fail("duplicate catalog name %s", n)
			}
			qc.cat[n] = origin{s.ID, t.Name}
			qc.child[t.Name] = append(qc.child[t.Name], n)
		}
	}
	for _, t := range natives {
		if _, dup := qc.cat[t.Name]; dup {
			qc.fail("native %s collides with a proxied name", t.Name)
		}
		qc.cat[t.Name] = origin{"", t.Name}
	}
	return qc
}

func (qc *queryCheck) fail(format string, a ...any) {
	qc.errs = append(qc.errs, fmt.Sprintf(format, a...))
}

// query checks one query: its id, text and kind, its labels, and either
// its exact name or that its text gives no label's name away.
func (qc *queryCheck) query(q query) {
	if qc.ids[q.ID] {
		qc.fail("%s: duplicate id", q.ID)
	}
	qc.ids[q.ID] = true
	lq := strings.ToLower(q.Query)
	if qc.texts[lq] {
		qc.fail("%s: duplicate query %q", q.ID, q.Query)
	}
	qc.texts[lq] = true
	qc.kinds[q.Kind]++
	switch q.Kind {
	case "natural", "hard-negative", "exact-name", "abbreviation":
	default:
		qc.fail("%s: unknown kind %q", q.ID, q.Kind)
	}
	best := qc.labels(q)
	if q.Kind == "exact-name" {
		qc.exactName(q, best)
		return
	}
	if w := len(strings.Fields(q.Query)); w < 2 || w > 20 {
		qc.fail("%s: %d words", q.ID, w)
	}
	qc.leaks(q, lq)
}

// labels checks a query's labels (catalog names, grade 1 or 2, one of
// grade 2 at least), records what they cover and returns the grade-2
// ones.
func (qc *queryCheck) labels(q query) (best []string) {
	for n, g := range q.Labels {
		o, ok := qc.cat[n]
		if !ok {
			qc.fail("%s: label %s is not in the catalog", q.ID, n)
			continue
		}
		if g != 1 && g != 2 {
			qc.fail("%s: label %s has grade %d", q.ID, n, g)
		}
		if g == 2 {
			best = append(best, n)
		}
		qc.labelled[n] = true
		if o.server == "" {
			qc.natives[n] = true
		} else {
			qc.servers[o.server] = true
		}
	}
	if len(best) == 0 {
		qc.fail("%s: no grade-2 label", q.ID)
	}
	return best
}

// exactName checks an exact-name query: one label, and the query is its
// catalog name or its child name when no other child has that name.
func (qc *queryCheck) exactName(q query, best []string) {
	if len(q.Labels) != 1 || len(best) != 1 {
		qc.fail("%s: an exact-name query labels exactly one tool", q.ID)
	} else if q.Query != best[0] && !(len(qc.child[q.Query]) == 1 && qc.child[q.Query][0] == best[0]) {
		qc.fail("%s: %q is neither %s nor its unique original name", q.ID, q.Query, best[0])
	}
}

// leaks reports a query text lq that holds a label's tool name, catalog
// or original, or two or more of its words joined as in the name.
func (qc *queryCheck) leaks(q query, lq string) {
	for n := range q.Labels {
		o, ok := qc.cat[n]
		if !ok {
			continue
		}
		for _, name := range []string{n, o.name} {
			whole, frags := nameFragments(name)
			if whole && strings.Contains(lq, strings.ToLower(name)) {
				qc.fail("%s: contains the tool name %s", q.ID, name)
			}
			for _, f := range frags {
				if strings.Contains(lq, f) {
					qc.fail("%s: contains %q from %s", q.ID, f, n)
				}
			}
		}
	}
}

var nameSeparators = regexp.MustCompile(`[_\-]+`)

// nameFragments splits a tool name on '_' and '-' and returns whether it
// has more than one word, and every run of two or more of its words
// joined with '_' and with '-'.
func nameFragments(name string) (whole bool, out []string) {
	var toks []string
	for _, t := range nameSeparators.Split(strings.ToLower(name), -1) {
		if t != "" {
			toks = append(toks, t)
		}
	}
	for n := 2; n <= len(toks); n++ {
		for i := 0; i+n <= len(toks); i++ {
			out = append(out, strings.Join(toks[i:i+n], "_"), strings.Join(toks[i:i+n], "-"))
		}
	}
	return len(toks) > 1, out
}

// report prints what the queries cover: tools, kinds, and the servers
// and natives no query labels.
func (qc *queryCheck) report(c checkCorpus, natives []named, qs []query) {
	var missingServers, missingNatives []string
	for _, s := range c.Servers {
		if !qc.servers[s.ID] {
			missingServers = append(missingServers, s.ID)
		}
	}
	for _, t := range natives {
		if !qc.natives[t.Name] {
			missingNatives = append(missingNatives, t.Name)
		}
	}
	var kindList []string
	for k, n := range qc.kinds {
		kindList = append(kindList, fmt.Sprintf("%s=%d", k, n))
	}
	sort.Strings(kindList)
	fmt.Printf("tools: %d (%d proxied from %d servers, %d native)\n", len(qc.cat), len(qc.cat)-len(natives), len(c.Servers), len(natives))
	fmt.Printf("queries: %d (%s)\n", len(qs), strings.Join(kindList, ", "))
	fmt.Printf("distinct tools labelled: %d\n", len(qc.labelled))
	fmt.Printf("servers without a query: %v\nnatives without a query: %v\n", missingServers, missingNatives)
}
