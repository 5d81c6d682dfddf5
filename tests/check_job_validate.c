/* check_job_validate.c - suite "job", case "errors": the cross-key
 * checks, each naming where its value came from (file, line or -s), the
 * token, colliding addresses and the sections owned by other modules.
 * The fixture, its helpers and the suite: check_job.c, check_job.h. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_job.h"

/* --- core: job files ----------------------------------------------- */

/* cluster.token: its range, errors that never show it, and a public text
 * (what results keep) without it that still parses. */
START_TEST(test_job_token)
{
	static const char tok[] = "AbC-0123456789_.~+/=";
	const struct opt_def *sec[2];
	char kv[200], *full, *pub;
	struct job again;

	ck_assert_int_eq(job_override(&job, "cluster.token=short-secret", 1, &err), -1);
	ck_assert_msg(strstr(err.msg, "cluster.token") && !strstr(err.msg, "short-secret") &&
	              strstr(err.msg, "16 to 128 characters of A-Z a-z 0-9"), "%s", err.msg);
	ck_assert_int_eq(job_override(&job, "cluster.token=0123456789abcdef 01", 2, &err), -1);
	ck_assert_int_eq(job_override(&job, "cluster.token=0123456789abcdef\"", 3, &err), -1);
	memset(kv, 'a', sizeof kv);
	memcpy(kv, "cluster.token=", 14);
	kv[14 + 129] = 0;
	ck_assert_int_eq(job_override(&job, kv, 4, &err), -1);
	kv[14 + 128] = 0;
	ck_assert_int_eq(job_override(&job, kv, 5, &err), 0);
	ck_assert_int_eq(job_override(&job, "cluster.token=", 6, &err), 0);
	ck_assert_int_eq(job_secrets_set(&job, sec, 2), 0);

	snprintf(kv, sizeof kv, "cluster.token=%s", tok);
	ck_assert_int_eq(job_override(&job, kv, 7, &err), 0);
	ck_assert_str_eq(job.token, tok);
	ck_assert_int_eq(job_secrets_set(&job, sec, 2), 1);
	ck_assert_str_eq(sec[0]->name, "token");
	full = job_ini_string(&job);
	pub = job_ini_public(&job);
	ck_assert_ptr_nonnull(full);
	ck_assert_ptr_nonnull(pub);
	ck_assert_ptr_nonnull(strstr(full, tok)); /* --print-config runs the same job */
	ck_assert_ptr_null(strstr(pub, tok));
	ck_assert_ptr_nonnull(strstr(pub, "\ntoken =\n"));
	ck_assert_int_eq(job_init(&again), 0);
	ck_assert_int_eq(job_load_string(&again, "pub", pub, &err), 0);
	ck_assert_str_eq(again.token, "");
	job_free(&again);
	free(full);
	free(pub);
}
END_TEST

/* --- limits -------------------------------------------------------- */

/* Two processes of the job on one address: a job error naming the key,
 * whether the names are equal or only stand for the same address. */
START_TEST(test_job_addresses_collide)
{
	static const struct {
		const char *text, *want;
	} bad[] = {
		{"[cluster]\nps = localhost:7000, localhost:7000\nps_count = 2\n",
		 "t.ini:2: cluster.ps = localhost:7000, localhost:7000: PS 0 (localhost:7000) and "
		 "PS 1 (localhost:7000) are one address; each PS needs a port of its own"},
		{"[cluster]\nps = a:1, localhost:7000, b:1, 127.0.0.1:7000\nps_count = 4\n",
		 "t.ini:2: cluster.ps = a:1, localhost:7000, b:1, 127.0.0.1:7000: PS 1 "
		 "(localhost:7000) and PS 3 (127.0.0.1:7000) are one address; each PS needs a port "
		 "of its own"},
		{"[cluster]\nps = [::1]:7000, LocalHost.:7000\nps_count = 2\n",
		 "t.ini:2: cluster.ps = [::1]:7000, LocalHost.:7000: PS 0 ([::1]:7000) and PS 1 "
		 "(LocalHost.:7000) are one address; each PS needs a port of its own"},
		{"[cluster]\nps = [::0:1]:7000, [0::1]:7000\nps_count = 2\n",
		 "t.ini:2: cluster.ps = [::0:1]:7000, [0::1]:7000: PS 0 ([::0:1]:7000) and PS 1 "
		 "([0::1]:7000) are one address; each PS needs a port of its own"},
		{"[cluster]\nps = Node1:7000, node1:7000\nps_count = 2\n",
		 "t.ini:2: cluster.ps = Node1:7000, node1:7000: PS 0 (Node1:7000) and PS 1 "
		 "(node1:7000) are one address; each PS needs a port of its own"},
		{"[cluster]\nps = localhost:7000\nps_count = 2\ncontrol = 127.0.0.1:7001\n",
		 "t.ini:4: cluster.control = 127.0.0.1:7001: is the address of PS 1 (localhost:7001)"},
		{"[cluster]\nps = localhost:7001, 127.0.0.1:7000\nps_count = 2\n",
		 "t.ini:2: cluster.ps = localhost:7001, 127.0.0.1:7000: PS 1 (127.0.0.1:7000) is on "
		 "the control service's port, PS 0's port - 1 (cluster.control is empty); set "
		 "cluster.control or move PS 1"},
	};
	static const char *const good[] = {
		/* other hosts, other ports, the two loopback families apart */
		"[cluster]\nps = a:7000, b:7000\nps_count = 2\n",
		"[cluster]\nps = 127.0.0.1:7000, [::1]:7000\nps_count = 2\n",
		"[cluster]\nps = 127.0.0.1:7000, 127.0.0.2:7000\nps_count = 2\n",
		"[cluster]\nps = localhost:7000, localhost:7002\nps_count = 2\n",
		"[cluster]\nps = localhost:7001, otherhost:7000\nps_count = 2\n",
		"[cluster]\nps = localhost:7000\nps_count = 4096\n",
		/* one PS: the control service is not started beside it */
		"[cluster]\nps = localhost:7000\n",
		"[cluster]\nps = localhost:7000\nps_count = 2\ncontrol = otherhost:7001\n",
	};

	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_check_err(bad[i].text, bad[i].want);
		job_free(&job);
		job_init(&job);
	}
	for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
		const char *e = check(good[i]);
		ck_assert_msg(e == NULL, "%s: %s", good[i], e);
		job_free(&job);
		job_init(&job);
	}
}
END_TEST

