// Package workers owns background work a model dispatches and polls:
// worker_dispatch starts a worker and returns its id at once, and
// worker_context reads its state. All four worker types are implemented
// in Go; test_run and benchmark run a command, the other two only read
// files.
//
// State: EVOKORE_HOME/workers/<session>/<worker id>.json, written
// atomically at each step, pending → running → complete or error, in
// EVOKORE-MCP's shape {workerId, workerScript, status, startedAt,
// completedAt?, result?, error?, options} plus ownerPid, the router that
// runs it. A state left pending or running by a router that has since died
// reads as an error ("interrupted"), and one still running when the router
// shuts down is cancelled (its process group killed) and says so.
//
// Options (all optional unless noted; paths may be relative to the
// router's working directory, which is also the default):
//
//	test_run       command  argv array, e.g. ["go", "test", "./..."]
//	               cwd      directory to run in
//	               timeoutMs  default 600000
//	  Without a command: `go test ./...` when cwd has a go.mod, else
//	  `npm test` for a package.json, `python3 -m pytest` for a
//	  pyproject.toml, `cargo test` for a Cargo.toml; otherwise the
//	  dispatch is refused. Failing tests still complete the worker, with passed:false
//	  and the exit code; a command that cannot start, or the timeout, is
//	  an error.
//
//	benchmark      command  argv array: what to time; without it, a probe
//	                        (1 MiB written, synced, read back and hashed)
//	               iterations  runs to time, 1..100, default 5
//	               warmup   untimed runs first, 0..10, default 0
//	               cwd, timeoutMs (per run, default 120000)
//	  Reports each run's wall time and exit code, and min, max, mean,
//	  median and standard deviation in milliseconds.
//
//	repo_analysis  root     directory to analyse
//	  Counts files, bytes and lines per language (by file extension),
//	  the largest files, and the git branch when root is a checkout.
//
//	security_scan  root     directory to scan
//	  Looks for secrets (cloud keys, tokens, private keys, hard-coded
//	  passwords) line by line in text files up to 1 MiB, and reports each
//	  finding with the secret itself redacted.
//
// Directories named .git, node_modules, vendor, dist, build, target,
// .venv and __pycache__ are never walked. Commands run through the
// launcher (package procgroup) with its base allowlist of the router's
// environment plus the build tools' variables (GOPATH, GOCACHE, CARGO_HOME,
// …), never another server's secrets; they and everything they start end
// with the worker.
package workers
