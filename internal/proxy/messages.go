package proxy

import (
	"fmt"
	"time"
)

// Client-visible and log texts. Scripts written for EVOKORE-MCP match the
// sentinels and error texts, so they keep its wording.

func msgBootComplete(n int) string {
	return fmt.Sprintf("[EVOKORE] Proxy bootstrap complete: %d proxied tool(s) registered.", n)
}

func msgBootFailed(err error) string {
	return fmt.Sprintf("[EVOKORE] Background proxy bootstrap failed: %v", err)
}

func msgChildBootFailed(id string, err error) string {
	return fmt.Sprintf("Failed to boot child server '%s': %v", id, err)
}

func msgConnectTimeout(id string, d time.Duration) string {
	return fmt.Sprintf("Timed out connecting to child server '%s' after %dms", id, d.Milliseconds())
}

func msgListTimeout(id string, d time.Duration) string {
	return fmt.Sprintf("Timed out listing tools from child server '%s' after %dms", id, d.Milliseconds())
}

func msgCallTimeout(tool, id string, d time.Duration) string {
	return fmt.Sprintf("Proxied tool '%s' on server '%s' timed out after %dms", tool, id, d.Milliseconds())
}

func msgReconnecting(id string) string {
	return fmt.Sprintf("Child server '%s' is reconnecting. Please retry in a moment.", id)
}

func msgDuplicate(name, id string) string {
	return fmt.Sprintf("[EVOKORE] Skipping duplicate proxied tool '%s' from server '%s' (already registered).", name, id)
}

func msgProxied(id string, n, skipped int) string {
	return fmt.Sprintf("Proxied %d tools from '%s' (%d duplicate(s) skipped)", n, id, skipped)
}

func msgCollisionSummary(id string, skipped int) string {
	return fmt.Sprintf(`Duplicate collision summary: {"serverId":%q,"skippedDuplicates":%d,"policy":"first_registration_wins"}`, id, skipped)
}

func msgChildExited(id string, err error) string {
	return fmt.Sprintf("[EVOKORE] Child server '%s' exited: %v", id, err)
}

func msgDiedDuringCall(tool, id string) string {
	return fmt.Sprintf("Child server '%s' stopped while running '%s'. It is being restarted; retry in a moment.", id, tool)
}

func msgDisabled(id string) string {
	return fmt.Sprintf("Child server '%s' is disabled in config; its tools are unavailable.", id)
}

func msgFailed(id, lastErr string) string {
	return fmt.Sprintf("Child server '%s' failed to start: %s", id, lastErr)
}

func msgStillBooting(id string, d time.Duration) string {
	return fmt.Sprintf("Child server '%s' is still starting after %dms. Please retry in a moment.", id, d.Milliseconds())
}
