/* lease.h - sharing a local `tfgb serve` that a benchmark started for
 * itself with the other runs that find it, without stopping it under them.
 *
 * Two lock files (flock) per server port P on this machine, in
 * $XDG_RUNTIME_DIR/tfgb, else /tmp/tfgb-UID (mode 0700):
 *   serve-P.start  held exclusively while a run looks for a server at P and
 *                  starts one, and while a run or the server decides that
 *                  the server stops: two runs started at once on one port
 *                  take turns, and the second finds the first one's server;
 *   serve-P.lease  held shared by every run that uses the server at P,
 *                  whoever started it, for the whole run.
 * The run that started a server stops it at its end when it is the last
 * user (it gets serve-P.lease exclusively); otherwise it leaves it running.
 * The server (TFGB_LEASE names its lease file) stops by itself, within
 * LEASE_POLL_MS, once nobody holds its lease: after the last run ends, or
 * dies.  Whoever stops the server holding both locks removes the files.
 * A server started by hand has no lease and is never stopped by a
 * run; the last run that used it removes the files (lease_leave).  Locks die with their process: a killed run frees its lease.
 */
#ifndef TFGB_LEASE_H
#define TFGB_LEASE_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#include "err.h"

#define LEASE_POLL_MS 100 /* how often a leased server looks at its lease */

struct lease {
	int start_fd, lease_fd; /* -1 when not open */
	char path[128];         /* the lease file, for TFGB_LEASE */
	int last;               /* lease_last found no other user: the files go */
};

/* Takes the start lock of port (waiting for another run's turn until
 * deadline_ns or *stop) and a shared lease.  0; -EAGAIN with err set when
 * the turn did not come in time; another -errno when the lock files cannot
 * be had (the caller goes on without a lease, as before leases). */
int lease_take(uint16_t port, uint64_t deadline_ns, volatile sig_atomic_t *stop,
               struct lease *l, struct err *err);

/* The run has found or started its server: other runs may look now. */
void lease_looked(struct lease *l);

/* The end of the run that started the server: 1 when no other run holds a
 * lease (the caller stops the server, then lease_close, so that no run
 * attaches meanwhile); 0 when others use it (the lease is given up: leave
 * the server running, it stops by itself after them). */
int lease_last(struct lease *l, uint64_t deadline_ns);

/* The end of a run that used a server it did not start (started by hand,
 * or by another run): gives the lease up, and removes the files when no
 * other run holds one and no server started with a lease watches them
 * (lease_watch_start writes its pid into the lease file; such a server
 * removes them itself when it stops).  A start lock not had by
 * deadline_ns leaves them. */
void lease_leave(struct lease *l, uint64_t deadline_ns);

/* Gives up whatever l holds; accepts a lease never taken. */
void lease_close(struct lease *l);

/* Server side: 1 when nobody holds a lease on the lease file fd, and then
 * holds both locks until the process exits (no run attaches to a server
 * that is stopping); 0 otherwise.  start_fd is the start lock's file. */
int lease_idle(int start_fd, int lease_fd);

/* A server's watch over its lease (TFGB_LEASE): a thread that sets *stop
 * once nobody holds the lease (lease_idle), and, once the process that
 * started the server is gone, points the server's standard output and error
 * at /dev/null (a pipe of its starter's caller, such as a shell's $(...),
 * then sees its end).  Also clears the parent-death signal: the server
 * outlives its starter while other runs use it.  0, or -errno. */
struct lease_watch;
int lease_watch_start(const char *lease_path, volatile sig_atomic_t *stop,
                      struct lease_watch **out);
/* Ends the watch; the locks it took are given up with the process (call it
 * after the server closed its ports, or not at all).  A server stopped
 * otherwise than by its lease (a signal) removes the files too when nobody
 * holds the lease within 5 x LEASE_POLL_MS.  Accepts NULL. */
void lease_watch_end(struct lease_watch *w);

/* The files of port: 0, or -errno (the directory cannot be made). */
int lease_paths(uint16_t port, char *start, char *lease, size_t len);

#endif
