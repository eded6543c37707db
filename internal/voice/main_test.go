package voice

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMain lets the test binary stand in for the helper programs the
// sidecar runs (a player, ffmpeg, a local whisper): the tests point the
// sidecar at os.Args[0] with "voice-helper" as the first argument.
func TestMain(m *testing.M) {
	if len(os.Args) > 2 && os.Args[1] == "voice-helper" {
		os.Exit(runHelper(os.Args[2], os.Args[3:]))
	}
	os.Exit(m.Run())
}

// helperArgv is the command line that runs helper mode with args.
func helperArgv(mode string, args ...string) []string {
	return append([]string{os.Args[0], "voice-helper", mode}, args...)
}

func runHelper(mode string, args []string) int {
	switch mode {
	case "player":
		// player LOG EXIT FILE: append "start PID BYTES MP3OK", play for a
		// moment (as real audio takes time), append "end PID", exit EXIT.
		log, exit, file := args[0], args[1], args[2]
		data, err := os.ReadFile(file)
		ok := err == nil && validMP3(data) == nil
		appendLine(log, fmt.Sprintf("start %d %d %v %s", os.Getpid(), len(data), ok, filepath.Base(file)))
		time.Sleep(20 * time.Millisecond)
		appendLine(log, fmt.Sprintf("end %d", os.Getpid()))
		if exit != "0" {
			return 1
		}
		return 0
	case "ffmpeg":
		// ffmpeg LOG <ffmpeg args>: record the arguments, copy -i's file to
		// the last argument.
		log, rest := args[0], args[1:]
		appendLine(log, strings.Join(rest, " "))
		var in string
		for i, a := range rest {
			if a == "-i" && i+1 < len(rest) {
				in = rest[i+1]
			}
		}
		src, err := os.ReadFile(in)
		if err != nil {
			return 1
		}
		if os.WriteFile(rest[len(rest)-1], src, 0o600) != nil {
			return 1
		}
		return 0
	case "whisper":
		// whisper FILE --model M --output_format json --output_dir D
		// [--language L]: write D/<stem>.json naming what it was given.
		file := args[0]
		flags := map[string]string{}
		for i := 1; i+1 < len(args); i += 2 {
			flags[args[i]] = args[i+1]
		}
		data, err := os.ReadFile(file)
		if err != nil {
			return 1
		}
		out := map[string]any{
			"text":     fmt.Sprintf(" heard %d bytes of %s with %s ", len(data), filepath.Ext(file), flags["--model"]),
			"language": flags["--language"],
			"segments": []map[string]any{{"end": 1.5, "avg_logprob": -0.1}, {"end": 2.25, "avg_logprob": -0.3}},
		}
		b, _ := json.Marshal(out)
		stem := strings.TrimSuffix(filepath.Base(file), filepath.Ext(file))
		if os.WriteFile(filepath.Join(flags["--output_dir"], stem+".json"), b, 0o600) != nil {
			return 1
		}
		return 0
	}
	fmt.Fprintln(os.Stderr, "unknown helper mode", mode)
	return 2
}

func appendLine(path, line string) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	io.WriteString(f, line+"\n")
}
