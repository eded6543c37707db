package tasks

import (
	"encoding/json"
	"time"

	"github.com/evokore/evokore/internal/jsonenc"
)

// How a task looks on the wire, per era. The two eras share the states
// and differ in names and shapes:
//
//	                      2025-11-25 (experimental)     2026-07-28 (extension)
//	lifetime, polling     ttl, pollInterval              ttlMs, pollIntervalMs
//	created               {"task": Task}                 Task, resultType "task"
//	tasks/get             Task                           Task + result|error|inputRequests
//	a tool error          failed (tasks/result has it)   completed, result.isError
//	held for a person     input_required                 working, with a status message
//	the result            tasks/result, with the         inlined by tasks/get
//	                      related-task _meta

// RelatedTaskKey is the _meta key that ties a message to its task
// (2025-11-25).
const RelatedTaskKey = "io.modelcontextprotocol/related-task"

// ExtensionID names the tasks extension (2026-07-28) in capabilities.
const ExtensionID = "io.modelcontextprotocol/tasks"

// stamp is how times are written: RFC 3339 in UTC, to the millisecond.
func stamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z07:00") }

// legacyTask is a Task of 2025-11-25.
type legacyTask struct {
	TaskID        string `json:"taskId"`
	Status        Status `json:"status"`
	StatusMessage string `json:"statusMessage,omitempty"`
	CreatedAt     string `json:"createdAt"`
	LastUpdatedAt string `json:"lastUpdatedAt"`
	TTL           int64  `json:"ttl"`
	PollInterval  int64  `json:"pollInterval,omitempty"`
}

func (r *Record) legacy() legacyTask {
	t := legacyTask{TaskID: r.ID, Status: r.Status, StatusMessage: r.Message, CreatedAt: stamp(r.Created),
		LastUpdatedAt: stamp(r.Updated), TTL: r.TTLMs, PollInterval: r.PollMs}
	switch {
	case r.Held && !r.Status.Terminal():
		t.Status = InputRequired
	case r.Status == Completed && r.IsError:
		// For a tool call, a result with isError fails the task.
		t.Status = Failed
		if t.StatusMessage == "" {
			t.StatusMessage = "The tool reported an error; tasks/result has its result."
		}
	}
	return t
}

// LegacyTask is the task as a 2025-11-25 tasks/get, tasks/cancel and
// notifications/tasks/status carry it.
func (r *Record) LegacyTask() []byte { return marshal(r.legacy()) }

// LegacyCreateResult is the CreateTaskResult of 2025-11-25.
func (r *Record) LegacyCreateResult() []byte {
	return marshal(struct {
		Task legacyTask `json:"task"`
	}{r.legacy()})
}

// LegacyList is a tasks/list result (2025-11-25); next is the cursor of
// the next page, "" for none.
func LegacyList(recs []*Record, next string) []byte {
	out := struct {
		Tasks      []legacyTask `json:"tasks"`
		NextCursor string       `json:"nextCursor,omitempty"`
	}{Tasks: make([]legacyTask, 0, len(recs)), NextCursor: next}
	for _, r := range recs {
		out.Tasks = append(out.Tasks, r.legacy())
	}
	return marshal(out)
}

// LegacyResult is what a 2025-11-25 tasks/result answers for an ended
// task: the call's result with the related-task _meta; nil when the call
// answered an error (Record.Error) or the task was cancelled.
func (r *Record) LegacyResult() []byte {
	if r.Status != Completed || r.Result == nil {
		return nil
	}
	var res map[string]json.RawMessage
	if json.Unmarshal(r.Result, &res) != nil || res == nil {
		return r.Result
	}
	var meta map[string]json.RawMessage
	_ = json.Unmarshal(res["_meta"], &meta)
	if meta == nil {
		meta = map[string]json.RawMessage{}
	}
	meta[RelatedTaskKey] = marshal(map[string]string{"taskId": r.ID})
	res["_meta"] = marshal(meta)
	return marshal(res)
}

// task is a Task of 2026-07-28, with what its status inlines.
type task struct {
	ResultType     string                     `json:"resultType"`
	TaskID         string                     `json:"taskId"`
	Status         Status                     `json:"status"`
	StatusMessage  string                     `json:"statusMessage,omitempty"`
	CreatedAt      string                     `json:"createdAt"`
	LastUpdatedAt  string                     `json:"lastUpdatedAt"`
	TTLMs          int64                      `json:"ttlMs"`
	PollIntervalMs int64                      `json:"pollIntervalMs,omitempty"`
	Result         json.RawMessage            `json:"result,omitempty"`
	Error          json.RawMessage            `json:"error,omitempty"`
	InputRequests  map[string]json.RawMessage `json:"inputRequests,omitempty"`
}

func (r *Record) task(resultType string) task {
	return task{ResultType: resultType, TaskID: r.ID, Status: r.Status, StatusMessage: r.Message,
		CreatedAt: stamp(r.Created), LastUpdatedAt: stamp(r.Updated), TTLMs: r.TTLMs, PollIntervalMs: r.PollMs}
}

// CreateResult is the CreateTaskResult of 2026-07-28: the task alone, flat,
// whatever its status (its result is tasks/get's to give).
func (r *Record) CreateResult() []byte { return marshal(r.task("task")) }

// Detailed is a 2026-07-28 tasks/get result: the task and what its
// status inlines.
func (r *Record) Detailed() []byte {
	t := r.task("complete")
	switch r.Status {
	case Completed:
		t.Result = r.Result
	case Failed:
		t.Error = r.Error
	case InputRequired:
		t.InputRequests = r.Input
	}
	return marshal(t)
}

// Ack is the empty acknowledgement of tasks/update and tasks/cancel
// (2026-07-28).
var Ack = []byte(`{"resultType":"complete"}`)

func marshal(v any) []byte {
	b, err := jsonenc.Marshal(v)
	if err != nil {
		// Every value here was decoded from JSON or built from strings.
		panic(err)
	}
	return b
}
