package server

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/era"
	"github.com/evokore/evokore/internal/ingress"
	"github.com/evokore/evokore/internal/router"
	"github.com/evokore/evokore/internal/session"
	"github.com/evokore/evokore/internal/tasks"
)

// Tasks (MCP tasks, both eras) are the router's own: the go-sdk knows
// neither the task-augmented tools/call nor the tasks/* methods, so both
// come in through the byte path (ingress.Methods, Take) and run the call
// through the router's pipeline like any other, as a task of package
// tasks. Any tool may run as one, native or a child's that knows nothing
// of tasks; a tool's task support (evokore.cue, a server's "tasks" in
// mcp.config.json) says whether it may, must or must not.
//
//	2025-11-25 (a session)   tools/call with params.task: a task at once
//	                         tasks/get, tasks/result, tasks/list, tasks/cancel
//	2026-07-28               a tools/call whose request declares the
//	                         extension: answered directly if it ends (or
//	                         asks for input) within EVOKORE_TASK_AFTER_MS,
//	                         else a task; tasks/get, tasks/update,
//	                         tasks/cancel, for such requests only
//
// A task belongs to its caller: its tenant and subject, or its session
// when it has none; nobody else finds it.

// The task support a tool may declare.
const (
	taskOptional  = "optional"
	taskRequired  = "required"
	taskForbidden = "forbidden"
)

// Errors of the tasks surface.
var (
	errTaskNotFound = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Failed to retrieve task: Task not found (it never existed, expired, or is not yours)"}
	errTaskID       = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "params.taskId must be a string"}
	// errNeedsTasks refuses a request that needs the tasks extension
	// from a client that did not declare it with the request (SEP-2575).
	errNeedsTasks = &jsonrpc.Error{Code: mcp.CodeMissingRequiredClientCapabilities, Message: "Missing required client capability: the tasks extension (" + tasks.ExtensionID + ")",
		Data: json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + tasks.ExtensionID + `":{}}}}`)}
)

// taskOwner is who a session's tasks belong to: its tenant and subject,
// else the session itself.
func taskOwner(sess *session.Session) string {
	if id := sess.Identity; id.Subject != "" {
		return "subject:" + id.Tenant + "\x00" + id.Subject
	}
	return "session:" + sess.ID
}

// taskEra says which tasks a request speaks: sessionless (2026-07-28)
// or not, and false when it speaks none (a session before its handshake,
// or of a version older than tasks).
func taskEra(r ingress.Request) (sessionless, ok bool) {
	v := r.Version()
	if r.Sessionless() {
		return true, era.Served(v)
	}
	if v == "" && r.View.InitializeParams() == nil {
		// Over stdio the client's initialize is answered by the greeting
		// while the router is built, and the view may read it after the
		// calls that follow it are offered here: a call that asks for a
		// task (params.task, which only clients of 2025-11-25 and later
		// send) is of that era.
		return false, true
	}
	return false, v >= era.SessionVersion
}

// declaresTasks reports whether a request's _meta declares the tasks
// extension among its client capabilities.
func declaresTasks(meta []byte) bool {
	var m struct {
		Caps struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
		} `json:"io.modelcontextprotocol/clientCapabilities"`
	}
	return meta != nil && json.Unmarshal(meta, &m) == nil && m.Caps.Extensions[tasks.ExtensionID] != nil
}

// refuse is a Call answered with err.
func refuse(err error) ingress.Call {
	return ingress.Result(func(context.Context) ([]byte, error) { return nil, err })
}

// taskParams are a tools/call's params as a task reads them.
type taskParams struct {
	Name           string                `json:"name"`
	Arguments      json.RawMessage       `json:"arguments,omitempty"`
	Meta           mcp.Meta              `json:"_meta,omitempty"`
	Task           *struct{ TTL *int64 } `json:"task,omitempty"`
	RequestState   string                `json:"requestState,omitempty"`
	InputResponses mcp.InputResponseMap  `json:"inputResponses,omitempty"`
}

