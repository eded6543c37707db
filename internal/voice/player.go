package voice

import (
	"fmt"
	"os/exec"
	"runtime"
	"strings"
)

// player builds the command line that plays one file and returns when the
// file has been played.
type player func(file string) []string

// findPlayer picks the player: VOICE_SIDECAR_PLAYER when set (its words,
// then the file), otherwise the platform's: PowerShell's media player on
// Windows, afplay on macOS, and mpv, ffplay or aplay elsewhere, the first
// found on PATH. aplay plays WAV only; it is the last resort.
func findPlayer(override, goos string, lookPath func(string) (string, error)) (player, error) {
	if words := strings.Fields(override); len(words) > 0 {
		return func(file string) []string { return append(append([]string(nil), words...), file) }, nil
	}
	switch goos {
	case "windows":
		return func(file string) []string {
			return []string{"powershell", "-NoProfile", "-NonInteractive", "-Command", powershellPlay(file)}
		}, nil
	case "darwin":
		return func(file string) []string { return []string{"afplay", file} }, nil
	}
	candidates := []struct {
		name string
		args []string
	}{
		{"mpv", []string{"--no-video", "--really-quiet", "--no-terminal"}},
		{"ffplay", []string{"-nodisp", "-autoexit", "-loglevel", "error"}},
		{"aplay", []string{"-q"}},
	}
	for _, c := range candidates {
		if path, err := lookPath(c.name); err == nil {
			return func(file string) []string { return append(append([]string{path}, c.args...), file) }, nil
		}
	}
	return nil, fmt.Errorf("no audio player found (mpv, ffplay or aplay); install one, set VOICE_SIDECAR_PLAYER, or set VOICE_SIDECAR_DISABLE_PLAYBACK=1")
}

// defaultPlayer is findPlayer for this machine.
func defaultPlayer(override string) (player, error) {
	return findPlayer(override, runtime.GOOS, exec.LookPath)
}

// powershellPlay is a script that plays file with the Windows media player
// and waits until it has finished.
func powershellPlay(file string) string {
	quoted := "'" + strings.ReplaceAll(file, "'", "''") + "'"
	return "Add-Type -AssemblyName PresentationCore; " +
		"$p = New-Object System.Windows.Media.MediaPlayer; " +
		"$p.Open([uri]" + quoted + "); " +
		"$n = 0; while (-not $p.NaturalDuration.HasTimeSpan -and $n -lt 100) { Start-Sleep -Milliseconds 50; $n++ }; " +
		"$p.Play(); " +
		"if ($p.NaturalDuration.HasTimeSpan) { Start-Sleep -Milliseconds ([int]$p.NaturalDuration.TimeSpan.TotalMilliseconds + 200) }; " +
		"$p.Close()"
}