/* --- errors: one message per class --------------------------------- */

/* A transport's keys land in its own typed section, where
 * job_section_get finds them, and print and re-parse as before. */
START_TEST(test_job_section_owned)
{
	struct job j;
	const struct sk_conf *sk;
	const struct vb_conf *vb;
	char *text;

	ck_assert_int_eq(job_init(&j), 0);
	ck_assert_msg(job_load_string(&j, "t.ini", "[socket]\nsndbuf = 1MiB\n[verbs]\n"
	                              "device = mlx5_0\nmtu = 2048\nrecv_depth = 32\n", &err) == 0,
	              "%s", err.msg);
	ck_assert_int_eq(job_override(&j, "socket.busy_poll=50us", 1, &err), 0);
	sk = job_section_get(&j, &tr_socket_section);
	vb = job_section_get(&j, &tr_verbs_section);
	ck_assert_ptr_nonnull(sk);
	ck_assert_ptr_nonnull(vb);
	ck_assert_uint_eq(sk->sndbuf, 1u << 20);
	ck_assert_uint_eq(sk->rcvbuf, 0);
	ck_assert_uint_eq(sk->busy_poll_ns, 50000);
	ck_assert_str_eq(vb->device, "mlx5_0");
	ck_assert_uint_eq(vb_mtu_bytes[vb->mtu], 2048);
	ck_assert_int_eq(vb->recv_depth, 32);
	ck_assert_int_eq(vb->send_depth, 256); /* its default */
	ck_assert_ptr_nonnull(text = job_ini_string(&j));
	ck_assert_ptr_nonnull(strstr(text, "\n[socket]\nsndbuf = 1MiB\n"));
	ck_assert_ptr_nonnull(strstr(text, "\n[verbs]\ndevice = mlx5_0\n"));
	free(text);
	job_free(&j);
}
END_TEST

/* The registry refuses a section whose rows name another section or lie
 * outside its struct, and adds a section only once. */
START_TEST(test_job_register_checks)
{
	struct bad { int64_t a; };
	static const struct opt_def other[] = {{"job", "a", OPT_INT, 0, "1", .help = ""}, {0}};
	static const struct opt_def outside[] = {{"bad", "a", OPT_INT, sizeof(struct bad), "1", .help = ""},
	                                          {0}};
	static const struct job_section s_other = {"bad", other, sizeof(struct bad), NULL, NULL};
	static const struct job_section s_outside = {"bad", outside, sizeof(struct bad), NULL, NULL};
	size_t n = job_key_count();

	ck_assert_int_eq(job_register(NULL, 0, &s_other), -1);
	ck_assert_int_eq(job_register(NULL, 0, &s_outside), -1);
	ck_assert_uint_eq(job_key_count(), n);
	ck_assert_int_eq(job_register("socket", 1, &tr_socket_section), 0);
	ck_assert_uint_eq(job_key_count(), n);
	ck_assert_str_eq(job_transport_name(TRANSPORT_SOCKET), "socket");
	ck_assert_str_eq(job_transport_names()[TRANSPORT_VERBS + 1], "mpi");
	ck_assert_ptr_null(job_transport_names()[TRANSPORT_VERBS + 2]);
}
END_TEST

/* --- errors: cross-key checks name where the value came from -------- */

START_TEST(test_job_validate_categories)
{
	ck_assert_check_err("[payload]\nscheme = random\ncategories = large\n",
	                    "t.ini:3: payload.categories = large: scheme random needs at least two categories");
	job_free(&job);
	job_init(&job);
	ck_assert_check_err("[payload]\ncategories = small\nscheme = skew\n",
	                    "t.ini:2: payload.categories = small: scheme skew needs at least two categories");
	job_free(&job);
	job_init(&job);
	ck_assert_check_err("[payload]\ncategories =\n",
	                    "t.ini:2: payload.categories = : name at least one of small, medium, large");
	job_free(&job);
	job_init(&job);
	/* uniform is fine with one */
	ck_assert_ptr_null(check("[payload]\ncategories = medium\n"));
}
END_TEST

