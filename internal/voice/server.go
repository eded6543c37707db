package voice

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// Server is the voice sidecar. Like net/http.Server, the constructor
// starts nothing: Serve or ListenAndServe runs it and Shutdown stops it.
type Server struct {
	opts    Options
	log     *slog.Logger
	queue   *Queue
	voices  *voiceBook
	started time.Time

	// ctx ends when the drain is over: it aborts provider calls and
	// transcriptions still running.
	ctx    context.Context
	cancel context.CancelFunc

	httpSrv *http.Server

	mu    sync.Mutex
	conns map[*connection]struct{}
	// admitted counts the clients holding a connection slot, from before
	// their upgrade until their handler returns.
	admitted int
	closing  bool
	// work counts connection handlers and their workers, which may outlive
	// the socket to finish an utterance the client already flushed.
	work sync.WaitGroup
}

// NewServer checks opts and returns a server ready to Serve.
func NewServer(opts Options) (*Server, error) {
	if opts.TTS == nil {
		return nil, errors.New("voice: no TTS provider")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(os.Stderr, nil))
	}
	if opts.Host == "" {
		opts.Host = DefaultHost
	}
	if opts.MaxConnections <= 0 {
		opts.MaxConnections = DefaultMaxConnections
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = DefaultHeartbeat
	}
	if opts.Drain <= 0 {
		opts.Drain = DefaultDrain
	}
	if opts.TempDir == "" {
		opts.TempDir = os.TempDir()
	}
	if opts.Player == nil && !opts.DisablePlayback {
		p, err := defaultPlayer("")
		if err != nil {
			return nil, err
		}
		opts.Player = p
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Server{
		opts:    opts,
		log:     opts.Logger,
		voices:  newVoiceBook(opts.VoicesPath, opts.Logger),
		started: time.Now(),
		ctx:     ctx,
		cancel:  cancel,
		conns:   map[*connection]struct{}{},
	}
	s.queue = NewQueue(func(ctx context.Context, file string) error {
		return runProcess(ctx, s.opts.Player(file))
	}, opts.Logger)
	s.httpSrv = &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second}
	return s, nil
}

// ListenAndServe listens on Options.Addr and serves until Shutdown.
func (s *Server) ListenAndServe() error {
	l, err := net.Listen("tcp", s.opts.Addr())
	if err != nil {
		return err
	}
	return s.Serve(l)
}

// Serve accepts connections on l until Shutdown. Before the first one it
// deletes temporary audio files a previous sidecar left behind.
func (s *Server) Serve(l net.Listener) error {
	if n := removeStale(s.opts.TempDir); n > 0 {
		s.log.Info("deleted stale temporary audio files", "count", n, "dir", s.opts.TempDir)
	}
	// Probe the voices now so a broken voices.json is reported at start.
	s.voices.current()
	s.log.Info("voice sidecar listening", "url", "ws://"+l.Addr().String(), "tts", s.opts.TTS.Name(),
		"stt", s.sttName(), "playback", !s.opts.DisablePlayback, "artifacts", s.opts.ArtifactDir)
	err := s.httpSrv.Serve(l)
	if errors.Is(err, http.ErrServerClosed) {
		return nil
	}
	return err
}

// ServeHTTP upgrades a loopback client to a WebSocket and serves it.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !isLoopbackAddr(r.RemoteAddr) {
		s.log.Warn("refused a connection from outside this machine", "peer", r.RemoteAddr)
		http.Error(w, "the voice sidecar accepts connections from this machine only", http.StatusForbidden)
		return
	}
	// A web page the user visits may reach 127.0.0.1 through a rebound DNS
	// name; only loopback names reach us legitimately.
	if host := hostOnly(r.Host); host != "" && !isLoopbackHost(host) {
		http.Error(w, "the voice sidecar answers to loopback host names only", http.StatusForbidden)
		return
	}
	// A slot is taken before the upgrade: a client whose handshake was
	// answered holds it, so one that dials right after it is refused
	// even while the first one's handler has not yet gone on. A request
	// that is no upgrade fails in Accept below and takes none.
	upgrade := strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
	s.mu.Lock()
	closing := s.closing
	slot := upgrade && !closing && s.admitted < s.opts.MaxConnections
	if slot {
		s.admitted++
	}
	if !closing {
		s.work.Add(1)
	}
	s.mu.Unlock()
	if closing {
		http.Error(w, msgShuttingDown, http.StatusServiceUnavailable)
		return
	}
	defer s.work.Done()
	if slot {
		defer func() {
			s.mu.Lock()
			s.admitted--
			s.mu.Unlock()
		}()
	}

	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		s.log.Debug("websocket upgrade failed", "peer", r.RemoteAddr, "err", err)
		return
	}
	ws.SetReadLimit(MaxMessageBytes)
	c := &connection{s: s, ws: ws, peer: r.RemoteAddr}

	s.mu.Lock()
	closing = s.closing
	if slot && !closing {
		s.conns[c] = struct{}{}
	}
	s.mu.Unlock()
	switch {
	case closing:
		ws.Close(websocket.StatusGoingAway, msgShuttingDown)
		return
	case !slot:
		s.log.Warn("connection refused: too many clients", "max", s.opts.MaxConnections, "peer", r.RemoteAddr)
		ws.Close(websocket.StatusTryAgainLater, msgMaxConnections)
		return
	}
	c.serve()
	s.mu.Lock()
	delete(s.conns, c)
	s.mu.Unlock()
}

// Connections reports how many clients are connected.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.conns)
}

// Shutdown stops accepting clients, closes every one with 1001, and waits
// until the utterances in progress are finished or ctx ends (the sidecar
// gives it Options.Drain). Then it stops playback and deletes every
// temporary file.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	s.closing = true
	conns := make([]*connection, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()

	// Stop the listener; hijacked WebSocket connections are ours to close.
	_ = s.httpSrv.Shutdown(ctx)
	var closing sync.WaitGroup
	for _, c := range conns {
		closing.Go(func() { c.ws.Close(websocket.StatusGoingAway, msgShuttingDown) })
	}

	drained := make(chan struct{})
	go func() {
		closing.Wait()
		s.work.Wait()
		close(drained)
	}()
	var err error
	select {
	case <-drained:
	case <-ctx.Done():
		err = fmt.Errorf("voice: drain cut short: %w", ctx.Err())
		for _, c := range conns {
			c.ws.CloseNow()
		}
	}
	s.cancel()
	s.queue.Close()
	return err
}

func (s *Server) sttName() string {
	if s.opts.STT == nil {
		return ""
	}
	return s.opts.STT.Name()
}

// health is the reply to the health probe.
func (s *Server) health() healthReply {
	h := healthReply{
		Type:        "health",
		Status:      "ok",
		Connections: s.Connections(),
		Uptime:      float64(time.Since(s.started).Milliseconds()) / 1000,
		STTEnabled:  s.opts.STT != nil,
		TTSProvider: s.opts.TTS.Name(),
	}
	if s.opts.STT != nil {
		name := s.opts.STT.Name()
		h.STTProvider = &name
	}
	return h
}

// isLoopbackAddr reports whether a host:port names this machine.
func isLoopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	return ip != nil && ip.IsLoopback()
}

// isLoopbackHost reports whether a host name or address names this
// machine without asking DNS.
func isLoopbackHost(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") || strings.HasSuffix(strings.ToLower(host), ".localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// hostOnly strips the port from a Host header.
func hostOnly(hostport string) string {
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		return h
	}
	return hostport
}
