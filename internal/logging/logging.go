// Package logging is evokore's one way to log: log/slog to stderr (stdout
// belongs to the MCP protocol in stdio mode), through a handler that keeps
// the lines scripts written for EVOKORE-MCP match on.
//
// A record prints as its message, exactly, followed by its attributes as
// key=value pairs; warnings and errors whose message is not already one
// of the bracketed compatibility lines get a level word in front. So
// `log.Info("[EVOKORE] Proxy bootstrap complete: 3 proxied tool(s)
// registered.")` prints that sentinel to the byte, and
// `log.With("server", "github").Warn("boot failed", "err", err)` prints
// `WARN boot failed server=github err="…"`.
//
//	log := logging.New(os.Stderr, slog.LevelInfo)
//	log.Info("[EVOKORE] evokore v1 router running on stdio")
package logging

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"time"
)

// New returns a logger that writes to w at level and above.
func New(w io.Writer, level slog.Leveler) *slog.Logger {
	return slog.New(NewHandler(w, level))
}

// Discard is a logger that writes nothing.
func Discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// Handler renders records as compatibility lines; see the package doc.
// It is safe for concurrent use: each record is written with one call.
type Handler struct {
	w      *lockedWriter
	level  slog.Leveler
	prefix string // attributes from With, rendered
	group  string
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// NewHandler returns a Handler writing to w.
func NewHandler(w io.Writer, level slog.Leveler) *Handler {
	if level == nil {
		level = slog.LevelInfo
	}
	return &Handler{w: &lockedWriter{w: w}, level: level}
}

// Enabled reports whether level is logged.
func (h *Handler) Enabled(_ context.Context, level slog.Level) bool {
	return level >= h.level.Level()
}

// Handle writes one record as one line.
func (h *Handler) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	if r.Level >= slog.LevelWarn && !strings.HasPrefix(r.Message, "[") {
		b.WriteString(r.Level.String())
		b.WriteByte(' ')
	}
	b.WriteString(r.Message)
	b.WriteString(h.prefix)
	r.Attrs(func(a slog.Attr) bool {
		appendAttr(&b, h.group, a)
		return true
	})
	b.WriteByte('\n')
	h.w.mu.Lock()
	defer h.w.mu.Unlock()
	_, err := io.WriteString(h.w.w, b.String())
	return err
}

// WithAttrs returns a handler that adds attrs to every record.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	var b strings.Builder
	b.WriteString(h.prefix)
	for _, a := range attrs {
		appendAttr(&b, h.group, a)
	}
	h2 := *h
	h2.prefix = b.String()
	return &h2
}

// WithGroup qualifies later attribute keys with name.
func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	h2 := *h
	h2.group = h.group + name + "."
	return &h2
}

func appendAttr(b *strings.Builder, group string, a slog.Attr) {
	a.Value = a.Value.Resolve()
	if a.Equal(slog.Attr{}) {
		return
	}
	if a.Value.Kind() == slog.KindGroup {
		// A group with an empty key is inlined, as slog.Handler requires.
		inner := group
		if a.Key != "" {
			inner = group + a.Key + "."
		}
		for _, ga := range a.Value.Group() {
			appendAttr(b, inner, ga)
		}
		return
	}
	b.WriteByte(' ')
	b.WriteString(group + a.Key)
	b.WriteByte('=')
	var v string
	switch a.Value.Kind() {
	case slog.KindTime:
		v = a.Value.Time().Format(time.RFC3339)
	case slog.KindDuration:
		v = a.Value.Duration().String()
	default:
		v = a.Value.String()
	}
	if v == "" || strings.ContainsAny(v, " \t\n\"=") {
		v = strconv.Quote(v)
	}
	b.WriteString(v)
}

// AtLeast returns l restricted to records of level min and above: the
// go-sdk logs every session's lifecycle at Info, which is noise on an
// operator's stderr.
func AtLeast(l *slog.Logger, min slog.Level) *slog.Logger {
	return slog.New(minLevel{l.Handler(), min})
}

type minLevel struct {
	slog.Handler
	min slog.Level
}

func (m minLevel) Enabled(ctx context.Context, level slog.Level) bool {
	return level >= m.min && m.Handler.Enabled(ctx, level)
}

func (m minLevel) WithAttrs(attrs []slog.Attr) slog.Handler {
	return minLevel{m.Handler.WithAttrs(attrs), m.min}
}

func (m minLevel) WithGroup(name string) slog.Handler {
	return minLevel{m.Handler.WithGroup(name), m.min}
}
