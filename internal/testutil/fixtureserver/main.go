// Command fixtureserver is the MCP server the tests run as a child of
// evokore. One binary plays every part the tests need, chosen by the tool
// called and a few flags:
//
//	echo {message}          "Echo: <message>"
//	slow {ms}               sleeps, honouring cancellation
//	read_cancelled {started} how many slow calls the client cancelled
//	                        (started: how many slow calls began)
//	crash {}                exits the process in the middle of the call
//	fail {message}          an isError result (counted as count's calls are)
//	count {}                counts the calls of count and fail that
//	                        reached this process
//	read_count {}           returns that count without adding to it
//	mutate {description,    redefines echo (tools/list_changed): description
//	  title, readOnly,      (default: the original one), title, readOnlyHint
//	  output}               and, with output, an output schema
//	add_tool {name}         adds a tool (tools/list_changed)
//	progress {steps}        reports progress steps, then answers
//	sample {prompt}         asks the client for a sampling completion
//	elicit {message}        asks the client to fill in a one-field form
//	roots {}                asks the client for its roots
//	ask_later {kind, file}  answers at once; once file exists (the test
//	                        creates it after the call ended) asks the
//	                        client for "sampling" or "elicitation" outside
//	                        any call, and writes the outcome to file.out
//	log {message}           sends a log message to the client
//	env {name}              the value of an environment variable
//	untyped {}              listed with an input schema lacking "type"
//	pid {}                  this process's pid
//	args {...}              the raw arguments it received, as JSON
//	header {name}           an HTTP request header (streamable HTTP only)
//	ask {message}           asks the client for a one-field form the
//	                        sessionless way (MCP 2026-07-28): answers
//	                        input_required, then on the retry that carries
//	                        the answer and its requestState, "<action>:
//	                        <answer> (state <requestState>)"
//	answers {}              how many retries of ask carrying an answer
//	                        reached this process
//	caps {}                 the client capabilities of this request, as
//	                        JSON
//	forget {}               (streamable HTTP) answers, then forgets the
//	                        caller's session, as a server whose sessions
//	                        expire does: its later requests are answered
//	                        404
//	session {}              (streamable HTTP) the caller's session id
//
//	garbage {message}       writes message as a bare line on stdout (not
//	                        JSON-RPC), then answers
//	stderr {message}        writes message as a line on stderr
//	storm {steps}           writes steps raw tools/list_changed
//	                        notifications on stdout
//	lists {}                how many tools/list requests arrived
//	progress_token {}       the progress token the call carried
//	spoof {token, message}  reports progress under any token
//
// With -payloads, four more tools, for the proxy fast path's tests:
//
//	big {bytes}             a text result of that many bytes
//	blob {bytes}            an embedded blob resource of that many bytes,
//	                        every byte value in turn (binary content)
//	rpcerror {code,message} answers with that JSON-RPC error object
//	chatter {steps}         sends steps progress notifications (under
//	                        the call's token) and log messages, then
//	                        answers at once
//
// With -param-headers, one more tool, for the Mcp-Param-* header tests:
//
//	deploy {region, replicas, target: {zone}, resultType}
//	                        annotated x-mcp-header Region, Replicas and
//	                        Zone; returns its arguments and, served over
//	                        HTTP, the Mcp-Param-Region header it got
//
// With -deaf, one more tool, for a child that stops reading its input
// (see addDeaf):
//
//	deaf {}                 stops reading stdin, never answers
//
// With -ask-prompt, a prompt that asks for input the sessionless way:
//
//	ask {topic}             answers input_required (one form field,
//	                        "answer"), then on the retry that carries the
//	                        answer a user message "<topic>: <answer> (state
//	                        <requestState>)"
//
// Flags: -name, -echo TEXT (echo's description), -start-delay (sleep
// before answering anything), -extra N
// (N generated tools), -alias NAME (echo again under NAME), -stderr TEXT
// (a line on stderr at start), -pidfile PATH (write the pid there), -http
// ADDR (serve streamable HTTP instead of stdio), -era 2026-07-28 (speak
// that protocol version only: no initialize, and over HTTP no sessions),
// -era 2025-11-25 (that version only: no server/discover), -stateless
// (over HTTP, no sessions while speaking both eras). Without -era the
// server speaks both eras, as every go-sdk server does.
//
// Misbehaviour, for the launcher's and the proxy's tests: -banner TEXT
// (a non-JSON line on stdout before anything else), -stderr-bytes N (one
// stderr line of N bytes at start, before serving), -ignore-eof (keep
// running after stdin closes), -ignore-term (ignore SIGTERM), -grandchild
// PATH (start a helper process that writes its pid to PATH and sleeps;
// with -setsid the helper calls setsid, leaving the group and session).
// With -sleeper the binary is that helper: it writes its pid to -pidfile,
// ignores SIGTERM and SIGHUP, and sleeps until killed. With -sequential
// it is a single-threaded server of echo alone, which reads its next
// message only once its last answer is written (see serveSequential).
// With -endless-pages N it answers tools/list and prompts/list with pages
// of N items and a new cursor each time, without end. With -hostile it is
// a server whose answers are broken on purpose (see serveHostile).
package main

