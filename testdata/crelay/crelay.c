/*
 * crelay: the floor of a stdio proxy, for `make bench-proxy`. It starts
 * the command named by its arguments and copies bytes between its own
 * stdin/stdout and the child's, one thread per direction, each blocked in
 * read(2) until bytes arrive. Nothing is parsed or buffered beyond one
 * read. The benchmark builds it with the C compiler it finds (cc) and
 * skips this row when there is none.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

struct pump {
	int from, to;
};

/* copy moves bytes from one descriptor to another until either end closes. */
static void copy(int from, int to)
{
	char buf[65536];
	for (;;) {
		ssize_t n = read(from, buf, sizeof buf);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		for (ssize_t off = 0; off < n;) {
			ssize_t w = write(to, buf + off, (size_t)(n - off));
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				return;
			off += w;
		}
	}
}

static void *pump_up(void *arg)
{
	struct pump *p = arg;
	copy(p->from, p->to);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: crelay COMMAND [ARG...]\n");
		return 2;
	}
	int down[2], up[2];
	if (pipe(down) != 0 || pipe(up) != 0) {
		perror("pipe");
		return 1;
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		dup2(down[0], 0);
		dup2(up[1], 1);
		close(down[0]);
		close(down[1]);
		close(up[0]);
		close(up[1]);
		execvp(argv[1], argv + 1);
		perror("exec");
		_exit(127);
	}
	close(down[0]);
	close(up[1]);
	struct pump child_to_us = {up[0], 1};
	pthread_t t;
	if (pthread_create(&t, NULL, pump_up, &child_to_us) != 0) {
		perror("pthread_create");
		return 1;
	}
	copy(0, down[1]);
	close(down[1]); /* our input ended: so does the child's */
	pthread_join(t, NULL);
	int status = 0;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
