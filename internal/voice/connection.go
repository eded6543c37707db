package voice

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"time"

	"github.com/coder/websocket"

	"github.com/evokore/evokore/internal/config"
)

// Bounds on one step of an utterance or a transcription, so that a
// provider or program that hangs costs its own request and not the
// connection's whole life.
const (
	stepTimeout       = 2 * time.Minute
	transcribeTimeout = 10 * time.Minute
)

// pendingMessages bounds the messages a client may have waiting behind a
// slow utterance.
const pendingMessages = 16

// connection is one client. serve's goroutine owns reading; the worker
// owns the utterance in progress; the heartbeat owns pinging. The socket
// may close before the worker is done: a client such as `evokore voice
// say` sends and leaves, and its utterance is still spoken.
type connection struct {
	s    *Server
	ws   *websocket.Conn
	peer string
}

// serve reads messages until the client leaves or is dropped.
func (c *connection) serve() {
	log := c.s.log.With("peer", c.peer)
	readCtx, stopRead := context.WithCancel(c.s.ctx)
	defer stopRead()

	work := make(chan inbound, pendingMessages)
	c.s.work.Add(1)
	go func() {
		defer c.s.work.Done()
		c.work(work, log)
	}()
	defer close(work)

	go c.heartbeat(readCtx, stopRead, log)

	for {
		_, data, err := c.ws.Read(readCtx)
		if err != nil {
			if st := websocket.CloseStatus(err); st == -1 && !errors.Is(err, context.Canceled) {
				log.Debug("client connection ended", "err", err)
			}
			return
		}
		m, problem, stt := parseMessage(data)
		switch {
		case problem != "" && stt:
			c.reply(sttError{Type: "stt_error", Error: problem})
		case problem != "":
			c.reply(errorReply{Error: problem})
		case m.kind == kindHealth:
			c.reply(c.s.health())
		default:
			select {
			case work <- m:
			default:
				c.reply(errorReply{Error: msgTooManyPending})
			}
		}
	}
}

// heartbeat pings the client every interval and drops it when a ping is
// not answered before the next one is due.
func (c *connection) heartbeat(ctx context.Context, drop context.CancelFunc, log *slog.Logger) {
	t := time.NewTicker(c.s.opts.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		pctx, cancel := context.WithTimeout(ctx, c.s.opts.Heartbeat)
		err := c.ws.Ping(pctx)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				log.Info("dropping a client that did not answer the heartbeat")
				drop()
				c.ws.CloseNow()
			}
			return
		}
	}
}

// work handles the messages that take time, in the order they came.
func (c *connection) work(messages <-chan inbound, log *slog.Logger) {
	var stream Stream
	var voice config.VoiceConfig
	defer func() {
		if stream != nil {
			stream.Close()
		}
	}()
	for m := range messages {
		if c.s.ctx.Err() != nil {
			continue // draining is over; drop what is left
		}
		if m.kind == kindTranscribe {
			c.transcribe(m, log)
			continue
		}
		func() {
			defer func() {
				if r := recover(); r != nil {
					log.Error("utterance panicked", "panic", r)
					c.reply(errorReply{Error: "internal error"})
					if stream != nil {
						stream.Close()
						stream = nil
					}
				}
			}()
			if m.text != "" {
				if stream == nil {
					voice = c.s.voices.resolve(m.persona)
					ctx, cancel := context.WithTimeout(c.s.ctx, stepTimeout)
					st, err := c.s.opts.TTS.Open(ctx, voice)
					cancel()
					if err != nil {
						log.Warn("cannot start an utterance", logDetail(err)...)
						c.reply(errorReply{Error: err.Error()})
						return
					}
					stream = st
				}
				ctx, cancel := context.WithTimeout(c.s.ctx, stepTimeout)
				err := stream.Send(ctx, m.text)
				cancel()
				if err != nil {
					log.Warn("cannot send text to the provider", logDetail(err)...)
					c.reply(errorReply{Error: err.Error()})
					stream.Close()
					stream = nil
					return
				}
			}
			if m.flush && stream != nil {
				st := stream
				stream = nil
				ctx, cancel := context.WithTimeout(c.s.ctx, stepTimeout)
				defer cancel()
				audio, err := st.Finish(ctx)
				if err != nil {
					log.Warn("the provider returned no audio", logDetail(err)...)
					c.reply(errorReply{Error: err.Error()})
					return
				}
				if err := c.s.deliver(ctx, audio, voice); err != nil {
					log.Warn("cannot queue the audio", "err", err)
					c.reply(errorReply{Error: err.Error()})
				}
			}
		}()
	}
}

func (c *connection) transcribe(m inbound, log *slog.Logger) {
	if c.s.opts.STT == nil {
		c.reply(sttError{Type: "stt_error", Error: msgSTTDisabled})
		return
	}
	ctx, cancel := context.WithTimeout(c.s.ctx, transcribeTimeout)
	defer cancel()
	t, err := c.s.opts.STT.Transcribe(ctx, m.audio, m.language, m.model)
	if err != nil {
		log.Warn("transcription failed", logDetail(err)...)
		c.reply(sttError{Type: "stt_error", Error: err.Error()})
		return
	}
	c.reply(sttResult{Type: "stt_result", Text: t.Text, Confidence: t.Confidence, Language: t.Language, Duration: t.Duration})
}

// reply sends v as JSON; a client that has left simply misses it.
func (c *connection) reply(v any) {
	b, err := json.Marshal(v)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(c.s.ctx, 5*time.Second)
	defer cancel()
	_ = c.ws.Write(ctx, websocket.MessageText, b)
}
