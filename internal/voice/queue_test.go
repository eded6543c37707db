package voice

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/evokore/evokore/internal/testutil"
)

func sha256hex(b []byte) string { return fmt.Sprintf("%x", sha256.Sum256(b)) }

// playerLog reads the fake player's log lines.
func playerLog(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

func TestQueuePlaysConcurrentUtterancesOneAtATime(t *testing.T) {
	const clients = 10
	fake := newFakeOpenAI(t)
	logFile := filepath.Join(t.TempDir(), "player.log")
	player := helperArgv(t, "player", logFile, "0")
	sc := startSidecar(t, Options{
		TTS:            fake.provider(),
		MaxConnections: clients,
		Player:         func(file string) []string { return append(player, file) },
	})

	conns := make([]*websocketConn, clients)
	for i := range conns {
		conns[i] = dial(t, sc.url)
	}
	var start, done sync.WaitGroup
	start.Add(1)
	for i, c := range conns {
		done.Go(func() {
			start.Wait()
			send(t, c, Speak{Text: fmt.Sprintf("Agent %d is done.", i), Flush: true})
		})
	}
	start.Done()
	done.Wait()

	waitArtefacts(t, sc.artifacts, clients)
	for _, a := range artefacts(t, sc.artifacts) {
		if err := validMP3(readFile(t, a)); err != nil {
			t.Errorf("%s: %v", a, err)
		}
	}
	waitFor(t, "every utterance played", func() bool { return len(playerLog(t, logFile)) == 2*clients })
	lines := playerLog(t, logFile)
	played := map[string]bool{}
	for i := 0; i < len(lines); i += 2 {
		s, e := strings.Fields(lines[i]), strings.Fields(lines[i+1])
		if len(s) != 5 || s[0] != "start" || len(e) != 2 || e[0] != "end" || s[1] != e[1] {
			t.Fatalf("playback overlapped or interleaved at line %d:\n%s", i+1, strings.Join(lines, "\n"))
		}
		if s[3] != sha256hex(fake.mp3) {
			t.Errorf("player got a file that is not the provider's MP3: %s", lines[i])
		}
		played[s[4]] = true
	}
	if len(played) != clients {
		t.Errorf("%d distinct files played, want %d", len(played), clients)
	}
	waitFor(t, "temporary files deleted", func() bool { return len(artefacts(t, sc.temp)) == 0 })
	if n := len(fake.calls()); n != clients {
		t.Errorf("%d provider requests, want %d", n, clients)
	}
}

func TestPlaybackFailureStillDeletesTemporaryFiles(t *testing.T) {
	logFile := filepath.Join(t.TempDir(), "player.log")
	player := helperArgv(t, "player", logFile, "1")
	sc := startSidecar(t, Options{
		TTS:    newFakeOpenAI(t).provider(),
		Player: func(file string) []string { return append(player, file) },
	})
	c := dial(t, sc.url)
	send(t, c, Speak{Text: "the player will fail", Flush: true})
	send(t, c, Speak{Text: "and again", Flush: true})
	waitFor(t, "both utterances tried", func() bool { return len(playerLog(t, logFile)) == 4 })
	waitFor(t, "temporary files deleted", func() bool { return len(artefacts(t, sc.temp)) == 0 })
	if strings.Count(sc.log.String(), "playback failed") != 2 {
		t.Errorf("failures not logged:\n%s", sc.log)
	}

	// A player that does not exist fails the same way.
	missing := startSidecar(t, Options{
		TTS:    newFakeOpenAI(t).provider(),
		Player: func(file string) []string { return []string{filepath.Join(t.TempDir(), "no-such-player"), file} },
	})
	c2 := dial(t, missing.url)
	send(t, c2, Speak{Text: "nobody to play this", Flush: true})
	waitFor(t, "the failure", func() bool { return strings.Contains(missing.log.String(), "playback failed") })
	waitFor(t, "temporary files deleted", func() bool { return len(artefacts(t, missing.temp)) == 0 })
}

func TestDisabledPlaybackDeletesAtOnceAndKeepsArtefact(t *testing.T) {
	sc := startSidecar(t, Options{TTS: newFakeOpenAI(t).provider(), DisablePlayback: true})
	c := dial(t, sc.url)
	send(t, c, Speak{Text: "written, not played", Flush: true})
	waitArtefacts(t, sc.artifacts, 1)
	waitFor(t, "temporary files deleted", func() bool { return len(artefacts(t, sc.temp)) == 0 })
}

func TestQueueSurvivesAPanickingPlayerAndCloseCleansUp(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	var played []string
	q := NewQueue(func(ctx context.Context, file string) error {
		mu.Lock()
		played = append(played, filepath.Base(file))
		mu.Unlock()
		switch filepath.Base(file) {
		case "panic":
			panic("player bug")
		case "block":
			<-ctx.Done() // plays until Close cuts it short
		}
		return nil
	}, discardLogger())
	var files []string
	for _, name := range []string{"panic", "ok", "block", "never"} {
		f := testutil.WriteFile(t, dir, name, "x")
		files = append(files, f)
		q.Enqueue(queued{file: f, cleanup: []string{f}})
	}
	waitFor(t, "the blocking item to play", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(played) == 3
	})
	q.Close()
	if got := strings.Join(played, ","); got != "panic,ok,block" {
		t.Errorf("played %s", got)
	}
	for _, f := range files {
		if _, err := os.Stat(f); !os.IsNotExist(err) {
			t.Errorf("%s left behind", f)
		}
	}
	late := testutil.WriteFile(t, dir, "late", "x")
	q.Enqueue(queued{file: late, cleanup: []string{late}})
	if _, err := os.Stat(late); !os.IsNotExist(err) {
		t.Error("an utterance enqueued after Close was kept")
	}
}
