package voice

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/evokore/evokore/internal/config"
	"github.com/evokore/evokore/internal/safefile"
)

// tempPrefix starts the name of every temporary audio file; files left by
// a crashed sidecar are found by it at the next start.
const tempPrefix = "evokore-voice-"

// deliver takes a finished utterance to the queue: it writes the audio to
// a temporary file, changes its tempo when the voice asks for it, copies
// it to the artefact directory, and enqueues it. With playback disabled
// the files are deleted at once. On any failure no file is left behind.
func (s *Server) deliver(ctx context.Context, audio Audio, v config.VoiceConfig) (err error) {
	stamp := strconv.FormatInt(time.Now().UnixMilli(), 10)
	ext := audio.Ext
	if ext == "" {
		ext = "mp3"
	}
	f, err := os.CreateTemp(s.opts.TempDir, tempPrefix+stamp+"-*."+ext)
	if err != nil {
		return fmt.Errorf("write audio: %w", err)
	}
	files := []string{f.Name()}
	defer func() {
		if err != nil {
			removeAll(s.log, files)
		}
	}()
	_, werr := f.Write(audio.Data)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr != nil {
		return fmt.Errorf("write audio: %w", werr)
	}
	play := f.Name()

	if v.PostProcessTempo > 0 && v.PostProcessTempo != 1 {
		if len(s.opts.FFmpeg) == 0 {
			s.log.Debug("postProcessTempo is set but ffmpeg is not installed; playing at the provider's tempo")
		} else {
			out := strings.TrimSuffix(play, "."+ext) + "-tempo." + ext
			files = append(files, out)
			if terr := changeTempo(ctx, s.opts.FFmpeg, play, out, v.PostProcessTempo); terr != nil {
				s.log.Warn("tempo change failed; playing at the provider's tempo", "err", terr)
			} else {
				play = out
			}
		}
	}

	if s.opts.ArtifactDir != "" {
		if path, aerr := copyArtifact(play, s.opts.ArtifactDir, stamp, ext); aerr != nil {
			s.log.Warn("cannot keep the audio artefact", "dir", s.opts.ArtifactDir, "err", aerr)
		} else {
			s.log.Info("audio artefact written", "file", path)
		}
	}

	if s.opts.DisablePlayback {
		removeAll(s.log, files)
		return nil
	}
	s.queue.Enqueue(queued{file: play, cleanup: files})
	return nil
}

// maxAudioFile caps an audio file the sidecar copies: a provider's
// largest answer (maxAudio) slowed down to a quarter of its tempo.
const maxAudioFile = 4 * maxAudio

// copyArtifact copies src into dir as evokore-voice-<ms>.<ext>; utterances
// finished in the same millisecond get -2, -3 … rather than overwrite one
// another. The copy is written under a hidden name and linked into place
// whole, so whoever watches dir never sees half a file.
func copyArtifact(src, dir, stamp, ext string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// src may be ffmpeg's output: only a regular file within the cap is
	// copied, so a link to a device or a FIFO cannot hang or fill the
	// artefact directory.
	in, err := safefile.OpenOwn(src, maxAudioFile)
	if err != nil {
		return "", err
	}
	defer in.Close()
	tmp, err := os.CreateTemp(dir, "."+tempPrefix+"*.partial")
	if err != nil {
		return "", err
	}
	defer os.Remove(tmp.Name())
	_, err = io.Copy(tmp, in)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", err
	}
	for n := 1; n < 1000; n++ {
		name := tempPrefix + stamp + "." + ext
		if n > 1 {
			name = tempPrefix + stamp + "-" + strconv.Itoa(n) + "." + ext
		}
		path := filepath.Join(dir, name)
		err := os.Link(tmp.Name(), path)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			// No hard links on this file system: rename, which replaces
			// silently, so check first.
			if _, serr := os.Lstat(path); serr == nil {
				continue
			}
			err = os.Rename(tmp.Name(), path)
		}
		if err != nil {
			return "", err
		}
		return path, nil
	}
	return "", fmt.Errorf("too many artefacts named %s%s*", tempPrefix, stamp)
}

// removeStale deletes the temporary audio files a previous sidecar left in
// dir when it died mid-playback.
func removeStale(dir string) int {
	matches, _ := filepath.Glob(filepath.Join(dir, tempPrefix+"*"))
	n := 0
	for _, m := range matches {
		if fi, err := os.Lstat(m); err == nil && fi.Mode().IsRegular() && os.Remove(m) == nil {
			n++
		}
	}
	return n
}
