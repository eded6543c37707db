// Package policy decides whether a call may run, as four router stages
// (Policy.Stages), put in order by the composition root:
//
//   - permission: the RBAC level of the tool for the session's role, from
//     the compiled permission matrix and the user's permissions.yml
//     (rbac.go, level.go, matrix_gen.go); an undefined role fails closed;
//   - approval: require_approval tools run once a human said yes, by
//     elicitation, an operator (pending and decided approvals under
//     EVOKORE_HOME, decisions.go) or, opted into, EVOKORE-MCP's token
//     (approvals.go); shared by replicas through an ApprovalBackend
//     (approvals_shared.go);
//   - rate limit: token buckets per server and per tool (limits.go), in
//     process or through a shared RateBackend;
//   - cooldown: a failed call with the same arguments is refused for a
//     while (cooldown.go); the cooldown observer starts it after the call.
//
// It also keeps the tool pins (pins.go): the hash of each child tool's
// definition, and which changed tools are held until an operator accepts
// them. What a reload changes is one immutable Rules value. The texts
// clients see are in messages.go.
//
// It must not dispatch calls or know about transports: the router runs the
// stages, and shared backends (Redis) are given to it, not dialed by it.
package policy
