package voice

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/evokore/evokore/internal/safefile"
)

// Transcriber turns speech into text.
type Transcriber interface {
	// Name is the provider's name in health replies.
	Name() string
	// Transcribe returns the text of audio. language and model are the
	// client's hints; empty means the provider's defaults.
	Transcribe(ctx context.Context, audio []byte, language, model string) (Transcript, error)
}

// Transcript is the result of one transcription.
type Transcript struct {
	Text       string
	Confidence *float64
	Language   string
	Duration   *float64
}

// WhisperAPI transcribes with OpenAI's /v1/audio/transcriptions.
type WhisperAPI struct {
	// BaseURL is https://api.openai.com unless EVOKORE_STT_BASE_URL says
	// otherwise.
	BaseURL string
	// APIKey is OPENAI_API_KEY.
	APIKey string
	// Model is EVOKORE_STT_MODEL, default whisper-1.
	Model  string
	Client *http.Client
}

// Name implements Transcriber.
func (*WhisperAPI) Name() string { return "whisper-api" }

// whisperJSON is whisper's verbose_json output, from the API and from the
// local CLI alike.
type whisperJSON struct {
	Text     string   `json:"text"`
	Language string   `json:"language"`
	Duration *float64 `json:"duration"`
	Segments []struct {
		End        float64  `json:"end"`
		AvgLogprob *float64 `json:"avg_logprob"`
	} `json:"segments"`
}

// transcript turns whisper's output into a Transcript. Confidence is the
// mean per-segment probability, when the segments carry one.
func (w whisperJSON) transcript() Transcript {
	t := Transcript{Text: strings.TrimSpace(w.Text), Language: w.Language, Duration: w.Duration}
	sum, n := 0.0, 0
	for _, s := range w.Segments {
		if s.AvgLogprob != nil {
			sum += math.Exp(*s.AvgLogprob)
			n++
		}
	}
	if n > 0 {
		c := math.Round(sum/float64(n)*1000) / 1000
		t.Confidence = &c
	}
	if t.Duration == nil && len(w.Segments) > 0 {
		d := w.Segments[len(w.Segments)-1].End
		t.Duration = &d
	}
	return t
}

// Transcribe implements Transcriber.
func (w *WhisperAPI) Transcribe(ctx context.Context, audio []byte, language, model string) (Transcript, error) {
	if w.APIKey == "" {
		return Transcript{}, errors.New("whisper-api needs OPENAI_API_KEY")
	}
	u, err := url.Parse(w.BaseURL)
	if err != nil || (u.Scheme != "https" && !(u.Scheme == "http" && isLoopbackHost(u.Hostname()))) {
		return Transcript{}, fmt.Errorf("EVOKORE_STT_BASE_URL %q: want https:// (http:// only to a loopback host)", w.BaseURL)
	}
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	fw, err := mw.CreateFormFile("file", "audio."+sniffAudio(audio))
	if err != nil {
		return Transcript{}, err
	}
	fw.Write(audio)
	mw.WriteField("model", firstNonEmpty(model, w.Model))
	mw.WriteField("response_format", "verbose_json")
	if language != "" {
		mw.WriteField("language", language)
	}
	mw.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(w.BaseURL, "/")+"/v1/audio/transcriptions", &body)
	if err != nil {
		return Transcript{}, err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+w.APIKey)
	resp, err := w.Client.Do(req)
	if err != nil {
		return Transcript{}, fmt.Errorf("whisper-api: %w", err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 4<<20))
	if err != nil {
		return Transcript{}, fmt.Errorf("whisper-api: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return Transcript{}, providerError("whisper-api", resp.StatusCode, data, w.APIKey)
	}
	var out whisperJSON
	if err := json.Unmarshal(data, &out); err != nil {
		return Transcript{}, fmt.Errorf("whisper-api: unexpected reply: %w", err)
	}
	return out.transcript(), nil
}

// maxTranscriptBytes caps whisper's JSON output: far above what the
// longest audio a client may send (maxAudioBytes) transcribes to.
const maxTranscriptBytes = 64 << 20

// LocalWhisper transcribes with the openai-whisper command-line program.
type LocalWhisper struct {
	// Path is EVOKORE_WHISPER_PATH, default "whisper", resolved on PATH.
	Path string
	// Model is EVOKORE_STT_LOCAL_MODEL, default base.
	Model   string
	TempDir string
}

// Name implements Transcriber.
func (*LocalWhisper) Name() string { return "local-whisper" }

// Transcribe implements Transcriber: the audio goes to a private temporary
// directory, whisper writes its JSON beside it, and the directory is
// removed whatever happens.
func (l *LocalWhisper) Transcribe(ctx context.Context, audio []byte, language, model string) (Transcript, error) {
	bin, err := lookPath(l.Path)
	if err != nil {
		return Transcript{}, fmt.Errorf("local whisper: %q is not installed (set EVOKORE_WHISPER_PATH): %w", l.Path, err)
	}
	dir, err := os.MkdirTemp(l.TempDir, tempPrefix+"stt-")
	if err != nil {
		return Transcript{}, err
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "audio."+sniffAudio(audio))
	if err := os.WriteFile(in, audio, 0o600); err != nil {
		return Transcript{}, err
	}
	argv := []string{bin, in, "--model", firstNonEmpty(model, l.Model), "--output_format", "json", "--output_dir", dir, "--verbose", "False"}
	if language != "" {
		argv = append(argv, "--language", language)
	}
	if err := runProcess(ctx, argv); err != nil {
		return Transcript{}, fmt.Errorf("local whisper: %w", err)
	}
	// Whatever whisper left there (a link to a device, a FIFO, a file
	// that never ends) must not hang or grow the sidecar.
	data, err := safefile.Load(filepath.Join(dir, "audio.json"), maxTranscriptBytes)
	if err != nil {
		return Transcript{}, fmt.Errorf("local whisper wrote no transcript: %w", err)
	}
	var out whisperJSON
	if err := json.Unmarshal(data, &out); err != nil {
		return Transcript{}, fmt.Errorf("local whisper: unexpected output: %w", err)
	}
	return out.transcript(), nil
}

// sniffAudio names the container of audio by its magic bytes, because
// whisper tells formats apart by the file extension.
func sniffAudio(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("RIFF")):
		return "wav"
	case bytes.HasPrefix(b, []byte("OggS")):
		return "ogg"
	case bytes.HasPrefix(b, []byte("fLaC")):
		return "flac"
	case bytes.HasPrefix(b, []byte{0x1A, 0x45, 0xDF, 0xA3}):
		return "webm"
	case len(b) > 8 && string(b[4:8]) == "ftyp":
		return "m4a"
	}
	return "mp3"
}