// takeTask is the tasks' part of Take: the tools/call r when it may run
// as a task (its request declares the extension, or asks for a task), or
// when its tool runs only as one and the request cannot have one (it is
// refused); false leaves it to the rest of the rule.
func (s *Server) takeTask(r ingress.Request) (ingress.Call, bool) {
	sessionless, ok := taskEra(r)
	if !ok || r.Message.Params == nil {
		return nil, false
	}
	var p taskParams
	if json.Unmarshal(r.Message.Params, &p) != nil || p.Name == "" {
		return nil, false // the SDK path refuses it
	}
	entry, found := s.catalog.Snapshot().Lookup(p.Name)
	if sessionless && !declaresTasks(r.Meta()) || !sessionless && p.Task == nil {
		if found && entry.TaskSupport == taskRequired {
			if sessionless {
				return refuse(errNeedsTasks), true
			}
			return refuse(router.MethodNotFound("'" + entry.Name + "' runs only as a task: call it with params.task")), true
		}
		return nil, false
	}
	sess := r.View.Session()
	if sess.Stateless && sess.Peer == nil {
		peer, ok := session.RequestPeer(r.Meta())
		if !ok {
			return nil, false
		}
		sess.Peer = peer
	}
	notify := r.Via.Notify
	return ingress.Result(func(ctx context.Context) ([]byte, error) {
		if !found {
			// A child still booting: the router's resolver waits for it
			// or says why it cannot.
			e, err := s.proxy.Resolve(ctx, p.Name)
			if err != nil {
				return nil, router.WireError(err)
			}
			if e == nil {
				return nil, router.WireError(router.UnknownTool(p.Name))
			}
			entry = e
		}
		step := s.taskStep(entry, sess, p, sessionless)
		spec, err := taskSpec(entry, p, sessionless, notify)
		switch {
		case errors.Is(err, errNoTask):
			ans := step(ctx, nil, nil)
			if ans.Error != nil {
				return nil, ans.Error
			}
			return ans.Result, nil
		case err != nil:
			return nil, err
		}
		spec.Owner = taskOwner(sess)
		return s.runTask(ctx, spec, step, sessionless)
	}), true
}

// taskSpec is the task a call of e makes, by the tool's task support and
// the client's era: 2026-07-28 (the server decides: a quick call is
// answered, a longer one becomes a task, a tool that runs only as a task
// is one even when quick; a params.task of 2025-11-25 is ignored) or
// 2025-11-25 (the client asked for a task: it is one at once). A tool
// that never runs as a task runs as a plain call (spec.After zero and
// Wrap false with sessionless) or is refused (2025-11-25).
func taskSpec(e *catalog.Entry, p taskParams, sessionless bool, notify func(string, []byte) error) (tasks.Spec, error) {
	spec := tasks.Spec{Tool: e.Name}
	if sessionless {
		spec.Era, spec.Wrap = era.SessionlessVersion, e.TaskSupport == taskRequired
		if e.TaskSupport == taskForbidden {
			return spec, errNoTask
		}
		return spec, nil
	}
	if e.TaskSupport == taskForbidden {
		return spec, router.MethodNotFound("'" + e.Name + "' does not run as a task")
	}
	spec.Era, spec.After = era.SessionVersion, -1
	if p.Task.TTL != nil && *p.Task.TTL > 0 {
		spec.TTL = time.Duration(*p.Task.TTL) * time.Millisecond
	}
	if notify != nil {
		spec.Notify = func(rec *tasks.Record) { _ = notify("notifications/tasks/status", rec.LegacyTask()) }
	}
	return spec, nil
}

// errNoTask says a call of the sessionless era runs without a task.
var errNoTask = errors.New("no task")

// runTask starts a task and answers with its handle, or with the call's
// own answer when it came first.
func (s *Server) runTask(ctx context.Context, spec tasks.Spec, step tasks.Step, sessionless bool) ([]byte, error) {
	rec, ans, err := s.tasks.Start(ctx, spec, step)
	if errors.Is(err, tasks.ErrBusy) && sessionless {
		// The server decides whether a call is a task: at its bound,
		// this one is answered when it ends.
		err = nil
	}
	if rec == nil && ans == nil && err == nil {
		a := step(ctx, nil, nil)
		ans = &a
	}
	switch {
	case err != nil:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	case rec != nil && sessionless:
		return rec.CreateResult(), nil
	case rec != nil:
		return rec.LegacyCreateResult(), nil
	case ans.Error != nil:
		return nil, ans.Error
	}
	return ans.Result, nil
}

