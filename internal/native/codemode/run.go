package codemode

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"golang.org/x/sync/semaphore"

	"github.com/evokore/evokore/internal/procgroup"
	"github.com/evokore/evokore/internal/router"
)

// Caller runs one of the program's tool calls through the router's
// pipeline, as the calling session.
type Caller func(ctx context.Context, name string, args json.RawMessage) (*mcp.CallToolResult, error)

// Outcome is how a run ended, as the model is told.
type Outcome struct {
	// Value is the program's returned value as JSON; when it was longer
	// than Limits.Output it is a JSON string of its first bytes and
	// Truncated says how long it was.
	Value     json.RawMessage `json:"value,omitempty"`
	Truncated int             `json:"truncatedFrom,omitempty"`
	// Log is what the program wrote with console.log, up to
	// Limits.Output bytes; LogDropped counts the lines left out.
	Log        []string `json:"log,omitempty"`
	LogDropped int      `json:"logLinesDropped,omitempty"`
	// Calls is how many tool calls the program made.
	Calls int `json:"calls"`
	// Error is why the run failed: the program threw, or a bound
	// stopped it.
	Error string `json:"error,omitempty"`
}

// parallel is how many of one program's tool calls run at once
// (Promise.all over many reads).
const parallel = 4

// maxQueued bounds the bytes of the calls waiting for a slot (their
// names and arguments): one frame's worth, so any call fits.
const maxQueued = maxFrame

// stderrTail is how much of the sandbox's stderr is kept to say why it
// died.
const stderrTail = 4 << 10

// Run runs code in a sandbox process that command starts, under l,
// sending each tool call to call. Run returns once the sandbox is gone
// and every tool call it started has returned; calls still running when
// the program ended are cancelled.
func Run(ctx context.Context, command func() (procgroup.Spec, error), code string, l Limits, call Caller) Outcome {
	r := &run{limits: l, call: call}
	ctx, cancel := context.WithTimeout(ctx, l.Wall)
	defer cancel()
	r.ctx = ctx
	r.callCtx, r.endCalls = context.WithCancel(ctx)
	defer r.endCalls()
	r.callCtx = router.WithApprovalWaits(r.callCtx, r.approvalWait)
	r.execute(command, code)
	r.calls.Wait()
	r.sayWhatItWaitedFor()
	return r.out
}

// approvalWait follows the approvals the program's calls wait for. A wait
// that ended because the run did is kept: the run's answer names it.
func (r *run) approvalWait(tool, id string, waiting bool) {
	r.waitMu.Lock()
	defer r.waitMu.Unlock()
	if r.waits == nil {
		r.waits = map[string]string{}
	}
	switch {
	case waiting:
		r.waits[id] = tool
	case r.ctx.Err() == nil:
		delete(r.waits, id)
	}
}

