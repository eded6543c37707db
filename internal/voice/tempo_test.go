package voice

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/testutil"
)

func TestAtempoChainKeepsEachStageInRange(t *testing.T) {
	for tempo, want := range map[float64]string{
		1.5:  "atempo=1.5",
		2:    "atempo=2",
		3:    "atempo=2.0,atempo=1.5",
		5:    "atempo=2.0,atempo=2.0,atempo=1.25",
		0.25: "atempo=0.5,atempo=0.5",
	} {
		if got := atempoChain(tempo); got != want {
			t.Errorf("atempoChain(%v) = %s, want %s", tempo, got, want)
		}
	}
}

func TestTempoPostProcessingRunsFFmpegAndPlaysItsOutput(t *testing.T) {
	dir := t.TempDir()
	ffLog, playLog := filepath.Join(dir, "ffmpeg.log"), filepath.Join(dir, "player.log")
	ff := helperArgv(t, "ffmpeg", ffLog)
	voices := testutil.WriteFile(t, dir, "voices.json", `{
  "default": {"voiceId": "v", "model": "m", "stability": 0.5, "similarityBoost": 0.5, "speed": 1, "outputFormat": "mp3_22050_32"},
  "personas": {"fast": {"postProcessTempo": 3}}
}`)
	player := helperArgv(t, "player", playLog, "0")
	sc := startSidecar(t, Options{
		TTS:        newFakeOpenAI(t).provider(),
		VoicesPath: voices,
		FFmpeg:     ff,
		Player:     func(file string) []string { return append(player, file) },
	})
	c := dial(t, sc.url)
	send(t, c, Speak{Text: "quickly now", Persona: "fast", Flush: true})
	send(t, c, Speak{Text: "at normal speed", Flush: true})
	waitFor(t, "both utterances played", func() bool { return len(playerLog(t, playLog)) == 4 })
	calls := playerLog(t, ffLog)
	if len(calls) != 1 || !strings.Contains(calls[0], "-filter:a atempo=2.0,atempo=1.5 ") {
		t.Fatalf("ffmpeg calls: %q", calls)
	}
	played := playerLog(t, playLog)
	if !strings.HasSuffix(played[0], "-tempo.mp3") || strings.Contains(played[2], "-tempo") {
		t.Errorf("played %q; want the tempo-changed file first, the original second", played)
	}
	waitFor(t, "temporary files deleted", func() bool { return len(artefacts(t, sc.temp)) == 0 })
}

func TestTempoWithRealFFmpeg(t *testing.T) {
	ff, err := exec.LookPath("ffmpeg")
	if err != nil {
		t.Skip("ffmpeg is not installed; the tempo chain is covered by the fake above")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "in.mp3")
	if err := os.WriteFile(in, fixtureMP3(t), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.mp3")
	if err := changeTempo(context.Background(), []string{ff}, in, out, 3); err != nil {
		t.Fatal(err)
	}
	b := readFile(t, out)
	if err := validMP3(b); err != nil || len(b) >= len(fixtureMP3(t)) {
		t.Errorf("ffmpeg output: %d bytes, %v; want a shorter MP3", len(b), err)
	}
}