// taskStep runs one round of a task's call through the router: the
// first with what the client sent, the next ones with the client's
// answers to the input the call asked for.
func (s *Server) taskStep(e *catalog.Entry, sess *session.Session, p taskParams, sessionless bool) tasks.Step {
	meta := p.Meta
	if _, ok := meta["progressToken"]; ok {
		// A task's progress has no stream to go to once it is answered.
		meta = maps.Clone(meta)
		delete(meta, "progressToken")
	}
	return func(ctx context.Context, h tasks.Handle, in *tasks.Input) tasks.Answer {
		c := &router.Call{Entry: e, Session: sess, Args: p.Arguments, Meta: meta}
		if p.RequestState != "" || p.InputResponses != nil {
			c.Input = &router.Input{State: p.RequestState, Responses: p.InputResponses}
		}
		if in != nil {
			responses, err := inputResponses(in.Responses)
			if err != nil {
				return tasks.Answer{Error: &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}}
			}
			c.Input = &router.Input{State: in.State, Responses: responses}
		}
		if h != nil {
			c.Task = h
			ctx = router.WithTask(ctx, h)
		}
		if e.Source == catalog.SourceProxy {
			c.Raw = &router.RawResult{}
		}
		sess.Touch()
		res, err := s.router.Run(ctx, c)
		return taskAnswer(c, res, err, sessionless)
	}
}

// taskAnswer is how one round of a task's call ended, its result framed
// for the client's era.
func taskAnswer(c *router.Call, res *mcp.CallToolResult, err error, sessionless bool) tasks.Answer {
	if err != nil {
		var we *jsonrpc.Error
		if !errors.As(router.WireError(err), &we) {
			we = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
		return tasks.Answer{Error: we}
	}
	if c.Raw != nil && res != nil && res == c.Raw.Result {
		raw := c.Raw.Bytes
		if sessionless {
			raw = era.CompleteBytes(raw)
		}
		return tasks.Answer{Result: raw, IsError: res.IsError}
	}
	raw, err := era.ResultBytes(res, sessionless)
	if err != nil {
		return tasks.Answer{Error: &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "cannot encode the result: " + err.Error()}}
	}
	ans := tasks.Answer{Result: raw, IsError: res != nil && res.IsError}
	if res != nil && res.InputRequests != nil {
		if b, err := json.Marshal(res.InputRequests); err == nil && json.Unmarshal(b, &ans.Input) == nil {
			ans.State = res.RequestState
		}
	}
	return ans
}

// inputResponses decodes a round's answers as the router's call takes
// them.
func inputResponses(raw map[string]json.RawMessage) (mcp.InputResponseMap, error) {
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	var out mcp.InputResponseMap
	return out, json.Unmarshal(b, &out)
}

// The tasks/* methods.

// taskRequest is a tasks/* request as its method reads it.
type taskRequest struct {
	sessionless bool
	owner       string
	id          string
	params      []byte
}

// taskMethod adapts a tasks/* method: the era it exists in (legacy for
// 2025-11-25, current for 2026-07-28), the extension a 2026-07-28 request
// must declare, and a string taskId (needless for tasks/list).
func (s *Server) taskMethod(legacy, current, needsID bool, serve func(context.Context, taskRequest) ([]byte, error)) ingress.Method {
	return func(r ingress.Request) (ingress.Call, bool) {
		sessionless, ok := taskEra(r)
		if !ok || sessionless && !current || !sessionless && !legacy {
			return nil, false // not in this era: the SDK answers -32601
		}
		if sessionless && !declaresTasks(r.Meta()) {
			return refuse(errNeedsTasks), true
		}
		q := taskRequest{sessionless: sessionless, owner: taskOwner(r.View.Session()), params: r.Message.Params}
		if needsID {
			var p struct {
				TaskID json.RawMessage `json:"taskId"`
			}
			var id string
			if json.Unmarshal(r.Message.Params, &p) != nil || json.Unmarshal(p.TaskID, &id) != nil || id == "" {
				return refuse(errTaskID), true
			}
			q.id = id
		}
		return ingress.Result(func(ctx context.Context) ([]byte, error) {
			b, err := serve(ctx, q)
			if errors.Is(err, tasks.ErrNotFound) {
				return nil, errTaskNotFound
			}
			var we *jsonrpc.Error
			if err != nil && !errors.As(err, &we) {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
			}
			return b, err
		}), true
	}
}

