// Package hooks is evokore's side of Claude Code's hooks: the programs
// Claude Code runs around a session (`evokore hook <event>`, with the hook
// payload JSON on stdin) that guard tool calls and record the session
// under EVOKORE_HOME, where the analytics natives, the dashboard and the
// voice sidecar read it.
//
// Files, all under EVOKORE_HOME (formats of EVOKORE-MCP, see
// docs/decisions.md for the few additions):
//
//	sessions/<sid>.jsonl            append-only manifest {schemaVersion, ts, sessionId, type, payload}
//	sessions/<sid>.json             the manifest folded: the legacy state snapshot
//	sessions/<sid>-replay.jsonl     one line per tool call (package replay)
//	sessions/<sid>-evidence.jsonl   tests, git operations and file changes, hash-chained
//	sessions/<sid>-trust.json       per-agent trust ledger fed by the evidence
//	sessions/<sid>-tasks.json       the task list tilldone enforces (written by the agent)
//	sessions/<sid>-pre-compact.json what the session knew before compaction
//	sessions/<sid>-purpose-hash.txt the last purpose reminder, for dedup
//	sessions/<sid>-audit-done       marks the repo audit as done
//	logs/hooks.jsonl                one line per hook run, rotated at 5 MB keeping 3
//	logs/damage-control.log         one line per damage-control decision that was not "allow"
//
// Damage-control (damage.go) judges a Bash command on its syntax tree:
// shell.go walks it (mvdan.cc/sh), word.go resolves its words,
// wrapper.go peels wrappers and follows code handed to another shell,
// code.go and token.go read interpreter one-liners, target.go lists the
// paths a command touches and surface.go guards evokore's approval
// surfaces. sandbox.go writes and reads Claude Code's sandbox block, the
// operating system's boundary around the agent's shell.
//
// Every hook is fail-safe: an internal error (an unreadable payload, a
// corrupt state file, an unwritable EVOKORE_HOME) is logged where possible
// and the hook exits 0, so a broken hook never stops the user's session.
// Only the decisions that exist to block do: damage-control's block (exit
// 2, the reason on stderr) and tilldone's refusal to stop (exit 2).
package hooks