//lint:file-ignore SA1019 sampling, roots and logging pass through on purpose; see docs/decisions.md

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var calls, cancelled, lists, slowStarted, answered atomic.Int64

func text(format string, args ...any) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf(format, args...)}}}
}

type echoIn struct {
	Message string `json:"message"`
}

type startedIn struct {
	Started bool `json:"started,omitempty"`
}

type slowIn struct {
	Ms int `json:"ms"`
}

type stepsIn struct {
	Steps int `json:"steps"`
}

type spoofIn struct {
	Token   string `json:"token"`
	Message string `json:"message"`
}

type nameIn struct {
	Name string `json:"name,omitempty"`
}

type promptIn struct {
	Prompt string `json:"prompt"`
}

type askLaterIn struct {
	Kind string `json:"kind"`
	File string `json:"file"`
}

type mutateIn struct {
	Description string `json:"description,omitempty"`
	Title       string `json:"title,omitempty"`
	ReadOnly    bool   `json:"readOnly,omitempty"`
	Output      bool   `json:"output,omitempty"`
}

type echoOut struct {
	Echo string `json:"echo"`
}

type empty struct{}

func addEcho(s *mcp.Server, desc string) {
	mcp.AddTool(s, &mcp.Tool{Name: "echo", Description: desc}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		return text("Echo: %s", in.Message), nil, nil
	})
}

// redefineEcho replaces echo with the definition a mutate call asks for.
func redefineEcho(s *mcp.Server, in mutateIn, desc string) {
	if in.Description != "" {
		desc = in.Description
	}
	t := &mcp.Tool{Name: "echo", Title: in.Title, Description: desc}
	if in.ReadOnly {
		t.Annotations = &mcp.ToolAnnotations{ReadOnlyHint: true}
	}
	if !in.Output {
		mcp.AddTool(s, t, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return text("Echo: %s", in.Message), nil, nil
		})
		return
	}
	mcp.AddTool(s, t, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, echoOut, error) {
		return text("Echo: %s", in.Message), echoOut{Echo: in.Message}, nil
	})
}

// options are the command's flags.
type options struct {
	name, echoDesc, stderr, httpAddr, alias, pidfile, banner, grandchild, era string
	delay                                                                     time.Duration
	extra, stderrBytes, pages                                                 int
	ignoreEOF, ignoreTerm, setsid, sleeper, payloads, paramHeaders            bool
	askPrompt, sequential, hostile, deaf, failInit, stateless                 bool
}

