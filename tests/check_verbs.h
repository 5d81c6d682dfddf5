/* check_verbs.h - the verbs suite's harness (check_verbs.c), shared with
 * the files of its cases (check_verbs_*.c): a verbs
 * server in a thread and a client over the simulated fabric, the side
 * channel real TCP on loopback.
 */
#ifndef TFGB_CHECK_VERBS_H
#define TFGB_CHECK_VERBS_H

#include <signal.h>
#include <stdatomic.h>
#include <pthread.h>

#include "check_tfgb.h"
#include "job.h"
#include "payload.h"
#include "tr_verbs.h"

/* the longest wait for anything: 10 s, times TFGB_TEST_SLOW */
#define WAIT_NS ((uint64_t)(10e9 * tfgb_test_slow()))

/* ---- harness: a server thread and a client over the simulation ---------- */

struct vsrv {
	pthread_t thread;
	volatile sig_atomic_t stop;
	atomic_int ready, done;
	struct opt_hostport addr;
	struct tr_server_cfg cfg;
	struct err err;
	void *ctx;
	int rc;
	struct tr_serve_count count;   /* what it answered */
};

struct vcli {
	struct job j;
	struct payload p;
	void *ctx;
	struct tr_client *c;
	struct tr_conn *k;
};

struct run {
	int ok;            /* calls that completed OK and checked */
	int failed;        /* calls with another status */
	int first_status;  /* of the first failed one */
};

/* The link layer the running case simulates (VDEV_LINK_IB or _ETH). */
extern int vt_link;

/* A PS port whose side channel (port + 1) was free a moment ago. */
uint16_t vt_free_ps_port(void);
/* Default options, poll = event when event. */
void vt_opts_sim(struct vb_opts *o, int event);
/* Starts a server with options o (NULL: defaults, poll = event). */
void vt_srv_start(struct vsrv *s, const struct vb_opts *o, uint64_t max_message);
void vt_srv_stop(struct vsrv *s);
/* A job from -s style overrides (NULL-terminated), its payload, a client
 * with options o (NULL: defaults, busy polling), connected to s. */
void vt_cli_open(struct vcli *v, const struct vb_opts *o, const char *const *set,
                 const struct vsrv *s);
void vt_cli_close(struct vcli *v);
/* Every simulated object was released. */
void vt_assert_no_leak(void);
/* n calls of method, inflight at a time, each reply checked. */
struct run vt_run_calls(struct vcli *v, int method, int n, int inflight, uint64_t pull_n);
/* vdev_sim_reset(cfg) on vt_link. */
void vt_sim_reset(struct vdev_sim_cfg *cfg);
/* The fixture of InfiniBand cases. */
void vt_setup_ib(void);

/* The tests of each case, added to tc (one per link layer): core
 * (check_verbs_core.c, check_verbs_tensor.c), limits (check_verbs_limits.c),
 * errors (check_verbs_errors.c), sim (check_verbs_sim.c). */
void verbs_core_tests(TCase *tc);
void verbs_tensor_tests(TCase *tc);
void verbs_limits_tests(TCase *tc);
void verbs_errors_tests(TCase *tc);
void verbs_sim_tests(TCase *tc);
/* ... and coll (check_verbs_coll.c): the collective side. */
void verbs_coll_tests(TCase *tc);

/* The "device" case (check_verbs_dev.c). */
TCase *verbs_device_tcase(void);

#endif
