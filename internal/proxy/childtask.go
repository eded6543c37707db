package proxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/rawjson"
)

// A child's own tasks (MCP 2025-11-25's experimental tasks).
//
// A child that declares task-augmented tools/call
// (capabilities.tasks.requests.tools.call) may list a tool with
// execution.taskSupport "optional" or "required"; a "required" one
// refuses a plain call. The router passes such a call through as the
// child's own task when the call runs as a router task (any support) or
// when the child refuses it otherwise ("required"): it sends the
// tools/call with params.task, polls the child's tasks/get at the
// child's pollInterval (within minPoll and maxPoll) until the task ends
// or asks for input, then reads tasks/result, which waits for its end
// and is what the call answers, as if the child had answered a plain
// call. So the layers above see a plain call: a router task keeps its
// result, and a plain call, of a client of either era or one without
// tasks, is answered when the child's task ends.
//
// The child's task id stays here: the result goes on without the
// related-task _meta naming it, and an elicitation the child sends for
// it without it too (named, era.go). Callers only ever see the router's
// task ids, whose owner rule isolates them.
//
// The call's end is the child's task's: a cancelled call (the client
// cancelled its router task, or its request; the router task's ttl ran
// out) and a call past its deadline send the child tasks/cancel.
//
// A task that asks for input (input_required) sends its requests
// (elicitation, sampling) as requests over the connection, related to
// tasks/result, which the router calls at once: they reach the caller as
// a plain call's requests do (routes, peerFor; held.go for a caller of
// 2026-07-28).
//
// The line wire (a stdio child) carries a child's tasks, and so does a
// streamable HTTP child's carrier, whose SDK client has no
// task-augmented tools/call and keeps neither the capability nor a
// tool's execution: its poster sends them as POSTs in the client's
// session, and its greeter reads the capability from the handshake's
// answer as it goes by (carrier.go). An SSE child's tools are called plainly.

// Bounds of the interval at which a child's task is polled.
const (
	minPoll     = 100 * time.Millisecond
	maxPoll     = 5 * time.Second
	defaultPoll = time.Second
)

// relatedTaskKey is the _meta key that names the task a message belongs
// to.
const relatedTaskKey = "io.modelcontextprotocol/related-task"

// A taskCarrier is a carrier that can run a call as the child's own
// task: carry with toolRequest.taskTTL set answers the task created, and
// request sends the tasks/* requests.
type taskCarrier interface {
	carrier
	// declaresTasks reports whether the child declared task-augmented
	// tools/call.
	declaresTasks() bool
	// request sends one request and returns its result.
	request(ctx context.Context, method string, params []byte, deadline time.Time) ([]byte, error)
}

func (wr *wire) declaresTasks() bool { return wr.tasks.Load() }

// childTask is a child's task as tasks/get and the CreateTaskResult show
// it.
type childTask struct {
	TaskID       string `json:"taskId"`
	Status       string `json:"status"`
	PollInterval *int64 `json:"pollInterval"`
}

func (t childTask) ended() bool {
	switch t.Status {
	case "completed", "failed", "cancelled":
		return true
	}
	return false
}

// poll is how long to wait before asking for the task again.
func (t childTask) poll() time.Duration {
	if t.PollInterval == nil {
		return defaultPoll
	}
	return min(max(time.Duration(*t.PollInterval)*time.Millisecond, minPoll), maxPoll)
}

// taskTTL is the lifetime a call of c asks the child's task for, and
// whether c runs as the child's task at all: when the child declared
// tasks and the tool supports them, and either the tool needs one or c
// is a router task. A router task's child task lives as long as it does;
// a plain call's for the request timeout.
func (t *toolCall) taskTTL() (time.Duration, bool) {
	tc, ok := t.k.carrier.(taskCarrier)
	if !ok || !tc.declaresTasks() {
		return 0, false
	}
	switch t.ch.taskSupport(t.c.Entry.Original) {
	case "required":
	case "optional":
		if t.c.Task == nil {
			return 0, false
		}
	default:
		return 0, false
	}
	if ttl, ok := t.c.Task.(interface{ TTL() time.Duration }); ok && ttl.TTL() > t.timeout {
		return ttl.TTL(), true
	}
	return t.timeout, true
}

// carryTask carries req as the child's own task on tc and returns what
// tasks/result answered, as a plain call's answer; each request to the
// child is bounded by step and the whole by req.deadline. A child that
// answers the call without making a task is answered as a plain call.
func carryTask(ctx context.Context, tc taskCarrier, req toolRequest, step time.Duration) (answer, error) {
	end := req.deadline
	first := req
	first.deadline = earlier(end, step)
	created, err := tc.carry(ctx, first)
	if err != nil {
		return created, err
	}
	var made struct {
		Task *childTask `json:"task"`
	}
	if json.Unmarshal(created.raw, &made) != nil || made.Task == nil {
		return created, nil
	}
	task := *made.Task
	if task.TaskID == "" {
		return answer{}, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the server made a task without a taskId"}
	}
	params, _ := json.Marshal(map[string]string{"taskId": task.TaskID})
	over := false // the child's task has ended, or answered tasks/result
	defer func() {
		if !over {
			cancelTask(ctx, tc, params, step)
		}
	}()
	timer := time.NewTimer(task.poll())
	defer timer.Stop()
	for !task.ended() && task.Status != "input_required" {
		select {
		case <-ctx.Done():
			return answer{}, ctx.Err()
		case <-timer.C:
		}
		if !time.Now().Before(end) {
			return answer{}, context.DeadlineExceeded
		}
		raw, err := tc.request(ctx, "tasks/get", params, earlier(end, step))
		if err != nil {
			return answer{}, err
		}
		if err := json.Unmarshal(raw, &task); err != nil {
			return answer{}, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "the server answered tasks/get with something evokore cannot read: " + err.Error()}
		}
		over = task.ended()
		timer.Reset(task.poll())
	}
	// tasks/result waits for the end, and carries the requests of a task
	// that asks for input meanwhile.
	raw, err := tc.request(ctx, "tasks/result", params, end)
	var we *jsonrpc.Error
	over = err == nil || errors.As(err, &we)
	if err != nil {
		return answer{}, err
	}
	return answer{raw: withoutMeta(raw, relatedTaskKey)}, nil
}