// sayWhatItWaitedFor answers a run whose wall time ended while a call
// waited for a human's decision with what it waited for (the tool, the
// approval id, who decides), not only with the bound it met: the model
// learns the call is pending, not that its program was slow. Nothing in
// it says how to approve.
func (r *run) sayWhatItWaitedFor() {
	r.waitMu.Lock()
	defer r.waitMu.Unlock()
	if len(r.waits) == 0 || r.out.Error != wallTimeText(r.limits.Wall) {
		return
	}
	ids := make([]string, 0, len(r.waits))
	for id := range r.waits {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var calls []string
	for _, id := range ids {
		calls = append(calls, fmt.Sprintf("'%s' (approval id %s)", r.waits[id], id))
	}
	r.out.Error = fmt.Sprintf("the program was waiting for approval when its wall time of %s ended: %s waiting for the user or an operator, "+
		"who decide outside this conversation. It did not run; the approval stays pending, and once it is approved the same call runs once.",
		r.limits.Wall, strings.Join(calls, " and "))
}

// wallTimeText is the error of a run that met its wall time.
func wallTimeText(wall time.Duration) string {
	return fmt.Sprintf("the run exceeded its wall time of %s", wall)
}

type run struct {
	// ctx is the run's, bounded by its wall time; callCtx, the tool
	// calls', also ends (endCalls) when the program does: nothing is
	// left to read a result, and a call held for approval would hold
	// the answer until the wall time.
	ctx      context.Context
	callCtx  context.Context
	endCalls context.CancelFunc
	limits   Limits
	call     Caller
	out      Outcome
	logLen   int

	stdin   io.WriteCloser
	writeMu sync.Mutex
	calls   sync.WaitGroup
	slots   chan struct{}
	queued  *semaphore.Weighted

	waitMu sync.Mutex
	waits  map[string]string // approval id → tool, of the calls waiting for a human
}

func (r *run) execute(command func() (procgroup.Spec, error), code string) {
	spec, err := command()
	if err != nil {
		r.out.Error = "cannot start the sandbox: " + err.Error()
		return
	}
	// The sandbox inherits nothing but the launcher's tree mark and its
	// own sandboxEnv: none of the router's environment, no files but its
	// three pipes. The launcher gives it a process group of its own, so
	// a signal to the router's group (Ctrl-C at a terminal: a graceful
	// shutdown that lets calls finish; SIGHUP: a reload) does not end a
	// run, and on Linux the parent-death signal, so a router killed
	// mid-run leaves no program running.
	spec.Env = procgroup.Env{Set: sandboxEnv}
	keepFilesFromSandbox()
	cmd := procgroup.Command(r.ctx, spec)
	stderr := &tail{max: stderrTail}
	cmd.Stderr = stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		r.out.Error = "cannot start the sandbox: " + err.Error()
		return
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		r.out.Error = "cannot start the sandbox: " + err.Error()
		return
	}
	defer stdout.Close()
	if err := cmd.Start(); err != nil {
		r.out.Error = "cannot start the sandbox: " + err.Error()
		return
	}
	r.stdin = stdin
	r.slots = make(chan struct{}, parallel)
	r.queued = semaphore.NewWeighted(maxQueued)
	// Whatever ends the run ends the process (the run's context ending
	// kills it through the launcher); Wait then reaps it.
	stopped := make(chan struct{})
	go func() {
		<-stopped
		cmd.Kill()
	}()
	finished := r.converse(stdout, code)
	r.endCalls()
	close(stopped)
	_ = stdin.Close()
	waitErr := cmd.Wait()
	if finished {
		// A program may still catch what the run's end did to its calls
		// (a call cut short, an approval no longer waited for) and throw
		// before the launcher's kill lands: the run met its wall time all
		// the same, and says so.
		if r.out.Error != "" && errors.Is(r.ctx.Err(), context.DeadlineExceeded) {
			r.out.Error = wallTimeText(r.limits.Wall)
		}
		return
	}
	if r.out.Error == "" {
		r.out.Error = r.death(waitErr, cmd.ProcessState, stderr.String())
	}
}

// converse feeds the program and serves its frames until it is done
// (true) or the conversation broke (false, with out.Error set when the
// router ended it).
func (r *run) converse(stdout io.Reader, code string) bool {
	if err := r.write(start{Code: code, Limits: r.limits}); err != nil {
		return false
	}
	frames := newFrameReader(stdout)
	for {
		var m message
		if err := frames.next(&m); err != nil {
			if errors.Is(err, errFrameTooLarge) {
				r.out.Error = "the program sent " + err.Error()
			}
			return false
		}
		switch {
		case m.Done != nil:
			r.finish(*m.Done)
			return true
		case m.Log != nil:
			r.log(*m.Log)
		case m.Call != nil:
			r.out.Calls++
			if r.out.Calls > r.limits.Calls {
				r.out.Calls--
				r.out.Error = fmt.Sprintf("the program tried to make more than %d tool calls, the bound of one run", r.limits.Calls)
				return false
			}
			// A call waiting for its slot holds its arguments, up to a
			// frame each: past maxQueued bytes of them the router reads
			// no further frame until one starts, so the program's writes
			// wait rather than the router's memory growing by 16 MiB a
			// call (the sandbox's own memory is bounded, the router's
			// is not).
			n := int64(len(m.Call.Name) + len(m.Call.Args))
			if err := r.queued.Acquire(r.callCtx, n); err != nil {
				return false
			}
			r.dispatch(*m.Call, n)
		default:
			r.out.Error = "the sandbox sent a frame the router does not know"
			return false
		}
	}
}

// dispatch runs one tool call on its own goroutine, parallel at a time,
// and replies to the program; once the call has its slot (or never will)
// it gives back the queued bytes its frame took.
func (r *run) dispatch(c callFrame, queued int64) {
	r.calls.Add(1)
	go func() {
		defer r.calls.Done()
		select {
		case r.slots <- struct{}{}:
			r.queued.Release(queued)
		case <-r.callCtx.Done():
			r.queued.Release(queued)
			return
		}
		defer func() { <-r.slots }()
		if r.callCtx.Err() != nil {
			// The run ended while this call waited for its slot (select
			// picks either ready case).
			return
		}
		args := c.Args
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		res, err := r.call(r.callCtx, c.Name, args)
		_ = r.write(answer(c.ID, c.Name, res, err))
	}()
}

