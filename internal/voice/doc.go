// Package voice is the voice sidecar behind `evokore voice`: a WebSocket
// server on the loopback interface that turns text agents send into speech
// and plays it, one utterance at a time.
//
// It owns:
//   - the wire protocol (protocol.go) and its client-visible texts
//     (messages.go), kept compatible with EVOKORE-MCP's sidecar;
//   - the connections: loopback peers only, a connection cap, a heartbeat
//     and a drain on shutdown (server.go, connection.go);
//   - the text-to-speech providers, ElevenLabs over its WebSocket input API
//     and any OpenAI-compatible /v1/audio/speech endpoint, and the
//     speech-to-text ones (provider_*.go, stt.go);
//   - the one process-wide playback queue, so that several agents stopping at
//     once never talk over each other (queue.go, player.go);
//   - the client used by `evokore voice say` and hooks (client.go).
//
// voices.json is read through internal/config; this package never
// evaluates CUE. It must not know about the router, sessions or MCP.
//
// A minimal sidecar:
//
//	opts, warnings, err := voice.ReadOptions(config.ProcessEnv(), slog.Default())
//	if err != nil { ... }
//	srv, err := voice.NewServer(opts)
//	if err != nil { ... }
//	go srv.ListenAndServe()
//	...
//	srv.Shutdown(ctx) // closes every client with 1001 and drains
package voice