// cancelTask tells the child its task is given up, within step, after
// ctx (the call's) ended.
func cancelTask(ctx context.Context, tc taskCarrier, params []byte, step time.Duration) {
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), step)
	defer cancel()
	_, _ = tc.request(cctx, "tasks/cancel", params, time.Now().Add(step))
}

// earlier is the earlier of end and step from now.
func earlier(end time.Time, step time.Duration) time.Time {
	if d := time.Now().Add(step); d.Before(end) {
		return d
	}
	return end
}

// toolPage is one page of a child's tools as the router reads their task
// support (the SDK's client does not keep a tool's execution).
type toolPage struct {
	Tools []struct {
		Name      string `json:"name"`
		Execution struct {
			TaskSupport string `json:"taskSupport"`
		} `json:"execution"`
	} `json:"tools"`
	NextCursor string `json:"nextCursor"`
}

// listTaskSupport reads which of the child's tools on k run as its own
// tasks ("optional" or "required") when k's carrier can carry them and
// the child declared them: nil otherwise.
func listTaskSupport(ctx context.Context, k *conn, timeout time.Duration) (map[string]string, error) {
	tc, ok := k.carrier.(taskCarrier)
	if !ok || !tc.declaresTasks() {
		return nil, nil
	}
	deadline := time.Now().Add(timeout)
	out := map[string]string{}
	cursor := ""
	for range maxListPages {
		params := []byte("{}")
		if cursor != "" {
			params, _ = json.Marshal(map[string]string{"cursor": cursor})
		}
		raw, err := tc.request(ctx, "tools/list", params, deadline)
		if err != nil {
			return nil, fmt.Errorf("listing tools for their task support: %w", err)
		}
		var p toolPage
		if err := json.Unmarshal(raw, &p); err != nil {
			return nil, fmt.Errorf("listing tools for their task support: %w", err)
		}
		for _, t := range p.Tools {
			if s := t.Execution.TaskSupport; s == "optional" || s == "required" {
				out[t.Name] = s
			}
		}
		if p.NextCursor == "" || p.NextCursor == cursor || len(out) > maxListItems {
			break
		}
		cursor = p.NextCursor
	}
	return out, nil
}

// taskSupport is how the child's tool runs as the child's own task:
// "optional", "required" or "" (not at all, or not through the router).
func (c *child) taskSupport(tool string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.taskTools[tool]
}

// readTaskSupport reads which tools the child on k runs as its own
// tasks (listTaskSupport); one it cannot read is run plainly, saying why
// in the log.
func (c *child) readTaskSupport(ctx context.Context, k *conn) {
	m, err := listTaskSupport(ctx, k, c.sup.bootTimeout(c.spec))
	if err != nil {
		c.sup.log.Info("[EVOKORE] Cannot read which tools run as the server's own tasks; calling them plainly", "server", c.spec.ID, "err", c.redact.Replace(err.Error()))
	}
	c.mu.Lock()
	c.taskTools = m
	c.mu.Unlock()
}

// listedSupport is the task support callers are shown for the child's
// tools: a server's "tasks" in mcp.config.json, and else "optional" for
// a tool the child runs as its own task (the router runs a "required"
// one's task for a plain call too).
func (c *child) listedSupport() map[string]string {
	c.mu.Lock()
	own := c.taskTools
	c.mu.Unlock()
	if len(own) == 0 {
		return c.spec.Tasks
	}
	out := maps.Clone(c.spec.Tasks)
	if out == nil {
		out = map[string]string{}
	}
	for name := range own {
		if out[name] == "" {
			out[name] = "optional"
		}
	}
	return out
}

// withoutMeta is a raw result without _meta's member key (and without
// _meta when nothing else is left in it).
func withoutMeta(res []byte, key string) []byte {
	meta := rawjson.Member(res, "_meta")
	if meta == nil || rawjson.Member(meta, key) == nil {
		return res
	}
	out := append(make([]byte, 0, len(res)), '{')
	sep := ""
	_ = rawjson.RawMembers(res, func(name, v []byte) bool {
		if string(rawjson.Name(name)) == "_meta" {
			m := []byte{'{'}
			msep := ""
			_ = rawjson.RawMembers(v, func(k, mv []byte) bool {
				if string(rawjson.Name(k)) != key {
					m = append(append(append(append(m, msep...), k...), ':'), mv...)
					msep = ","
				}
				return true
			})
			if msep == "" {
				return true // nothing else in _meta
			}
			v = append(m, '}')
		}
		out = append(append(append(append(out, sep...), name...), ':'), v...)
		sep = ","
		return true
	})
	return append(out, '}')
}

// withoutRelated is a child's request's _meta without the related-task
// member, which names the child's own task.
func withoutRelated(meta mcp.Meta) mcp.Meta {
	if _, ok := meta[relatedTaskKey]; !ok {
		return meta
	}
	out := maps.Clone(meta)
	delete(out, relatedTaskKey)
	return out
}
