package policy

import (
	"fmt"
	"strings"

	"github.com/evokore/evokore/internal/catalog"
	"github.com/evokore/evokore/internal/jsonenc"
)

// The client-visible texts of the policy. The ones EVOKORE-MCP clients or
// scripts match on keep the original's wording: the interception in token
// mode and the denial.

// DeniedText is the refusal of a denied tool, as EVOKORE-MCP words it.
func DeniedText(tool string) string {
	return "Execution of '" + tool + "' is strictly denied by EVOKORE-MCP security policies."
}

// ToolRateLimitText refuses a call over its tool's rate limit.
func ToolRateLimitText(server, tool string, retrySeconds int) string {
	return fmt.Sprintf("Rate limit exceeded for %s/%s. Retry after %ds.", server, tool, retrySeconds)
}

// ServerRateLimitText refuses a call over its server's rate limit.
func ServerRateLimitText(server string, retrySeconds int) string {
	return fmt.Sprintf("Rate limit exceeded for server '%s'. Retry after %ds.", server, retrySeconds)
}

// RateLimitUnavailableText refuses a call whose shared rate limit cannot
// be checked (the store replicas share is unreachable): fail closed.
func RateLimitUnavailableText(server string, err error) string {
	return fmt.Sprintf("Rate limit for server '%s' cannot be checked (shared store unavailable: %v). Retry later.", server, err)
}

// CooldownText refuses a call that failed moments ago with the same
// arguments.
func CooldownText(tool string, waitSeconds int) string {
	return fmt.Sprintf("[EVOKORE COOLDOWN] Tool '%s' is currently on cooldown to prevent infinite loops. Please wait %d seconds or try a different approach.", tool, waitSeconds)
}

// UndefinedRoleText refuses every call of a session whose named role is
// not defined.
func UndefinedRoleText(role, file string) string {
	if file == "" {
		file = "the shipped permissions"
	}
	return fmt.Sprintf("Role %q is not defined in %s, so evokore refuses every tool but its read-only natives until the role is defined or corrected.", role, file)
}

// InterceptionText is the token-mode interception, in EVOKORE-MCP's exact
// words: it trusts the model to ask the user before retrying.
func InterceptionText(tool, token string) string {
	return "[EVOKORE-MCP SECURITY INTERCEPTOR] ACTION REQUIRES HUMAN APPROVAL.\n\n" +
		"You attempted to call '" + tool + "'. You must stop right now and ask the user for explicit permission to execute this tool with these arguments. DO NOT proceed until they say YES.\n\n" +
		"If they approve, retry this exact same tool call but add the argument '" + TokenField + "' with the value '" + token + "'."
}

// OperatorInterceptionText tells the model a call waits for an operator.
// It names the approval and says who decides it, never how: the model
// may hold a shell, and a command line in its channel would be one it can
// run (docs/security.md).
func OperatorInterceptionText(tool, id string) string {
	return "[EVOKORE-MCP SECURITY INTERCEPTOR] ACTION REQUIRES HUMAN APPROVAL.\n\n" +
		"You attempted to call '" + tool + "'. It is waiting for operator approval (approval id " + id + "): " +
		"the user or an operator decides it, outside this conversation. " +
		"Once it is approved, retry this exact same tool call with the same arguments; " +
		"it will run once. Until then a retry returns this message."
}

// UndecidedInRunText answers a program's call whose approval was still
// pending when its run ended.
func UndecidedInRunText(tool, id string) string {
	return "'" + tool + "' was waiting for operator approval (approval id " + id + ") when the program's run ended; " +
		"it did not run. The approval stays pending: once it is approved, the same call runs once."
}

// HeldText is the status of a task whose call waits for its approval (id
// is empty while the client's user is asked): the id and who decides,
// never how.
func HeldText(tool, id string) string {
	if id == "" {
		return "'" + tool + "' is waiting for the user's approval."
	}
	return "'" + tool + "' is waiting for approval " + id + " by the user or an operator."
}

// UndecidedInTaskText answers a task's call whose approval was still
// pending when the task ended (cancelled, expired, or the router
// stopping).
func UndecidedInTaskText(tool, id string) string {
	return "'" + tool + "' was waiting for operator approval (approval id " + id + ") when its task ended; " +
		"it did not run. The approval stays pending: once it is approved, the same call runs once."
}

// DeniedApprovalText answers a call whose approval an operator denied.
func DeniedApprovalText(tool, id string) string {
	return "Execution of '" + tool + "' was denied by an operator (approval id " + id + "). Do not retry it."
}

// UsedApprovalText answers a retry whose approval was used up meanwhile.
func UsedApprovalText(tool string) string {
	return "The approval for this call of '" + tool + "' was already used or withdrawn; the call did not run."
}

// CannotApproveText refuses a call that cannot be bound to an approval.
func CannotApproveText(tool string, err error) string {
	return "Cannot ask for approval of '" + tool + "': " + err.Error()
}

// ElicitationText is what the user is asked when the client can elicit:
// the tool, where it runs, and its arguments as ShowArguments shows them,
// one to a line. Names come from children and are shown escaped.
func ElicitationText(e *catalog.Entry, shown string) string {
	where := "evokore"
	if e.Source == catalog.SourceProxy {
		where = "the '" + jsonenc.Graphic(e.Server) + "' server"
	}
	if shown == "" {
		return fmt.Sprintf("Allow the model to run '%s' on %s?\n\nArguments: (none)", jsonenc.Graphic(e.Name), where)
	}
	return fmt.Sprintf("Allow the model to run '%s' on %s?\n\nArguments:\n  %s", jsonenc.Graphic(e.Name), where,
		strings.ReplaceAll(shown, "\n", "\n  "))
}

// ElicitationFailedText refuses a call when asking the user failed.
func ElicitationFailedText(tool string, err error) string {
	return "Execution of '" + tool + "' needs the user's approval, and asking for it failed: " + err.Error() + ". The call did not run."
}

// DeclinedText answers a call the user declined (action decline or
// cancel).
func DeclinedText(tool, action string) string {
	if action == "cancel" {
		return "The user dismissed the approval of '" + tool + "'; the call did not run. Do not retry it unless the user asks."
	}
	return "The user declined to run '" + tool + "'; the call did not run. Do not retry it unless the user asks."
}

// StaleApprovalStateText answers a retry whose requestState does not
// approve this call: forged, from other arguments or another caller,
// expired, or already used.
func StaleApprovalStateText(tool string) string {
	return "The approval sent with this call of '" + tool + "' does not match it (other arguments, expired or already used); the call did not run. Call it again to be asked anew."
}
