package tracing

import (
	"log/slog"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"go.opentelemetry.io/otel"
)

// routeErrors sends the SDK's errors and error logs to log instead of the
// standard library's logger, each message at most once a minute: a
// collector that is down must not fill the log. The SDK's key/value
// pairs are left out: some quote a variable's value, and a header's
// value may be a credential.
func routeErrors(log *slog.Logger) {
	l := &quietLog{log: log, last: map[string]time.Time{}}
	otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) { l.say("", err) }))
	otel.SetLogger(logr.New(sink{l}))
}

// quietLog logs a message at most once a minute.
type quietLog struct {
	log  *slog.Logger
	mu   sync.Mutex
	last map[string]time.Time
}

func (l *quietLog) say(msg string, err error) {
	text := "[EVOKORE] OpenTelemetry: " + msg
	if err != nil {
		if msg != "" {
			text += ": "
		}
		text += err.Error()
	}
	l.mu.Lock()
	now := time.Now()
	quiet := now.Sub(l.last[text]) < time.Minute
	if !quiet {
		l.last[text] = now
	}
	l.mu.Unlock()
	if !quiet {
		l.log.Info(text)
	}
}

// sink is the logr.LogSink over quietLog: errors and the SDK's warnings
// (verbosity 1), not its info and debug lines.
type sink struct{ l *quietLog }

func (sink) Init(logr.RuntimeInfo)                   {}
func (sink) Enabled(level int) bool                  { return level <= 1 }
func (s sink) Info(_ int, msg string, _ ...any)      { s.l.say(msg, nil) }
func (s sink) Error(err error, msg string, _ ...any) { s.l.say(msg, err) }
func (s sink) WithValues(...any) logr.LogSink        { return s }
func (s sink) WithName(string) logr.LogSink          { return s }
