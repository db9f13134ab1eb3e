/* test_spawn.c - forks helpers: each child runs rle_helper (exec'd) on a
 * block, the parent checks every child succeeded. */
#include "check.h"

#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char helper[4096];
	const char *slash = strrchr(argv[0], '/');
	(void)argc;
	snprintf(helper, sizeof(helper), "%.*srle_helper",
		 slash ? (int)(slash - argv[0] + 1) : 0, argv[0]);
	for (int i = 0; i < 3; i++) {
		pid_t pid = fork();
		CHECK(pid >= 0);
		if (pid == 0) {
			char seed[16];
			snprintf(seed, sizeof(seed), "%d", i);
			execl(helper, "rle_helper", seed, (char *)NULL);
			_exit(127);
		}
		int st;
		CHECK(waitpid(pid, &st, 0) == pid);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	}
	printf("test_spawn: ok\n");
	return 0;
}