func parseFlags() *options {
	o := &options{}
	flag.StringVar(&o.name, "name", "fixture", "server name")
	flag.StringVar(&o.echoDesc, "echo", "Echoes the message back.", "echo's description")
	flag.DurationVar(&o.delay, "start-delay", 0, "sleep before serving")
	flag.IntVar(&o.extra, "extra", 0, "generated tools to add")
	flag.StringVar(&o.stderr, "stderr", "", "a line to write on stderr at start")
	flag.StringVar(&o.httpAddr, "http", "", "serve streamable HTTP on this address")
	flag.StringVar(&o.alias, "alias", "", "register echo again under this name")
	flag.StringVar(&o.pidfile, "pidfile", "", "write the process id to this file")
	flag.StringVar(&o.banner, "banner", "", "a non-JSON line on stdout before serving")
	flag.IntVar(&o.stderrBytes, "stderr-bytes", 0, "one stderr line of this many bytes at start")
	flag.BoolVar(&o.ignoreEOF, "ignore-eof", false, "keep running after stdin closes")
	flag.BoolVar(&o.ignoreTerm, "ignore-term", false, "ignore SIGTERM")
	flag.StringVar(&o.grandchild, "grandchild", "", "start a sleeping helper that writes its pid here")
	flag.BoolVar(&o.setsid, "setsid", false, "the helper calls setsid")
	flag.BoolVar(&o.sleeper, "sleeper", false, "be the sleeping helper")
	flag.BoolVar(&o.payloads, "payloads", false, "add the big, blob and rpcerror tools")
	flag.BoolVar(&o.paramHeaders, "param-headers", false, "add the deploy tool, whose arguments are annotated x-mcp-header")
	flag.BoolVar(&o.askPrompt, "ask-prompt", false, "add the ask prompt, which asks for input by input_required")
	flag.BoolVar(&o.sequential, "sequential", false, "serve echo one message at a time, with blocking writes")
	flag.BoolVar(&o.hostile, "hostile", false, "serve tools whose answers are broken on purpose (see hostile.go)")
	flag.BoolVar(&o.deaf, "deaf", false, "add the deaf tool, which stops reading stdin")
	flag.StringVar(&o.era, "era", "", "the only protocol version to speak")
	flag.BoolVar(&o.failInit, "fail-init", false, "answer initialize with an internal error (a server of the old era that is not ready)")
	flag.BoolVar(&o.stateless, "stateless", false, "serve streamable HTTP without sessions")
	flag.IntVar(&o.pages, "endless-pages", 0, "answer tools/list and prompts/list with pages of this many items, each with a new cursor, without end")
	flag.Parse()
	return o
}

func main() {
	o := parseFlags()
	startUp(o)
	if o.sequential {
		serveSequential()
		return
	}
	if o.hostile {
		serveHostile()
		return
	}
	s := newServer(o)
	if o.httpAddr != "" {
		serveStreamable(s, o.httpAddr, o.era >= "2026-07-28" || o.stateless)
	}
	var transport mcp.Transport = &mcp.StdioTransport{}
	if o.deaf {
		transport = addDeaf(s)
	}
	err := s.Run(context.Background(), transport)
	if o.ignoreEOF {
		select {} // as a server that never notices its client left
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// startUp does what the flags ask before serving: the pid file, the
// sleeping helper (or being it), signals, stderr and stdout noise, the
// start delay.
func startUp(o *options) {
	if o.pidfile != "" {
		if err := writePid(o.pidfile); err != nil {
			log.Fatal(err)
		}
	}
	if o.sleeper {
		sleepForever()
	}
	if o.ignoreTerm {
		signal.Ignore(syscall.SIGTERM)
	}
	if o.grandchild != "" {
		if err := startHelper(o.grandchild, o.setsid); err != nil {
			log.Fatal(err)
		}
	}
	if o.stderr != "" {
		fmt.Fprintln(os.Stderr, o.stderr)
	}
	if o.stderrBytes > 0 {
		fmt.Fprintln(os.Stderr, strings.Repeat("x", o.stderrBytes))
		fmt.Fprintln(os.Stderr, "after the long line")
	}
	if o.banner != "" {
		fmt.Println(o.banner)
	}
	if o.delay > 0 {
		time.Sleep(o.delay)
	}
}

// newServer is the SDK server with the tools, prompts and middleware the
// flags ask for.
func newServer(o *options) *mcp.Server {
	var sopts *mcp.ServerOptions
	if o.era != "" {
		sopts = &mcp.ServerOptions{SupportedProtocolVersions: []string{o.era}}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: o.name, Version: "1.0.0"}, sopts)
	addEcho(s, o.echoDesc)
	addRoundTrips(s)
	if o.paramHeaders {
		addDeploy(s)
	}
	if o.askPrompt {
		addAskPrompt(s)
	}
	if o.payloads {
		addPayloads(s)
	}
	addCallTools(s, o.echoDesc)
	addClientTools(s)
	addInspectTools(s)
	addGenerated(s, o.alias, o.extra)
	addWireTools(s)
	s.AddReceivingMiddleware(stripUntypedSchema, countLists)
	if o.era >= "2026-07-28" {
		s.AddReceivingMiddleware(refuseInitialize)
	}
	if o.failInit {
		s.AddReceivingMiddleware(failInitialize)
	}
	if o.pages > 0 {
		s.AddReceivingMiddleware(endlessPages(o.pages))
	}
	return s
}

// addCallTools adds the tools whose calls the tests count, cancel, crash
// or fail, and those that change the tool list.
func addCallTools(s *mcp.Server, echoDesc string) {
	mcp.AddTool(s, &mcp.Tool{Name: "slow", Description: "Sleeps for ms milliseconds."}, func(ctx context.Context, _ *mcp.CallToolRequest, in slowIn) (*mcp.CallToolResult, any, error) {
		slowStarted.Add(1)
		select {
		case <-time.After(time.Duration(in.Ms) * time.Millisecond):
			return text("slept %dms", in.Ms), nil, nil
		case <-ctx.Done():
			cancelled.Add(1)
			return nil, nil, ctx.Err()
		}
	})
	mcp.AddTool(s, &mcp.Tool{Name: "read_cancelled", Description: "Counts cancelled slow calls."}, func(_ context.Context, _ *mcp.CallToolRequest, in startedIn) (*mcp.CallToolResult, any, error) {
		if in.Started {
			return text("started: %d", slowStarted.Load()), nil, nil
		}
		return text("cancelled: %d", cancelled.Load()), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "elicit", Description: "Asks the client for a value."}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: in.Message, RequestedSchema: map[string]any{
			"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string"}},
		}})
		if err != nil {
			r := text("elicitation failed: %v", err)
			r.IsError = true
			return r, nil, nil
		}
		return text("%s: %v", res.Action, res.Content["answer"]), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "crash", Description: "Exits the server mid-call."}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		os.Exit(3)
		return nil, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fail", Description: "Always fails."}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		calls.Add(1)
		r := text("failed: %s", in.Message)
		r.IsError = true
		return r, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "count", Description: "Counts calls."}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		return text("calls: %d", calls.Add(1)), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "read_count", Description: "Reads the call count."}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		return text("calls: %d", calls.Load()), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "mutate", Description: "Changes the echo tool's definition."}, func(_ context.Context, _ *mcp.CallToolRequest, in mutateIn) (*mcp.CallToolResult, any, error) {
		redefineEcho(s, in, echoDesc)
		return text("echo redefined"), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "add_tool", Description: "Adds a tool."}, func(_ context.Context, _ *mcp.CallToolRequest, in nameIn) (*mcp.CallToolResult, any, error) {
		mcp.AddTool(s, &mcp.Tool{Name: in.Name, Description: "Added at run time."}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
			return text("I am %s", in.Name), nil, nil
		})
		return text("added %s", in.Name), nil, nil
	})
}

