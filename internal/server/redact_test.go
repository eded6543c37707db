package server_test

import (
	"net"
	"strings"
	"testing"

	"github.com/evokore/evokore/internal/testutil/routertest"
)

// A secret a placeholder put into an HTTP child's URL never appears in
// proxy_server_status or on stderr when the child cannot be reached.
func TestSecretsInChildURLsNeverShowInErrors(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	h := routertest.New(t, map[string]any{
		"remote": map[string]any{"transport": "http", "url": "http://user:pw-literal-secret@" + addr + "/mcp/${PATH_TOKEN}?api_key=${API_KEY}&region=eu"},
	}, map[string]string{"PATH_TOKEN": "path-secret-1234", "API_KEY": "query-secret-5678", "EVOKORE_CHILD_SERVER_BOOT_TIMEOUT_MS": "3000"})
	cs := h.Connect(nil)
	h.Booted()
	status := routertest.Text(routertest.Call(t, cs, "proxy_server_status", map[string]any{}))
	if !strings.Contains(status, "remote") || !strings.Contains(status, `"error"`) {
		t.Fatalf("status: %s", status)
	}
	for _, secret := range []string{"path-secret-1234", "query-secret-5678", "pw-literal-secret"} {
		if strings.Contains(status, secret) {
			t.Errorf("proxy_server_status shows %q:\n%s", secret, status)
		}
		if strings.Contains(h.Stderr.String(), secret) {
			t.Errorf("stderr shows %q:\n%s", secret, h.Stderr.String())
		}
	}
}
