package stdio

import "time"

// workerIdle is how long an idle worker waits for a job before it exits.
const workerIdle = 10 * time.Second

// workers run a connection's jobs (reading, and the fast path's work),
// each on a goroutine of its own, reusing goroutines that finished a job:
// a new goroutine starts with a small stack and grows it to the call
// pipeline's depth every time, which with its creation cost about 5 % of
// a proxied call's CPU.
type workers struct {
	jobs chan func() // unbuffered: a send succeeds only to an idle worker
}

// run hands job to an idle worker, or starts one.
func (w *workers) run(job func()) {
	select {
	case w.jobs <- job:
	default:
		go w.work(job)
	}
}

func (w *workers) work(job func()) {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		job()
		idle.Reset(workerIdle)
		select {
		case job = <-w.jobs:
		case <-idle.C:
			return
		}
	}
}