// taskMethods are the tasks/* methods of both eras.
func (s *Server) taskMethods() ingress.Methods {
	return ingress.Methods{
		"tasks/get":    s.taskMethod(true, true, true, s.getTask),
		"tasks/cancel": s.taskMethod(true, true, true, s.cancelTask),
		"tasks/result": s.taskMethod(true, false, true, s.taskResult),
		"tasks/list":   s.taskMethod(true, false, false, s.listTasks),
		"tasks/update": s.taskMethod(false, true, true, s.updateTask),
	}
}

func (s *Server) getTask(ctx context.Context, q taskRequest) ([]byte, error) {
	rec, err := s.tasks.Get(ctx, q.owner, q.id)
	if err != nil {
		return nil, err
	}
	if q.sessionless {
		return rec.Detailed(), nil
	}
	return rec.LegacyTask(), nil
}

// cancelTask cancels a task: 2025-11-25 refuses one that had ended and
// answers the task; 2026-07-28 acknowledges either way.
func (s *Server) cancelTask(ctx context.Context, q taskRequest) ([]byte, error) {
	rec, terminal, err := s.tasks.Cancel(ctx, q.owner, q.id)
	switch {
	case err != nil:
		return nil, err
	case q.sessionless:
		return tasks.Ack, nil
	case terminal:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("Cannot cancel task: already in terminal status '%s'", legacyStatus(rec))}
	}
	return rec.LegacyTask(), nil
}

// legacyStatus is rec's status as 2025-11-25 shows it.
func legacyStatus(rec *tasks.Record) string {
	var t struct {
		Status string `json:"status"`
	}
	_ = json.Unmarshal(rec.LegacyTask(), &t)
	return t.Status
}

// taskResult waits for a task to end and answers what its call answered
// (2025-11-25).
func (s *Server) taskResult(ctx context.Context, q taskRequest) ([]byte, error) {
	rec, err := s.tasks.Wait(ctx, q.owner, q.id)
	if err != nil {
		return nil, err
	}
	if res := rec.LegacyResult(); res != nil {
		return res, nil
	}
	if rec.Status == tasks.Cancelled {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "The task was cancelled before its call ended; it has no result."}
	}
	var we jsonrpc.Error
	if json.Unmarshal(rec.Error, &we) != nil || we.Code == 0 {
		we = jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: rec.Message}
	}
	return nil, &we
}

// taskPage is how many tasks a tasks/list page holds.
const taskPage = 50

// listTasks lists the caller's tasks, newest first, a page at a time
// (2025-11-25).
func (s *Server) listTasks(ctx context.Context, q taskRequest) ([]byte, error) {
	var p struct {
		Cursor *string `json:"cursor"`
	}
	_ = json.Unmarshal(q.params, &p)
	offset := 0
	if p.Cursor != nil {
		b, err := base64.RawURLEncoding.DecodeString(*p.Cursor)
		n, err2 := strconv.Atoi(string(b))
		if err != nil || err2 != nil || n <= 0 {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "Invalid cursor"}
		}
		offset = n
	}
	recs, err := s.tasks.List(ctx, q.owner)
	if err != nil {
		return nil, err
	}
	next := ""
	if offset > len(recs) {
		offset = len(recs)
	}
	recs = recs[offset:]
	if len(recs) > taskPage {
		recs = recs[:taskPage]
		next = base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(offset + taskPage)))
	}
	return tasks.LegacyList(recs, next), nil
}

// updateTask gives a task the client's answers to its input requests
// (2026-07-28).
func (s *Server) updateTask(ctx context.Context, q taskRequest) ([]byte, error) {
	var p struct {
		InputResponses map[string]json.RawMessage `json:"inputResponses"`
	}
	if json.Unmarshal(q.params, &p) != nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "params.inputResponses must be an object"}
	}
	rec, err := s.tasks.Get(ctx, q.owner, q.id)
	if err != nil {
		return nil, err
	}
	for k, v := range p.InputResponses {
		if rec.Input[k] == nil {
			continue // not outstanding: ignored
		}
		if _, err := inputResponses(map[string]json.RawMessage{k: v}); err != nil {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
		}
	}
	if _, err := s.tasks.Answer(ctx, q.owner, q.id, p.InputResponses); err != nil {
		return nil, err
	}
	return tasks.Ack, nil
}