// addClientTools adds the tools that call back to the client: progress,
// sampling, elicitation, roots, logging.
func addClientTools(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "progress", Description: "Reports progress."}, func(ctx context.Context, req *mcp.CallToolRequest, in stepsIn) (*mcp.CallToolResult, any, error) {
		token := req.Params.GetProgressToken()
		for i := 1; i <= in.Steps; i++ {
			if token != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(i), Total: float64(in.Steps), Message: fmt.Sprintf("step %d", i)})
			}
			time.Sleep(5 * time.Millisecond)
		}
		return text("done %d steps", in.Steps), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "sample", Description: "Asks the client to sample."}, func(ctx context.Context, req *mcp.CallToolRequest, in promptIn) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{
			MaxTokens: 50,
			Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: in.Prompt}}},
		})
		if err != nil {
			r := text("sampling failed: %v", err)
			r.IsError = true
			return r, nil, nil
		}
		t, _ := res.Content.(*mcp.TextContent)
		if t == nil {
			return text("sampled: (no text)"), nil, nil
		}
		return text("sampled: %s", t.Text), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "ask_later", Description: "Asks the client for sampling or elicitation after the call."}, func(_ context.Context, req *mcp.CallToolRequest, in askLaterIn) (*mcp.CallToolResult, any, error) {
		go askLater(req.Session, in)
		return text("asking once %s exists", in.File), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "roots", Description: "Lists the client's roots."}, func(ctx context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
		res, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			r := text("roots failed: %v", err)
			r.IsError = true
			return r, nil, nil
		}
		var uris []string
		for _, r := range res.Roots {
			uris = append(uris, r.URI)
		}
		return text("roots: %s", strings.Join(uris, ",")), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "log", Description: "Logs a message."}, func(ctx context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: in.Message})
		return text("logged %s", in.Message), nil, nil
	})
}

