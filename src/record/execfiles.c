/*
 * execfiles.c - the files programs were started from, held from the exec.
 *
 * The reader learns of an exec from the side-band, a few milliseconds
 * later, and only then opens the binary to read its symbols (the
 * symbolizer pins it). A program that ends first and whose runner deletes
 * it at once (`go test` removes each package's pkg.test when it exits;
 * runners that clean a temporary directory) is gone by then, with its
 * tests' names. So the recorder asks the kernel for the exec itself:
 * fanotify's FAN_OPEN_EXEC, on every filesystem mounted here, queues an
 * event at the exec's open of the file, and the event holds the file until
 * it is read, however soon the file is deleted. The event precedes the
 * exec's mapping in the side-band, so when the reader meets the mapping,
 * the event is there to be read: no timing is involved.
 *
 * The marks are on whole filesystems, so other programs' execs come too:
 * one descriptor per file (not per exec) is kept, for a second and a few
 * reader turns after its last exec, and then closed; an exec whose mapping
 * the reader never meets is not ours. fanotify needs CAP_SYS_ADMIN; where
 * it is refused, a binary is pinned when its mapping is read, as before.
 */
#include "record_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/fanotify.h>
#include <sys/stat.h>
#include <unistd.h>

/* an entry lives this long, and this many reader turns, after its exec */
#define HOLD_NS (1000ULL * 1000 * 1000)
#define HOLD_TURNS 3
/* files held at once: beyond this, new execs are not held */
#define HOLD_MAX 512

typedef struct {
	uint32_t pid;
	uint64_t dev, ino;
	int fd;            /* shared by the entries of one file */
	uint64_t time;     /* when it was read */
	uint64_t turn;
} held;

struct tf_execfiles {
	int fan;
	uint64_t turn;
	size_t files;      /* distinct descriptors held */
	TF_VEC(held) v;
};

/* Mark every filesystem of the mount table (a mount where a filesystem
 * mark is refused); autofs is left alone, a look-up would mount it.
 * Returns how many marks took. */
static int mark_all(int fan)
{
	tf_buf b = TF_BUF_INIT;
	TF_VEC(const char *) devs = { 0 };
	int marked = 0;

	if (tf_file_read(&b, "/proc/self/mountinfo") != 0) {
		tf_buf_free(&b);
		return 0;
	}
	for (char *line = b.ptr, *next; line && *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		tf_mount_line m;
		if (!tf_procfs_parse_mountinfo_line(line, &m) || strcmp(m.type, "autofs") == 0)
			continue;
		bool seen = false;
		for (size_t i = 0; i < devs.n && !seen; i++)
			seen = strcmp(devs.v[i], m.dev) == 0;
		if (seen)
			continue;
		if (fanotify_mark(fan, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, FAN_OPEN_EXEC, AT_FDCWD,
				  m.mount) == 0 ||
		    fanotify_mark(fan, FAN_MARK_ADD | FAN_MARK_MOUNT, FAN_OPEN_EXEC, AT_FDCWD,
				  m.mount) == 0) {
			tf_vec_push(&devs, m.dev);
			marked++;
		}
	}
	tf_vec_free(&devs);
	tf_buf_free(&b);
	return marked;
}

int tf_execfiles_open(tf_execfiles **out)
{
	*out = NULL;
	int fan = fanotify_init(FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK,
				O_RDONLY | O_LARGEFILE | O_CLOEXEC);
	if (fan < 0)
		return tf_error_set_errno(errno == EPERM ? TF_EPERM : TF_EUNSUPPORTED,
					  "fanotify_init");
	if (mark_all(fan) == 0) {
		close(fan);
		return tf_error_set(TF_EUNSUPPORTED, "no filesystem took a fanotify mark");
	}
	tf_execfiles *x = tf_xcalloc(1, sizeof(*x));
	x->fan = fan;
	*out = x;
	return 0;
}

static void drop(tf_execfiles *x, size_t i)
{
	int fd = x->v.v[i].fd;
	x->v.v[i] = x->v.v[--x->v.n];
	for (size_t j = 0; j < x->v.n; j++)
		if (x->v.v[j].fd == fd)
			return;
	close(fd);
	x->files--;
}

static void add(tf_execfiles *x, uint32_t pid, int fd, uint64_t now)
{
	struct stat st;
	held h = { pid, 0, 0, fd, now, x->turn };

	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return;
	}
	h.dev = (uint64_t)st.st_dev;
	h.ino = (uint64_t)st.st_ino;
	for (size_t i = 0; i < x->v.n; i++) {
		if (x->v.v[i].ino == h.ino && x->v.v[i].dev == h.dev) {
			/* the same file, exec'd again */
			close(fd);
			h.fd = x->v.v[i].fd;
			break;
		}
	}
	if (h.fd == fd) {
		if (x->files >= HOLD_MAX) {
			close(fd);
			return;
		}
		x->files++;
	}
	tf_vec_push(&x->v, h);
}

/* Read what the kernel queued. */
static void read_queue(tf_execfiles *x)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct fanotify_event_metadata))));
	uint64_t now = tf_now_ns();

	for (;;) {
		ssize_t n = read(x->fan, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		const struct fanotify_event_metadata *m = (const void *)buf;
		for (; FAN_EVENT_OK(m, n); m = FAN_EVENT_NEXT(m, n)) {
			if (m->vers != FANOTIFY_METADATA_VERSION)
				return;
			if (m->fd >= 0)
				add(x, (uint32_t)m->pid, m->fd, now);
		}
	}
}

void tf_execfiles_poll(tf_execfiles *x)
{
	if (!x)
		return;
	read_queue(x);
	x->turn++;
	uint64_t now = tf_now_ns();
	for (size_t i = 0; i < x->v.n;) {
		const held *h = &x->v.v[i];
		if (h->time + HOLD_NS < now && h->turn + HOLD_TURNS < x->turn)
			drop(x, i);
		else
			i++;
	}
}

/* By the mapping's inode alone: its device may not be the one stat()
 * shows (overlayfs); the pid's own execs are few. */
static int find(const tf_execfiles *x, uint32_t pid, uint64_t ino)
{
	for (size_t i = 0; i < x->v.n; i++)
		if (x->v.v[i].pid == pid && x->v.v[i].ino == ino)
			return x->v.v[i].fd;
	return -1;
}

int tf_execfiles_held(const tf_execfiles *x, uint32_t pid, uint64_t ino)
{
	return x ? find(x, pid, ino) : -1;
}

int tf_execfiles_find(tf_execfiles *x, uint32_t pid, uint64_t ino)
{
	if (!x)
		return -1;
	int fd = find(x, pid, ino);
	if (fd < 0) {
		read_queue(x);
		fd = find(x, pid, ino);
	}
	return fd;
}

void tf_execfiles_free(tf_execfiles *x)
{
	if (!x)
		return;
	while (x->v.n)
		drop(x, x->v.n - 1);
	tf_vec_free(&x->v);
	close(x->fan);
	free(x);
}
