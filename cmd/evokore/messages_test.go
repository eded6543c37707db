package main_test

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// `trust --revoke ..` names the directory it forgot absolutely, as
// `trust` names the one it trusts.
func TestTrustNamesDirectoriesAbsolutely(t *testing.T) {
	dir := t.TempDir()
	project := filepath.Join(dir, "project")
	sub := filepath.Join(project, "sub")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := runEvokore(t, sub, nil, "trust", ".."); code != 0 || !strings.Contains(out, "Trusting "+project+" ") {
		t.Fatalf("trust ..: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := runEvokore(t, sub, nil, "trust", "--revoke", ".."); code != 0 || out != "No longer trusting "+project+".\n" {
		t.Fatalf("trust --revoke ..: exit %d\n%s%s", code, out, errOut)
	}
}

// `voice say` with no sidecar listening says so in one sentence, with
// the fix, not the dialer's error chain.
func TestVoiceSayWithoutASidecarSaysHowToStartOne(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	dir := t.TempDir()
	code, _, errOut := runEvokore(t, dir, []string{"VOICE_SIDECAR_PORT=" + port}, "voice", "say", "hello")
	want := "evokore: no voice sidecar answers at ws://127.0.0.1:" + port + ": start one with 'evokore voice' (VOICE_SIDECAR_HOST and VOICE_SIDECAR_PORT say where it listens)\n"
	if code != 1 || errOut != want {
		t.Errorf("voice say: exit %d, stderr %q, want %q", code, errOut, want)
	}
}