// addInspectTools adds the tools that show what the server sees of its
// environment and its request, or write on its own streams.
func addInspectTools(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "env", Description: "Reads an environment variable."}, func(_ context.Context, _ *mcp.CallToolRequest, in nameIn) (*mcp.CallToolResult, any, error) {
		v, ok := os.LookupEnv(in.Name)
		if !ok {
			return text("%s is unset", in.Name), nil, nil
		}
		return text("%s=%s", in.Name, v), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "untyped", Description: "Listed without a schema type."}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		return text("untyped ok"), nil, nil
	})
	s.AddTool(&mcp.Tool{Name: "args", Description: "Returns the raw arguments it received.", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return text("%s", req.Params.Arguments), nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "header", Description: "Returns an HTTP request header."}, func(_ context.Context, req *mcp.CallToolRequest, in nameIn) (*mcp.CallToolResult, any, error) {
		if req.Extra == nil || req.Extra.Header == nil {
			return text("no HTTP headers"), nil, nil
		}
		return text("%s: %s", in.Name, req.Extra.Header.Get(in.Name)), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "garbage", Description: "Writes a bare line on stdout."}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		fmt.Fprintln(os.Stdout, in.Message)
		return text("wrote %q on stdout", in.Message), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "stderr", Description: "Writes a line on stderr."}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		fmt.Fprintln(os.Stderr, in.Message)
		return text("wrote %q on stderr", in.Message), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "pid", Description: "Returns the process id."}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		return text("%d", os.Getpid()), nil, nil
	})
}

// addGenerated adds echo again under alias and extra generated tools.
func addGenerated(s *mcp.Server, alias string, extra int) {
	if alias != "" {
		mcp.AddTool(s, &mcp.Tool{Name: alias, Description: "Echo under another name."}, func(_ context.Context, _ *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
			return text("Alias: %s", in.Message), nil, nil
		})
	}
	for i := 0; i < extra; i++ {
		n := fmt.Sprintf("generated_%04d", i)
		mcp.AddTool(s, &mcp.Tool{Name: n, Description: fmt.Sprintf("Generated tool number %d for listing benchmarks; it does nothing useful.", i)}, func(context.Context, *mcp.CallToolRequest, echoIn) (*mcp.CallToolResult, any, error) {
			return text("%s ok", n), nil, nil
		})
	}
}

// addWireTools adds the tools about the wire itself: raw notifications,
// list requests counted, progress tokens and _meta.
func addWireTools(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "storm", Description: "Writes steps raw tools/list_changed notifications on stdout."}, func(_ context.Context, _ *mcp.CallToolRequest, in stepsIn) (*mcp.CallToolResult, any, error) {
		for range in.Steps {
			fmt.Fprintln(os.Stdout, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
		}
		return text("stormed %d", in.Steps), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "lists", Description: "Counts the tools/list requests received."}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		return text("lists: %d", lists.Load()), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "progress_token", Description: "Returns the progress token it was given."}, func(_ context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
		return text("%v", req.Params.GetProgressToken()), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "meta", Description: "Returns the _meta of its request as JSON."}, func(_ context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
		b, err := json.Marshal(req.Params.Meta)
		return text("%s", b), nil, err
	})
	mcp.AddTool(s, &mcp.Tool{Name: "spoof", Description: "Reports progress under a token it was not given."}, func(ctx context.Context, req *mcp.CallToolRequest, in spoofIn) (*mcp.CallToolResult, any, error) {
		err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: in.Token, Progress: 1, Message: in.Message})
		return text("spoofed: %v", err), nil, nil
	})
}

// serveStreamable serves s over streamable HTTP on addr, with the forget
// and session tools, and never returns.
func serveStreamable(s *mcp.Server, addr string, stateless bool) {
	var forgotten sync.Map
	mcp.AddTool(s, &mcp.Tool{Name: "forget", Description: "Forgets the caller's session after answering."}, func(_ context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
		forgotten.Store(req.Session.ID(), true)
		return text("forgetting %s", req.Session.ID()), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "session", Description: "The caller's session id."}, func(_ context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
		return text("%s", req.Session.ID()), nil, nil
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, &mcp.StreamableHTTPOptions{Stateless: stateless})
	// A forgotten session's every later request is answered 404, as by
	// a server whose session expired; the SDK never sees them.
	log.Fatal(http.ListenAndServe(addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Mcp-Session-Id"); id != "" {
			if _, gone := forgotten.Load(id); gone {
				http.Error(w, "session not found", http.StatusNotFound)
				return
			}
		}
		h.ServeHTTP(w, r)
	})))
}

