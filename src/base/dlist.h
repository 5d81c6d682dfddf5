/* dlist.h - an intrusive doubly linked list with a sentinel head.
 *
 * Transports keep their clients' completed, not yet reaped calls on one
 * (tr_call.h).  Every operation is O(1) and allocates nothing, so it may
 * sit on the timed path.
 */
#ifndef TFGB_DLIST_H
#define TFGB_DLIST_H

#include <stddef.h>

struct dlist {
	struct dlist *prev, *next;
};

/* The struct of type `type` whose member `member` is the node `n`. */
#define dlist_entry(n, type, member) ((type *)(void *)((char *)(n) - offsetof(type, member)))

static inline void dlist_init(struct dlist *head)
{
	head->prev = head->next = head;
}

static inline int dlist_empty(const struct dlist *head)
{
	return head->next == head;
}

static inline void dlist_append(struct dlist *head, struct dlist *n)
{
	n->next = head;
	n->prev = head->prev;
	n->prev->next = n;
	head->prev = n;
}

static inline void dlist_unlink(struct dlist *n)
{
	n->prev->next = n->next;
	n->next->prev = n->prev;
	n->prev = n->next = NULL;
}

#endif