START_TEST(test_job_validate_bias)
{
	ck_assert_check_err("[payload]\nscheme = skew\ncategories = small, medium\nbias = large\n",
	                    "t.ini:4: payload.bias = large: must be one of the chosen categories");
	job_free(&job);
	job_init(&job);
	/* the default bias is named as such */
	ck_assert_check_err("[payload]\nscheme = skew\ncategories = small, medium\n",
	                    "default: payload.bias = large: must be one of the chosen categories");
	job_free(&job);
	job_init(&job);
	/* bias matters only for skew */
	ck_assert_ptr_null(check("[payload]\nscheme = random\ncategories = small, medium\n"));
}
END_TEST

START_TEST(test_job_validate_custom)
{
	ck_assert_check_err("[payload]\nscheme = custom\n",
	                    "t.ini:2: payload.scheme = custom: needs a list of buffer sizes in payload.iovec");
	job_free(&job);
	job_init(&job);
	ck_assert_check_err("[payload]\nscheme = custom\niovec = 1B, 2B, 3B\niovecs = 4\n",
	                    "t.ini:4: payload.iovecs = 4: scheme custom lists 3 sizes in payload.iovec; "
	                    "drop iovecs or make it match");
	job_free(&job);
	job_init(&job);
	/* the default iovecs (10) is not a disagreement */
	ck_assert_ptr_null(check("[payload]\nscheme = custom\niovec = 1B, 2B, 3B\n"));
	job_free(&job);
	job_init(&job);
	ck_assert_ptr_null(check("[payload]\nscheme = custom\niovec = 1B, 2B, 3B\niovecs = 3\n"));
	job_free(&job);
	job_init(&job);
	ck_assert_check_err("[payload]\niovec = 1B, 2B\n",
	                    "t.ini:2: payload.iovec = 1B, 2B: is used only with scheme = custom "
	                    "(scheme is uniform)");
}
END_TEST

/* The list sets the count: an iovecs from an earlier layer gives way, one
 * from the same or a later layer must agree; validate settles iovecs. */
START_TEST(test_job_validate_custom_layers)
{
	ck_assert_load_ok("[payload]\nscheme = custom\niovecs = 5\n");
	ck_assert_int_eq(job_override(&job, "payload.iovec=1B, 2B", 1, &err), 0);
	ck_assert_int_eq(job_validate(&job, &err), 0);
	ck_assert_int_eq(job.iovecs, 2);
	assert_round_trip();

	job_free(&job);
	job_init(&job);
	ck_assert_load_ok("[payload]\nscheme = custom\niovec = 1B, 2B, 3B\n");
	ck_assert_int_eq(job_override(&job, "payload.iovecs=4", 2, &err), 0);
	ck_assert_int_eq(job_validate(&job, &err), -1);
	ck_assert_str_eq(err.msg, "-s #2: payload.iovecs = 4: scheme custom lists 3 sizes in "
	                          "payload.iovec; drop iovecs or make it match");
}
END_TEST

START_TEST(test_job_validate_ps)
{
	ck_assert_check_err("[cluster]\nps = a:1, b:2\nps_count = 3\n",
	                    "t.ini:2: cluster.ps = a:1, b:2: lists 2 addresses but ps_count is 3; give "
	                    "one address (consecutive ports) or exactly ps_count");
	job_free(&job);
	job_init(&job);
	ck_assert_check_err("[cluster]\nps = a:1, b:2\n",
	                    "t.ini:2: cluster.ps = a:1, b:2: lists 2 addresses but ps_count is 1; give "
	                    "one address (consecutive ports) or exactly ps_count");
	job_free(&job);
	job_init(&job);
	ck_assert_check_err("[cluster]\nps =\n", "t.ini:2: cluster.ps = : name at least one host:port");
}
END_TEST

START_TEST(test_job_validate_override_origin)
{
	ck_assert_load_ok("[payload]\nscheme = skew\n");
	ck_assert_int_eq(job_override(&job, "payload.categories=medium", 2, &err), 0);
	ck_assert_int_eq(job_validate(&job, &err), -1);
	ck_assert_str_eq(err.msg, "-s #2: payload.categories = medium: scheme skew needs at least two categories");
}
END_TEST

/* The tests above, in the order the case runs them (check_job.c). */
void job_validate_tests(TCase *tc)
{
	tcase_add_test(tc, test_job_validate_categories);
	tcase_add_test(tc, test_job_validate_bias);
	tcase_add_test(tc, test_job_validate_custom);
	tcase_add_test(tc, test_job_validate_custom_layers);
	tcase_add_test(tc, test_job_validate_ps);
	tcase_add_test(tc, test_job_validate_override_origin);
	tcase_add_test(tc, test_job_token);
	tcase_add_test(tc, test_job_addresses_collide);
	tcase_add_test(tc, test_job_section_owned);
	tcase_add_test(tc, test_job_register_checks);
}