// answer turns a tool's result into the program's reply: the structured
// content when the tool gave one, else the content blocks; an error
// result or a refusal rejects the promise with its text.
func answer(id int, name string, res *mcp.CallToolResult, err error) reply {
	if err != nil {
		return reply{ID: id, Error: name + ": " + err.Error()}
	}
	if res == nil {
		return reply{ID: id, Error: name + ": no result"}
	}
	if res.IsError || res.InputRequests != nil {
		text := resultText(res)
		if text == "" {
			text = "the tool reported an error"
		}
		return reply{ID: id, Error: name + ": " + text}
	}
	var v any = res.Content
	if res.StructuredContent != nil {
		v = res.StructuredContent
	}
	if res.Content == nil && res.StructuredContent == nil {
		v = []any{}
	}
	b, err := marshal(v)
	if err != nil {
		return reply{ID: id, Error: name + ": its result cannot be JSON: " + err.Error()}
	}
	return reply{ID: id, Result: b}
}

func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func (r *run) write(v any) error {
	r.writeMu.Lock()
	defer r.writeMu.Unlock()
	return writeFrame(r.stdin, v)
}

func (r *run) log(line string) {
	// A line costs what it adds to the answer's log as JSON: its quotes,
	// its escapes (six bytes for a control character) and a comma, the
	// brackets one byte more; counting its bare bytes let a million empty
	// lines carry megabytes past the bound. It takes at least three more
	// than its bare bytes, enough to refuse a long one without encoding.
	size := len(line) + 3
	if 1+r.logLen+size <= r.limits.Output {
		b, _ := marshal(line)
		size = len(b) + 1
	}
	if 1+r.logLen+size > r.limits.Output {
		r.out.LogDropped++
		return
	}
	r.logLen += size
	r.out.Log = append(r.out.Log, line)
}

func (r *run) finish(d done) {
	if d.Error != "" {
		// The program writes its error (what it threw, what a getter
		// threw while its value became JSON): bounded as its value is,
		// or a thrown 15 MiB message would reach the model whole.
		r.out.Error = cut(d.Error, r.limits.Output)
		return
	}
	v := d.Value
	if len(v) > r.limits.Output {
		r.out.Truncated = len(v)
		v = head(v, r.limits.Output)
	}
	r.out.Value = v
}

// head is the JSON string of v's first bytes, whole characters, that
// fits in bound bytes as a string: a quote or backslash of v takes two
// bytes there and a control character six, so it cuts again, by at
// least what it is over by a sixth, until the string fits.
func head(v []byte, bound int) []byte {
	n := bound
	for {
		for n > 0 && n < len(v) && !utf8.RuneStart(v[n]) {
			n--
		}
		s, _ := marshal(string(v[:n]))
		if len(s) <= bound || n == 0 {
			return s
		}
		n -= (len(s) - bound + 5) / 6
	}
}

// cut is s within max bytes, whole characters only, saying how long it
// was when it was longer.
func cut(s string, max int) string {
	if len(s) <= max {
		return s
	}
	n := max
	for n > 0 && !utf8.RuneStart(s[n]) {
		n-- // not inside a character
	}
	return fmt.Sprintf("%s… (cut from %d bytes)", s[:n], len(s))
}

// death says why the sandbox ended without finishing.
func (r *run) death(waitErr error, ps *os.ProcessState, stderr string) string {
	switch {
	case errors.Is(r.ctx.Err(), context.DeadlineExceeded):
		return wallTimeText(r.limits.Wall)
	case r.ctx.Err() != nil:
		return "the run was cancelled"
	case outOfMemory(stderr):
		return fmt.Sprintf("the program ran out of memory (bound: %d MiB)", r.limits.Memory>>20)
	case ps != nil && r.limits.CPU > 0 && ps.UserTime()+ps.SystemTime() >= r.limits.CPU:
		return fmt.Sprintf("the program used its %s of CPU time", r.limits.CPU)
	}
	msg := "the sandbox stopped"
	if waitErr != nil {
		msg += " (" + waitErr.Error() + ")"
	}
	if s := strings.TrimSpace(stderr); s != "" {
		msg += ": " + firstLine(s)
	}
	return msg
}

// outOfMemory reports whether the sandbox's stderr says a mapping failed:
// the Go runtime's words, or those of a -race build's ThreadSanitizer
// (test binaries serve as the sandbox under `go test -race`).
func outOfMemory(stderr string) bool {
	for _, sign := range []string{"out of memory", "cannot allocate memory", "address space", "failed to allocate"} {
		if strings.Contains(stderr, sign) {
			return true
		}
	}
	return false
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// tail keeps the first max bytes written to it (the Go runtime's fatal
// error comes first; its goroutine dump after).
type tail struct {
	mu  sync.Mutex
	max int
	buf bytes.Buffer
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if room := t.max - t.buf.Len(); room > 0 {
		t.buf.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.buf.String()
}

// SelfCommand is this binary run as the sandbox.
func SelfCommand() (procgroup.Spec, error) {
	exe, err := os.Executable()
	if err != nil {
		return procgroup.Spec{}, err
	}
	return procgroup.Spec{Path: exe, Args: []string{SandboxArg}}, nil
}
