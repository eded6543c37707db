package dashboard

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/evokore/evokore/internal/approvalfeed"
	"github.com/evokore/evokore/internal/jsonenc"
	"github.com/evokore/evokore/internal/policy"
)

// Approval is a pending approval and where it came from.
type Approval struct {
	policy.PendingApproval
	// Source is "local" (a router under the dashboard's EVOKORE_HOME) or
	// the URL of the router feed that reported it.
	Source string `json:"source"`
}

// Source is the state of one place approvals come from.
type Source struct {
	Name      string `json:"name"`
	Connected bool   `json:"connected"`
	Error     string `json:"error,omitempty"`
}

// ApprovalsView is what /api/approvals returns and the live stream
// sends.
type ApprovalsView struct {
	Approvals []Approval `json:"approvals"`
	Sources   []Source   `json:"sources"`
}

// ApprovalStore is where the approvals of the routers the dashboard
// reaches directly are listed and decided. Options.Approvals nil means
// the approval files under EVOKORE_HOME, watched with fsnotify; another
// store (the state replicas share, such as Redis) is polled every second.
type ApprovalStore interface {
	List(ctx context.Context) ([]policy.PendingApproval, error)
	Decide(ctx context.Context, id, verdict string) error
}

// hub merges the local approvals with those of the router feeds and
// tells subscribers about every change.
type hub struct {
	home  string
	now   func() time.Time
	store ApprovalStore // nil: the files under home
	feeds []*approvalfeed.Feed

	mu       sync.Mutex
	local    []policy.PendingApproval
	localErr string
	view     []byte // the last broadcast ApprovalsView
	subs     map[chan []byte]struct{}
}

func newHub(home string, store ApprovalStore, now func() time.Time) *hub {
	return &hub{home: home, store: store, now: now, subs: map[chan []byte]struct{}{}}
}

func (h *hub) addFeed(url, token, key string) {
	h.feeds = append(h.feeds, approvalfeed.NewFeed(url, token, key, h.changed))
}

// run watches the local approvals and runs the feeds until ctx ends.
func (h *hub) run(ctx context.Context) error {
	var changes <-chan struct{}
	if h.store == nil {
		var err error
		if changes, err = approvalfeed.Changes(ctx, h.home, 2*time.Second); err != nil {
			return err
		}
	} else {
		changes = poll(ctx, time.Second)
	}
	for _, f := range h.feeds {
		go f.Run(ctx)
	}
	h.refreshLocal()
	go func() {
		for range changes {
			h.refreshLocal()
		}
	}()
	return nil
}

// poll ticks every interval until ctx ends.
func poll(ctx context.Context, interval time.Duration) <-chan struct{} {
	out := make(chan struct{})
	go func() {
		defer close(out)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				select {
				case out <- struct{}{}:
				case <-ctx.Done():
					return
				}
			}
		}
	}()
	return out
}

func (h *hub) refreshLocal() {
	var list []policy.PendingApproval
	var err error
	if h.store == nil {
		list, err = approvalfeed.Pending(h.home, h.now())
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		list, err = h.store.List(ctx)
		cancel()
	}
	h.mu.Lock()
	h.local, h.localErr = list, ""
	if err != nil {
		h.local, h.localErr = nil, err.Error()
	}
	h.mu.Unlock()
	h.changed()
}

// current builds the merged view. An id reported both locally and by a
// feed (a router on this machine that also serves HTTP) is shown once,
// as local.
func (h *hub) current() ApprovalsView {
	h.mu.Lock()
	v := ApprovalsView{Approvals: []Approval{}, Sources: []Source{{Name: "local", Connected: h.localErr == "", Error: h.localErr}}}
	seen := map[string]bool{}
	for _, p := range h.local {
		if !operator.Owns(p.Tenant) {
			continue
		}
		seen[p.ID] = true
		v.Approvals = append(v.Approvals, Approval{shown(p), "local"})
	}
	h.mu.Unlock()
	for _, f := range h.feeds {
		list, ok, errText := f.State()
		v.Sources = append(v.Sources, Source{Name: f.URL(), Connected: ok, Error: jsonenc.Graphic(errText)})
		for _, p := range list {
			if !seen[p.ID] {
				seen[p.ID] = true
				v.Approvals = append(v.Approvals, Approval{shown(p), f.URL()})
			}
		}
	}
	slices.SortStableFunc(v.Approvals, func(a, b Approval) int {
		switch {
		case a.CreatedAt > b.CreatedAt:
			return -1
		case a.CreatedAt < b.CreatedAt:
			return 1
		}
		return 0
	})
	return v
}

// shown is p as the operator is shown it: what a page acts on (controls,
// bidi overrides) escaped as `evokore approvals` escapes it, the
// arguments line by line. A pending file is written by any process of the
// user and a feed by another router, so neither is trusted to have done
// it: a bidi override in a tool name would show the operator another tool
// than the one approving runs.
func shown(p policy.PendingApproval) policy.PendingApproval {
	lines := strings.Split(p.Arguments, "\n")
	for i, l := range lines {
		lines[i] = jsonenc.Graphic(l)
	}
	p.Arguments = strings.Join(lines, "\n")
	for _, f := range []*string{&p.ID, &p.Token, &p.ToolName, &p.Session, &p.State, &p.Router} {
		*f = jsonenc.Graphic(*f)
	}
	return p
}

// changed broadcasts the view to the subscribers when it differs from
// the last one.
func (h *hub) changed() {
	b, _ := json.Marshal(h.current())
	h.mu.Lock()
	defer h.mu.Unlock()
	if string(b) == string(h.view) {
		return
	}
	h.view = b
	for ch := range h.subs {
		// Keep only the newest view for a slow subscriber.
		select {
		case <-ch:
		default:
		}
		ch <- b
	}
}

func (h *hub) subscribe() (chan []byte, func()) {
	ch := make(chan []byte, 1)
	b, _ := json.Marshal(h.current())
	ch <- b
	h.mu.Lock()
	h.subs[ch] = struct{}{}
	h.mu.Unlock()
	return ch, func() {
		h.mu.Lock()
		delete(h.subs, ch)
		h.mu.Unlock()
	}
}

var errNoApproval = errors.New("no pending approval with that id")

// decide records verdict on the approval id wherever it is held.
func (h *hub) decide(ctx context.Context, id, verdict string) error {
	h.refreshLocal()
	h.mu.Lock()
	local := slices.ContainsFunc(h.local, func(p policy.PendingApproval) bool { return p.ID == id && operator.Owns(p.Tenant) })
	h.mu.Unlock()
	if local {
		var err error
		if h.store == nil {
			err = policy.Decide(h.home, id, verdict, h.now())
		} else {
			err = h.store.Decide(ctx, id, verdict)
		}
		h.refreshLocal()
		return err
	}
	for _, f := range h.feeds {
		list, _, _ := f.State()
		if slices.ContainsFunc(list, func(p policy.PendingApproval) bool { return p.ID == id }) {
			ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			return f.Decide(ctx, id, verdict)
		}
	}
	return errNoApproval
}