// askLater waits (two minutes at most) for in.File, then asks the client
// outside any call and writes what came back to in.File + ".out".
func askLater(ss *mcp.ServerSession, in askLaterIn) {
	for range 12000 {
		if _, err := os.Stat(in.File); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var outcome string
	switch in.Kind {
	case "sampling":
		res, err := ss.CreateMessage(ctx, &mcp.CreateMessageParams{
			MaxTokens: 50,
			Messages:  []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "asked outside a call"}}},
		})
		if err != nil {
			outcome = fmt.Sprintf("sampling failed: %v", err)
		} else if t, ok := res.Content.(*mcp.TextContent); ok {
			outcome = "sampled: " + t.Text
		} else {
			outcome = "sampled: (no text)"
		}
	case "elicitation":
		res, err := ss.Elicit(ctx, &mcp.ElicitParams{Message: "asked outside a call", RequestedSchema: map[string]any{
			"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string"}},
		}})
		if err != nil {
			outcome = fmt.Sprintf("elicitation failed: %v", err)
		} else {
			outcome = fmt.Sprintf("%s: %v", res.Action, res.Content["answer"])
		}
	default:
		outcome = "unknown kind " + in.Kind
	}
	_ = writeAtomic(in.File+".out", outcome)
}

// writePid writes the pid atomically, so a reader never sees it half
// written.
func writePid(path string) error {
	return writeAtomic(path, fmt.Sprint(os.Getpid()))
}

func writeAtomic(path, text string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// startHelper starts this binary as a sleeping helper.
func startHelper(pidfile string, setsid bool) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	cmd := exec.Command(exe, "-sleeper", "-pidfile", pidfile)
	cmd.SysProcAttr = helperAttr(setsid)
	return cmd.Start()
}

// sleepForever is the helper: it survives everything but SIGKILL.
func sleepForever() {
	signal.Ignore(syscall.SIGTERM, syscall.SIGHUP, syscall.SIGINT)
	select {}
}

// stripUntypedSchema lists the "untyped" tool with an input schema that
// has no "type", as some real servers do; the SDK would refuse to add one.
func stripUntypedSchema(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if method != "tools/list" || err != nil {
			return res, err
		}
		lr := res.(*mcp.ListToolsResult)
		out := *lr
		out.Tools = make([]*mcp.Tool, len(lr.Tools))
		for i, t := range lr.Tools {
			if t.Name == "untyped" {
				cp := *t
				cp.InputSchema = json.RawMessage(`{"properties":{}}`)
				t = &cp
			}
			out.Tools[i] = t
		}
		return &out, nil
	}
}

// countLists counts tools/list requests, for the storm test.
func countLists(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "tools/list" {
			lists.Add(1)
		}
		return next(ctx, method, req)
	}
}

type bytesIn struct {
	Bytes int `json:"bytes"`
}

type rpcErrorIn struct {
	Code    int64  `json:"code"`
	Message string `json:"message"`
}

// addPayloads adds the -payloads tools.
func addPayloads(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "chatter", Description: "Progress and log messages, then the answer at once."}, func(ctx context.Context, req *mcp.CallToolRequest, in stepsIn) (*mcp.CallToolResult, any, error) {
		token := req.Params.GetProgressToken()
		for i := 1; i <= in.Steps; i++ {
			if token != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: token, Progress: float64(i), Total: float64(in.Steps)})
			}
			_ = req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Data: fmt.Sprintf("step %d", i)})
		}
		return text("chattered %d", in.Steps), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "big", Description: "A text result of the given size."}, func(_ context.Context, _ *mcp.CallToolRequest, in bytesIn) (*mcp.CallToolResult, any, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: strings.Repeat("x", in.Bytes)}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "blob", Description: "A binary blob of the given size."}, func(_ context.Context, _ *mcp.CallToolRequest, in bytesIn) (*mcp.CallToolResult, any, error) {
		b := make([]byte, in.Bytes)
		for i := range b {
			b[i] = byte(i)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "blob://fixture", MIMEType: "application/octet-stream", Blob: b}}}}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "rpcerror", Description: "Answers with a JSON-RPC error."}, func(_ context.Context, _ *mcp.CallToolRequest, in rpcErrorIn) (*mcp.CallToolResult, any, error) {
		return nil, nil, &jsonrpc.Error{Code: in.Code, Message: in.Message}
	})
}

