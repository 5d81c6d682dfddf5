/* srvinfo.h - who a server is: the Info call of tfgb.v1.Bench.
 *
 * A result names the malloc of every process it measured (alloc.h),
 * servers included, even one started by hand with another job.  The server
 * answers Info with a ServerInfo (proto/tfgb.proto) packed once when it
 * starts; a worker asks each PS once, before the warm-up, on a client and
 * connection of its own that it closes again, so that nothing of it
 * touches the measured connections (and a server that does not know Info,
 * which a socket server answers by closing the connection, breaks nothing).
 */
#ifndef TFGB_SRVINFO_H
#define TFGB_SRVINFO_H

#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "place.h"
#include "transport.h"

struct srvinfo {
	struct alloc_info alloc;  /* name "" when not known */
	char version[32];         /* the server's tfgb version, or "" */
	char host[64];
	int64_t pid;              /* 0 when not known */
	struct place_seen place;  /* its CPUs, memory policy ("" when not known)
	                           * and node (-2 when not known) */
	char why[160];            /* why it is not known, or "" */
};

/* This process's ServerInfo, packed into buf (cap >= TR_INFO_MAX).  Returns
 * its length. */
size_t srvinfo_pack(const char *transport, unsigned char *buf, size_t cap);

/* Decodes a ServerInfo.  0, or -1 when it does not parse. */
int srvinfo_unpack(const unsigned char *buf, size_t len, struct srvinfo *out);

/* Asks the server at addr, within deadline_ns (now_ns() clock), through the
 * transport's own client: out->alloc.name is "" and out->why says why when
 * it cannot tell.  Never fails otherwise: the run goes on. */
void srvinfo_query(const struct tr_ops *ops, void *trctx, const struct job *j,
                   const struct opt_hostport *addr, uint64_t deadline_ns, struct srvinfo *out);

/* "jemalloc 5.3.0" or "unknown (why)". */
void srvinfo_text(const struct srvinfo *s, char *buf, size_t len);

#endif
