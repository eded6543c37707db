package childauth

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
)

// OpenBrowser shows url to the user: $BROWSER when set (a list separated
// by the path list separator, each a command in which %s stands for the
// URL, or after which it goes), else the platform's opener; the URL is
// always printed on w too, for a machine with no browser.
func OpenBrowser(ctx context.Context, url string, w io.Writer) error {
	fmt.Fprintf(w, "Opening the authorization page. If no browser opens, visit:\n\n  %s\n\n", url)
	if env := os.Getenv("BROWSER"); env != "" {
		for _, c := range strings.Split(env, string(os.PathListSeparator)) {
			if c = strings.TrimSpace(c); c == "" {
				continue
			}
			if start(browserCommand(ctx, c, url)) == nil {
				return nil
			}
		}
		return nil
	}
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.CommandContext(ctx, "open", url)
	case "windows":
		cmd = exec.CommandContext(ctx, "rundll32", "url.dll,FileProtocolHandler", url)
	default:
		cmd = exec.CommandContext(ctx, "xdg-open", url)
	}
	_ = start(cmd)
	return nil
}

// browserCommand runs one $BROWSER entry through the shell, the URL
// passed as an argument, never pasted into the command line.
func browserCommand(ctx context.Context, entry, url string) *exec.Cmd {
	if runtime.GOOS == "windows" {
		// No sh: the words of the entry, %s or the end replaced by url.
		args := strings.Fields(entry)
		if !strings.Contains(entry, "%s") {
			args = append(args, "%s")
		}
		for i := range args {
			args[i] = strings.ReplaceAll(args[i], "%s", url)
		}
		return exec.CommandContext(ctx, args[0], args[1:]...)
	}
	if strings.Contains(entry, "%s") {
		entry = strings.ReplaceAll(entry, "%s", `"$1"`)
	} else {
		entry += ` "$1"`
	}
	return exec.CommandContext(ctx, "sh", "-c", entry, "sh", url)
}

// start starts cmd and reaps it in the background: a browser that stays
// in the foreground does not hold the login up.
func start(cmd *exec.Cmd) error {
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	go func() { _ = cmd.Wait() }()
	return nil
}