// stateMark is what ask puts in its requestState, so the retry shows the
// state came back unchanged.
const stateMark = "fixture-ask-state"

// addRoundTrips adds the tools of the sessionless protocol's multi
// round-trip requests (and the capabilities a request declared).
func addRoundTrips(s *mcp.Server) {
	mcp.AddTool(s, &mcp.Tool{Name: "ask", Description: "Asks the client for a value by input_required."}, func(_ context.Context, req *mcp.CallToolRequest, in echoIn) (*mcp.CallToolResult, any, error) {
		if res, ok := req.Params.InputResponses["answer"].(*mcp.ElicitResult); ok && res != nil {
			answered.Add(1)
			return text("%s: %v (state %s)", res.Action, res.Content["answer"], req.Params.RequestState), nil, nil
		}
		return &mcp.CallToolResult{
			InputRequests: mcp.InputRequestMap{"answer": &mcp.ElicitParams{Mode: "form", Message: in.Message, RequestedSchema: map[string]any{
				"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string"}},
			}}},
			RequestState: stateMark,
		}, nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "answers", Description: "Counts the answered retries of ask."}, func(context.Context, *mcp.CallToolRequest, empty) (*mcp.CallToolResult, any, error) {
		return text("answers: %d", answered.Load()), nil, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "caps", Description: "Returns the client capabilities of this request."}, func(_ context.Context, req *mcp.CallToolRequest, _ empty) (*mcp.CallToolResult, any, error) {
		b, err := json.Marshal(req.ClientCapabilities())
		return text("%s", b), nil, err
	})
}

// addAskPrompt adds the -ask-prompt prompt.
func addAskPrompt(s *mcp.Server) {
	s.AddPrompt(&mcp.Prompt{Name: "ask", Description: "Asks the client for a value by input_required.", Arguments: []*mcp.PromptArgument{{Name: "topic"}}},
		func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			topic := req.Params.Arguments["topic"]
			if res, ok := req.Params.InputResponses["answer"].(*mcp.ElicitResult); ok && res != nil {
				answered.Add(1)
				msg := fmt.Sprintf("%s: %v (state %s)", topic, res.Content["answer"], req.Params.RequestState)
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: msg}}}}, nil
			}
			return &mcp.GetPromptResult{
				InputRequests: mcp.InputRequestMap{"answer": &mcp.ElicitParams{Mode: "form", Message: topic + "?", RequestedSchema: map[string]any{
					"type": "object", "properties": map[string]any{"answer": map[string]any{"type": "string"}},
				}}},
				RequestState: stateMark,
			}, nil
		})
}

// refuseInitialize answers initialize as a server of the sessionless
// protocol alone does: the method does not exist.
func refuseInitialize(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "initialize" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: `"initialize" is not supported in the new protocol`}
		}
		return next(ctx, method, req)
	}
}

// failInitialize is -fail-init: every initialize fails, as a server's
// does that cannot serve yet, with an error that says nothing of eras.
func failInitialize(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method == "initialize" {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "not ready"}
		}
		return next(ctx, method, req)
	}
}

// addDeploy adds the -param-headers tool.
func addDeploy(s *mcp.Server) {
	schema := json.RawMessage(`{"type":"object","properties":{
		"region":{"type":"string","x-mcp-header":"Region"},
		"replicas":{"type":"integer","x-mcp-header":"Replicas"},
		"target":{"type":"object","properties":{"zone":{"type":"string","x-mcp-header":"Zone"}}},
		"resultType":{"type":"string","description":"a property named like a result's field, <not> a header"}}}`)
	s.AddTool(&mcp.Tool{Name: "deploy", Description: "Deploys nothing; its arguments are mirrored into headers.", InputSchema: schema}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		seen := "no HTTP headers"
		if req.Extra != nil && req.Extra.Header != nil {
			seen = "Mcp-Param-Region: " + req.Extra.Header.Get("Mcp-Param-Region")
		}
		return text("deployed %s; %s", req.Params.Arguments, seen), nil
	})
}
