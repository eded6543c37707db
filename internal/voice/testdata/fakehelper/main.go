// Command fakehelper stands in for the programs the voice sidecar runs, so
// its tests need no audio hardware, ffmpeg or whisper:
//
//	fakehelper player LOG EXIT FILE    append "start PID BYTES SHA256 NAME", play
//	                                   for a moment, append "end PID", exit EXIT
//	fakehelper ffmpeg LOG ARGS...      record ARGS, copy -i's file to the last arg
//	fakehelper whisper FILE FLAGS...   write <output_dir>/<stem>.json (also
//	                                   when the program is named "whisper");
//	                                   with --language fifo or zero, leave a
//	                                   FIFO or a link to /dev/zero there
//	fakehelper badffmpeg KIND ARGS...  leave a FIFO (KIND fifo) or a link to
//	                                   /dev/zero (zero) as the output
package main

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

func main() {
	// Installed under the name "whisper" it acts as whisper, for callers
	// that take a program path and no leading arguments.
	if strings.TrimSuffix(filepath.Base(os.Args[0]), ".exe") == "whisper" {
		os.Exit(run("whisper", os.Args[1:]))
	}
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: fakehelper MODE ARGS...")
		os.Exit(2)
	}
	os.Exit(run(os.Args[1], os.Args[2:]))
}

func run(mode string, args []string) int {
	switch mode {
	case "player":
		log, exit, file := args[0], args[1], args[2]
		data, err := os.ReadFile(file)
		if err != nil {
			appendLine(log, fmt.Sprintf("start %d 0 missing %s", os.Getpid(), filepath.Base(file)))
		} else {
			appendLine(log, fmt.Sprintf("start %d %d %x %s", os.Getpid(), len(data), sha256.Sum256(data), filepath.Base(file)))
		}
		// Real audio takes time to play; a moment is enough for two
		// players started together to overlap.
		time.Sleep(20 * time.Millisecond)
		appendLine(log, fmt.Sprintf("end %d", os.Getpid()))
		if exit != "0" {
			fmt.Fprintln(os.Stderr, "fake player failed on purpose")
			return 1
		}
		return 0
	case "ffmpeg":
		log, rest := args[0], args[1:]
		appendLine(log, strings.Join(rest, " "))
		var in string
		for i, a := range rest {
			if a == "-i" && i+1 < len(rest) {
				in = rest[i+1]
			}
		}
		src, err := os.ReadFile(in)
		if err != nil || os.WriteFile(rest[len(rest)-1], src, 0o600) != nil {
			return 1
		}
		return 0
	case "whisper":
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
		target := filepath.Join(flags["--output_dir"], stem+".json")
		if kind := flags["--language"]; kind == "fifo" || kind == "zero" {
			return leave(kind, target)
		}
		if os.WriteFile(target, b, 0o600) != nil {
			return 1
		}
		return 0
	case "badffmpeg":
		return leave(args[0], args[len(args)-1])
	}
	fmt.Fprintln(os.Stderr, "unknown mode", mode)
	return 2
}

// leave puts at path what a misbehaving program might: a FIFO no one
// writes, or a link to a device that never ends.
func leave(kind, path string) int {
	_ = os.Remove(path)
	var err error
	if kind == "fifo" {
		err = mkfifo(path)
	} else {
		err = os.Symlink("/dev/zero", path)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

func appendLine(path, line string) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	io.WriteString(f, line+"\n")
}
