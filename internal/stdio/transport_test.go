package stdio_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/evokore/evokore/internal/stdio"
)

// syncBuffer is a log sink safe for the connection's goroutines.
type syncBuffer struct {
	ch chan string
}

func (b *syncBuffer) Write(p []byte) (int, error) { b.ch <- string(p); return len(p), nil }

func TestAServerOnTheTransportAnswersBadFramesAndServesOn(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	logs := &syncBuffer{ch: make(chan string, 16)}
	server := mcp.NewServer(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	ss, err := server.Connect(context.Background(), stdio.NewTransport(inR, outW, slog.New(slog.NewTextHandler(logs, nil))), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	lines := bufio.NewReader(outR)
	exchange := func(frame string) map[string]any {
		t.Helper()
		go func() { _, _ = io.WriteString(inW, frame+"\n") }()
		line, err := lines.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("answer %q: %v", line, err)
		}
		return m
	}
	if m := exchange(`{"jsonrpc":"2.0","id":"x","method":"ping"`); m["id"] != nil || m["error"].(map[string]any)["code"] != -32700.0 {
		t.Errorf("truncated frame answered %v", m)
	}
	if log := <-logs.ch; !strings.Contains(log, "code=-32700") || !strings.Contains(log, "frame=1") {
		t.Errorf("log line %q", log)
	}
	if m := exchange(`{"jsonrpc":"2.0","id":"p","method":"ping"}`); m["id"] != "p" || m["result"] == nil {
		t.Errorf("ping answered %v", m)
	}
}

func TestCloseEndsAPendingRead(t *testing.T) {
	inR, inW := io.Pipe()
	defer inW.Close()
	tr := stdio.NewTransport(inR, &bytes.Buffer{}, nil)
	conn, err := tr.Connect(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Connect(context.Background()); err == nil {
		t.Error("a second Connect succeeded")
	}
	done := make(chan error)
	go func() {
		_, err := conn.Read(context.Background())
		done <- err
	}()
	if err := conn.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, io.EOF) {
		t.Errorf("Read after Close: %v", err)
	}
}
