package proxy

import (
	"fmt"
	"time"
)

// Client-visible and log texts. Scripts written for EVOKORE-MCP match the
// sentinels and error texts, so they keep its wording.

// MsgBootComplete is the stderr sentinel once every child finished its first boot.
func MsgBootComplete(n int) string {
	return fmt.Sprintf("[EVOKORE] Proxy bootstrap complete: %d proxied tool(s) registered.", n)
}

// MsgChildBootFailed reports a child that could not start.
func MsgChildBootFailed(id string, err error) string {
	return fmt.Sprintf("Failed to boot child server '%s': %v", id, err)
}

// MsgConnectTimeout fails a child that did not connect within the boot timeout.
func MsgConnectTimeout(id string, d time.Duration) string {
	return fmt.Sprintf("Timed out connecting to child server '%s' after %dms", id, d.Milliseconds())
}

// MsgListTimeout fails a child that did not list its tools within the boot timeout.
func MsgListTimeout(id string, d time.Duration) string {
	return fmt.Sprintf("Timed out listing tools from child server '%s' after %dms", id, d.Milliseconds())
}

// MsgCallTimeout answers a proxied call that outlived the request timeout.
func MsgCallTimeout(tool, id string, d time.Duration) string {
	return fmt.Sprintf("Proxied tool '%s' on server '%s' timed out after %dms", tool, id, d.Milliseconds())
}

// MsgReconnecting answers a call to a child that is restarting: retryable.
func MsgReconnecting(id string) string {
	return fmt.Sprintf("Child server '%s' is reconnecting. Please retry in a moment.", id)
}

// MsgDuplicate reports a prefixed name an earlier server already took.
func MsgDuplicate(name, id string) string {
	return fmt.Sprintf("[EVOKORE] Skipping duplicate proxied tool '%s' from server '%s' (already registered).", name, id)
}

// MsgProxied reports what one child registered.
func MsgProxied(id string, n, skipped int) string {
	return fmt.Sprintf("Proxied %d tools from '%s' (%d duplicate(s) skipped)", n, id, skipped)
}

// MsgCollisionSummary sums up a child's collisions.
func MsgCollisionSummary(id string, skipped int) string {
	return fmt.Sprintf(`Duplicate collision summary: {"serverId":%q,"skippedDuplicates":%d,"policy":"first_registration_wins"}`, id, skipped)
}

// MsgChildExited reports a child that died.
func MsgChildExited(id string, err error) string {
	return fmt.Sprintf("[EVOKORE] Child server '%s' exited: %v", id, err)
}

// MsgDiedDuringCall answers a call whose child died under it.
func MsgDiedDuringCall(tool, id string) string {
	return fmt.Sprintf("Child server '%s' stopped while running '%s'. It is being restarted; retry in a moment.", id, tool)
}

// MsgStoppedReading answers a call that could not be sent because its
// child took none of its input for the whole request timeout.
func MsgStoppedReading(tool, id string, d time.Duration) string {
	return fmt.Sprintf("Child server '%s' stopped reading its input: '%s' could not be sent to it within %dms. It is being restarted; retry in a moment.", id, tool, d.Milliseconds())
}

// MsgNoCommand fails a stdio server written without a command.
func MsgNoCommand(id string) string {
	return fmt.Sprintf("Stdio server '%s' requires a 'command' field", id)
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

// MsgServerRemoved answers a call that reached a server a reload of
// mcp.config.json had just removed or replaced.
func MsgServerRemoved(tool, id string) string {
	return fmt.Sprintf("Tool '%s' is no longer available: server '%s' was removed from mcp.config.json by a reload.", tool, id)
}

// MsgAnswerNotJSON answers a request whose response line from the child
// was not valid JSON, so evokore could not pass it on.
func MsgAnswerNotJSON(id string) string {
	return fmt.Sprintf("Child server '%s' answered with a line that is not valid JSON; evokore dropped it (its log shows the start of the line).", id)
}

// MsgAnswerTooLong answers a request whose response line from the child
// was longer than evokore passes on.
func MsgAnswerTooLong(id string, limit int) string {
	return fmt.Sprintf("Child server '%s' answered with a message of more than %d bytes, evokore's limit for one message; it was dropped.", id, limit)
}
