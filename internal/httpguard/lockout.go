package httpguard

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// Lockout counts credential failures per client address: Failures
// failures within Window lock that address out for For (429). The zero
// value uses 5 in 60 s for 5 minutes, as EVOKORE-MCP's dashboard did.
type Lockout struct {
	Failures int
	Window   time.Duration
	Duration time.Duration
	// Now is the clock (nil: time.Now).
	Now func() time.Time

	mu    sync.Mutex
	addrs map[string]*failures
}

// maxTracked bounds the addresses tracked; the oldest unlocked go first.
const maxTracked = 4096

type failures struct {
	times  []time.Time
	locked time.Time
}

func (l *Lockout) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

// For is how long an address stays locked out.
func (l *Lockout) For() time.Duration {
	if l.Duration > 0 {
		return l.Duration
	}
	return 5 * time.Minute
}

func (l *Lockout) limits() (int, time.Duration) {
	n, w := l.Failures, l.Window
	if n <= 0 {
		n = 5
	}
	if w <= 0 {
		w = 60 * time.Second
	}
	return n, w
}

// ClientAddr is the request's remote address without its port: never a
// header, which could name anyone.
func ClientAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// Locked reports whether r's address is locked out.
func (l *Lockout) Locked(r *http.Request) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	f := l.addrs[ClientAddr(r)]
	return f != nil && l.now().Before(f.locked)
}

// Fail counts a failure of r's address.
func (l *Lockout) Fail(r *http.Request) {
	addr := ClientAddr(r)
	limit, window := l.limits()
	l.mu.Lock()
	defer l.mu.Unlock()
	now := l.now()
	if l.addrs == nil {
		l.addrs = map[string]*failures{}
	}
	f := l.addrs[addr]
	if f == nil {
		if len(l.addrs) >= maxTracked {
			for k, v := range l.addrs {
				if !now.Before(v.locked) {
					delete(l.addrs, k)
					break
				}
			}
		}
		f = &failures{}
		l.addrs[addr] = f
	}
	keep := f.times[:0]
	for _, t := range f.times {
		if now.Sub(t) < window {
			keep = append(keep, t)
		}
	}
	f.times = append(keep, now)
	if len(f.times) >= limit {
		f.locked = now.Add(l.For())
		f.times = nil
	}
}

// Succeed forgets r's address's failures (unless it is locked out).
func (l *Lockout) Succeed(r *http.Request) {
	addr := ClientAddr(r)
	l.mu.Lock()
	defer l.mu.Unlock()
	if f := l.addrs[addr]; f != nil && !l.now().Before(f.locked) {
		delete(l.addrs, addr)
	}
}
