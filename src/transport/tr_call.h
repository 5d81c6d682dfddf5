/* tr_call.h - the per-call state a transport keeps behind tr_call.priv,
 * and its client's list of completed, not yet reaped calls: shared by the
 * transports whose completions no library queues for them (socket, verbs;
 * gRPC has its completion queue).
 *
 * A transport's per-call struct starts with a struct tr_cstate.  The state
 * is TR_CS_IDLE before a submit and after reap handed the call back,
 * TR_CS_DONE while the call waits on the done list; the transport numbers
 * its own states from TR_CS_FIRST.  The done list is a dlist: a call is
 * appended when it completes, reap takes calls from the front in
 * completion order, a call released while done is unlinked from wherever
 * it is.  All of it is O(1) and allocates nothing but a call's state on its
 * first submit, so it may sit on the timed path.
 */
#ifndef TFGB_TR_CALL_H
#define TFGB_TR_CALL_H

#include <errno.h>
#include <stdlib.h>

#include "dlist.h"
#include "transport.h"

enum { TR_CS_IDLE, TR_CS_DONE, TR_CS_FIRST };

struct tr_cstate {
	struct tr_call *owner;
	struct dlist dl;    /* the client's done list, while TR_CS_DONE */
	int state;
};

/* Submit's first step: checks the call's method and iovec count, gives its
 * state (size bytes, zeroed on the call's first submit, a struct starting
 * with a struct tr_cstate) and the request body's bytes.  0, -EINVAL,
 * -ENOMEM, or -EBUSY when the call is not idle. */
static inline int tr_cstate_get(struct tr_call *call, size_t size, struct tr_cstate **out,
                                uint64_t *body)
{
	struct tr_cstate *s = call->priv;

	if (call->method < TR_ECHO || call->method > TR_METHOD_LAST || call->iovcnt < 0)
		return -EINVAL;
	if (!s) {
		if (!(s = call->priv = calloc(1, size)))
			return -ENOMEM;
		s->owner = call;
	}
	if (s->state != TR_CS_IDLE)
		return -EBUSY;
	*body = 0;
	for (int i = 0; i < call->iovcnt; i++)
		*body += call->iov[i].iov_len;
	*out = s;
	return 0;
}

/* Takes the transport's state (priv) from the call, for call_release:
 * NULL if it has none.  Any transport's, a tr_cstate or not. */
static inline void *tr_priv_take(struct tr_call *call)
{
	void *s = call->priv;

	call->priv = NULL;
	return s;
}

/* Completes the call with the reply's status and length: on the done list. */
static inline void tr_done_push(struct dlist *done, struct tr_cstate *s, int status, uint64_t len)
{
	s->owner->status = status;
	s->owner->resp_len = len;
	s->state = TR_CS_DONE;
	dlist_append(done, &s->dl);
}

/* Takes a done call off the list: idle again. */
static inline void tr_done_unlink(struct tr_cstate *s)
{
	dlist_unlink(&s->dl);
	s->state = TR_CS_IDLE;
}

/* Moves up to max calls from the front of the done list into out[]; how many. */
static inline int tr_done_take(struct dlist *done, struct tr_call **out, int max)
{
	int n = 0;

	while (n < max && !dlist_empty(done)) {
		struct tr_cstate *s = dlist_entry(done->next, struct tr_cstate, dl);
		tr_done_unlink(s);
		out[n++] = s->owner;
	}
	return n;
}

/* Unlinks every call still on the list (client_close). */
static inline void tr_done_clear(struct dlist *done)
{
	while (!dlist_empty(done))
		tr_done_unlink(dlist_entry(done->next, struct tr_cstate, dl));
}

#endif
