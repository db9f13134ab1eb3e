/*
 * netwatch.c - a remote that stops answering must not hang testflame.
 *
 * libgit2 1.5 (Debian 12's) has no network timeout (its server timeout
 * options came in 1.7): its socket stream blocks in connect(), send() and
 * recv() for as long as the peer keeps the connection open, so a CI job
 * pushing a baseline to a hung server would hang until the CI kills it.
 * The remote's network calls therefore run under a watchdog: after
 * TESTFLAME_NET_TIMEOUT seconds (default 120) without progress, a timer
 * sends SIGALRM to this thread, whose handler is installed without
 * SA_RESTART, so the blocked system call fails with EINTR and libgit2
 * gives up; the timer fires again every second until the call returns, in
 * case a loop retries. Progress (bytes sent or received, the server's
 * messages) resets the clock, so a slow transfer that moves is never cut.
 * One watched call at a time, from one thread.
 */
#include "store_int.h"

#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_SECONDS 120

static volatile sig_atomic_t expired;
static timer_t timer;
static bool armed;
static unsigned seconds;
static struct sigaction old_action;

static void on_alarm(int sig)
{
	(void)sig;
	expired = 1;
}

unsigned tf_netwatch_seconds(void)
{
	const char *v = getenv("TESTFLAME_NET_TIMEOUT");
	char *end;
	unsigned long s;

	if (!v || !*v)
		return DEFAULT_SECONDS;
	s = strtoul(v, &end, 10);
	return *end || s == 0 || s > 86400 ? DEFAULT_SECONDS : (unsigned)s;
}

static void rearm(void)
{
	struct itimerspec its = { { 1, 0 }, { (time_t)seconds, 0 } };
	if (armed)
		timer_settime(timer, 0, &its, NULL);
}

void tf_netwatch_begin(void)
{
	struct sigevent sev = { 0 };
	struct sigaction sa = { 0 };

	expired = 0;
	if (armed)
		return;
	seconds = tf_netwatch_seconds();
	sa.sa_handler = on_alarm;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = 0; /* no SA_RESTART: the blocked call must return */
	if (sigaction(SIGALRM, &sa, &old_action) != 0)
		return;
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = SIGALRM;
	sev._sigev_un._tid = (pid_t)syscall(SYS_gettid);
	if (timer_create(CLOCK_MONOTONIC, &sev, &timer) != 0) {
		sigaction(SIGALRM, &old_action, NULL);
		return;
	}
	armed = true;
	rearm();
}

void tf_netwatch_end(void)
{
	if (!armed)
		return;
	timer_delete(timer);
	armed = false;
	sigaction(SIGALRM, &old_action, NULL);
}

bool tf_netwatch_expired(void)
{
	return expired != 0;
}

/* libgit2's progress callbacks: progress resets the clock; after the time
 * ran out, they stop the transfer. */
static int on_progress(void)
{
	if (expired)
		return -1;
	rearm();
	return 0;
}

static int on_sideband(const char *str, int len, void *payload)
{
	(void)str;
	(void)len;
	(void)payload;
	return on_progress();
}

static int on_transfer(const git_indexer_progress *stats, void *payload)
{
	(void)stats;
	(void)payload;
	return on_progress();
}

static int on_push_transfer(unsigned int current, unsigned int total, size_t bytes, void *payload)
{
	(void)current;
	(void)total;
	(void)bytes;
	(void)payload;
	return on_progress();
}

static int on_pack(int stage, uint32_t current, uint32_t total, void *payload)
{
	(void)stage;
	(void)current;
	(void)total;
	(void)payload;
	return on_progress();
}

void tf_netwatch_callbacks(git_remote_callbacks *cb)
{
	cb->sideband_progress = on_sideband;
	cb->transfer_progress = on_transfer;
	cb->push_transfer_progress = on_push_transfer;
	cb->pack_progress = on_pack;
}
