//go:build unix

package voice

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/testutil"
)

// The files the sidecar reads back from the programs it runs (whisper's
// transcript, ffmpeg's output) are read through safefile: a FIFO no one
// writes or a link to /dev/zero left in their place is refused at once
// and named, instead of hanging the sidecar or growing it (or the
// artefact directory) without end.
func TestFilesLeftByHelpersAreReadOnlyIfRegular(t *testing.T) {
	for _, kind := range []string{"fifo", "zero"} {
		t.Run("whisper "+kind, func(t *testing.T) {
			bin := filepath.Join(t.TempDir(), "whisper")
			if err := os.Symlink(helperArgv(t, "whisper")[0], bin); err != nil {
				t.Skipf("cannot link the fake whisper: %v", err)
			}
			stt := &LocalWhisper{Path: bin, Model: "base", TempDir: t.TempDir()}
			sc := startSidecar(t, Options{TTS: newFakeOpenAI(t).provider(), STT: stt})
			c := dial(t, sc.url)
			audio := base64.StdEncoding.EncodeToString([]byte("OggS-not-really"))
			send(t, c, map[string]any{"type": "transcribe", "audio": audio, "language": kind})
			if got := receive(t, c); got["type"] != "stt_error" || !strings.HasSuffix(got["error"].(string), "audio.json: not a regular file") {
				t.Errorf("whisper leaving a %s: %v", kind, got)
			}
			// The connection goes on, and nothing is left behind.
			send(t, c, map[string]any{"type": "transcribe", "audio": audio, "language": "de"})
			if got := receive(t, c); got["type"] != "stt_result" {
				t.Errorf("next transcription: %v", got)
			}
			if m, _ := filepath.Glob(filepath.Join(stt.TempDir, "*")); len(m) != 0 {
				t.Errorf("temporary files left: %v", m)
			}
		})
		t.Run("ffmpeg "+kind, func(t *testing.T) {
			dir := t.TempDir()
			voices := testutil.WriteFile(t, dir, "voices.json", `{
  "default": {"voiceId": "v", "model": "m", "stability": 0.5, "similarityBoost": 0.5, "speed": 1, "outputFormat": "mp3_22050_32"},
  "personas": {"fast": {"postProcessTempo": 3}}
}`)
			sc := startSidecar(t, Options{TTS: newFakeOpenAI(t).provider(), VoicesPath: voices, FFmpeg: helperArgv(t, "badffmpeg", kind)})
			c := dial(t, sc.url)
			send(t, c, Speak{Text: "quickly now", Persona: "fast", Flush: true})
			waitFor(t, "the artefact refused", func() bool {
				return strings.Contains(sc.log.String(), "cannot keep the audio artefact") && strings.Contains(sc.log.String(), "-tempo.mp3: not a regular file")
			})
			if a := artefacts(t, sc.artifacts); len(a) != 0 {
				t.Errorf("artefacts written: %v", a)
			}
			// The next utterance is delivered as ever.
			send(t, c, Speak{Text: "at normal speed", Flush: true})
			waitFor(t, "the next artefact", func() bool { return len(artefacts(t, sc.artifacts)) == 1 })
			waitFor(t, "temporary files deleted", func() bool { return len(artefacts(t, sc.temp)) == 0 })
		})
	}
}
