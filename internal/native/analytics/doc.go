// Package analytics owns the session analytics tools, which read what
// other programs record about agent sessions and never write:
//
//   - session_context_health reads a Claude Code session transcript
//     (~/.claude/projects/<project>/<session>.jsonl, one JSON object a line)
//     and reports the context size of its latest message.usage, what a turn
//     costs at Sonnet prices (USD per million tokens: cache read 0.30,
//     cache write 3.75, input 3.00, output 15.00), the cache hit rate, and
//     whether to compact (above 40K, 60K and 80K tokens).
//   - session_analyze_replay and session_work_ratio read the hook records
//     under EVOKORE_HOME/sessions: <sid>-replay.jsonl (one line per tool
//     call: {ts, tool, summary, outcome, …}) and <sid>-evidence.jsonl (one
//     line per test run, git operation or file change). The first reports
//     tool frequency, runs of the same tool called back to back (a retry
//     or re-read loop) and sessions that produced no evidence; the second
//     the evidence lines per tool call of each session.
//   - session_trust_report reads the trust ledger <sid>-trust.json
//     ({sessionId, agents: {id: {agentId, score, tier, lastUpdated,
//     events}}, updatedAt}).
//
// Sessions are picked by the modification time of their replay file
// (days_back) and by project_filter, which matches the session id or the
// project the session manifest (<sid>.jsonl, its session_initialized
// event) or the legacy state (<sid>.json) records: workspaceRoot,
// canonicalRepoRoot or repoName. Every file is streamed line by line;
// lines that are not JSON are skipped.
package analytics
