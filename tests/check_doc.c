/* check_doc.c - the manual pages, conf/tfgb.ini and examples/ agree with the code.
 *
 * Every page carries the sections below (doc_sect1, in that order) and
 * @VERSION@ on its .TH line;
 * every command page man/tfgb-<command>.1 lists exit statuses 0, 1 and 2
 * under EXIT STATUS (as ".TP" tags) and is named in tfgb.1's SEE ALSO.
 *
 * man/tfgb.ini.5 documents every key of job_keys[] (src/job/job.c) in a KEYS
 * section: one ".SS" heading per [section], then per key a ".TP" line, a
 * ".B key" line, the description and one line
 *     Range: <opt_format_range()>. Default: <value as --print-config prints it>.
 * ("empty" for an empty default).  The parser below reads exactly that form,
 * so a key added to the table without an entry, an entry for a key the table
 * lacks, or a range or default that drifted from the code fails the suite
 * (after git's t0450-txt-doc-vs-help.sh).
 */
#include <dirent.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check_tfgb.h"
#include "job.h"
#include "opt.h"
#include "validate.h"

#define DOC_MAN_DIR TFGB_SRCDIR "/man"
#define DOC_INI5 DOC_MAN_DIR "/tfgb.ini.5"
#define DOC_TFGB1 DOC_MAN_DIR "/tfgb.1"
#define DOC_GENPAYLOAD1 DOC_MAN_DIR "/tfgb-genpayload.1"
#define DOC_SERVE1 DOC_MAN_DIR "/tfgb-serve.1"
#define DOC_LATENCY1 DOC_MAN_DIR "/tfgb-latency.1"
#define DOC_BANDWIDTH1 DOC_MAN_DIR "/tfgb-bandwidth.1"
#define DOC_THROUGHPUT1 DOC_MAN_DIR "/tfgb-throughput.1"
#define DOC_TRAIN1 DOC_MAN_DIR "/tfgb-train.1"
#define DOC_CONF TFGB_SRCDIR "/conf/tfgb.ini"
#define DOC_EXAMPLES TFGB_SRCDIR "/examples"

#define DOC_MAX_ENTRIES 128
#define DOC_NAME_MAX 64
#define DOC_LINE_MAX 512
#define DOC_REPORT_MAX 4096

/* The commands of main.c's table (not linked into the tests). */
static const char *const doc_commands[] = {
	"serve", "latency", "bandwidth", "throughput", "train", "genpayload", "plot", "help",
	"version", NULL,
};

/* The command pages that must exist; any other man/tfgb-*.1 is checked too. */
static const char *const doc_command_pages[] = {
	DOC_SERVE1, DOC_LATENCY1, DOC_BANDWIDTH1, DOC_THROUGHPUT1, DOC_TRAIN1, DOC_GENPAYLOAD1, NULL,
};

/* The sections of a section-1 page, in the order every page has them. */
static const char *const doc_sect1[] = {
	"NAME", "SYNOPSIS", "DESCRIPTION", "OPTIONS", "EXIT STATUS", "EXAMPLES", "SEE ALSO", NULL,
};

/* The exit statuses every command page lists (src/run/tfgb.h). */
#define DOC_EXIT_CODES 0x7u /* 0, 1 and 2 */

/* One key entry of tfgb.ini(5). */
struct doc_entry {
	char section[DOC_NAME_MAX];
	char name[DOC_NAME_MAX];
	int line;                 /* line of its ".B key" */
	int nrange;               /* "Range:" lines seen in the entry */
	char range[DOC_LINE_MAX]; /* the first of them */
};

/* Problems found, one per line, bounded. */
struct doc_report {
	int n;
	char text[DOC_REPORT_MAX];
};

static void report_add(struct doc_report *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void report_add(struct doc_report *r, const char *fmt, ...)
{
	size_t used = strlen(r->text);
	va_list ap;

	r->n++;
	if (used + 2 >= sizeof r->text)
		return;
	va_start(ap, fmt);
	vsnprintf(r->text + used, sizeof r->text - used - 1, fmt, ap);
	va_end(ap);
	used = strlen(r->text);
	r->text[used] = '\n';
	r->text[used + 1] = 0;
}

/* The whole file as a NUL-terminated string; fails the test if unreadable. */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, cap = 0, n;

	ck_assert_msg(f != NULL, "cannot open '%s'", path);
	do {
		if (len + 4096 + 1 > cap) {
			cap = cap ? cap * 2 : 16384;
			buf = realloc(buf, cap);
			ck_assert_msg(buf != NULL, "out of memory reading '%s'", path);
		}
		n = fread(buf + len, 1, 4096, f);
		len += n;
	} while (n > 0);
	ck_assert_msg(!ferror(f), "cannot read '%s'", path);
	fclose(f);
	buf[len] = 0;
	return buf;
}

/* Copies the next line of *p (without its newline) into buf. */
static int next_line(const char **p, char *buf, size_t len)
{
	const char *s = *p, *e;
	size_t n;

	if (!*s)
		return 0;
	e = strchr(s, '\n');
	n = e ? (size_t)(e - s) : strlen(s);
	*p = e ? e + 1 : s + n;
	if (n && s[n - 1] == '\r')
		n--;
	if (n >= len)
		n = len - 1;
	memcpy(buf, s, n);
	buf[n] = 0;
	return 1;
}

/* A man(7) request line ".XX args": 1 if line is request `req`; *args is set
 * to what follows it, past blanks. */
static int is_request(const char *line, const char *req, const char **args)
{
	size_t n = strlen(req);

	if (line[0] != '.' || strncmp(line + 1, req, n) != 0)
		return 0;
	if (line[1 + n] != 0 && line[1 + n] != ' ' && line[1 + n] != '\t')
		return 0;
	line += 1 + n;
	while (*line == ' ' || *line == '\t')
		line++;
	if (args)
		*args = line;
	return 1;
}

/* The first argument of a request, without quotes. */
static void first_arg(const char *args, char *buf, size_t len)
{
	size_t n = 0;
	char end = ' ';

	if (*args == '"') {
		end = '"';
		args++;
	}
	while (args[n] && args[n] != end && args[n] != '\t' && n < len - 1)
		n++;
	memcpy(buf, args, n);
	buf[n] = 0;
}

/* Reads the key entries of the KEYS section of a tfgb.ini(5) source.
 * Returns how many were found (at most max); problems with the form go to r. */
static int parse_keys(const char *text, struct doc_entry *out, int max, struct doc_report *r)
{
	char line[DOC_LINE_MAX], section[DOC_NAME_MAX] = "";
	const char *p = text, *args;
	struct doc_entry *cur = NULL;
	int in_keys = 0, depth = 0, after_tp = 0, n = 0, lineno = 0;

	while (next_line(&p, line, sizeof line)) {
		int tp = after_tp;

		lineno++;
		after_tp = 0;
		if (is_request(line, "SH", &args)) {
			char name[DOC_NAME_MAX];
			first_arg(args, name, sizeof name);
			in_keys = !strcmp(name, "KEYS");
			cur = NULL;
			continue;
		}
		if (!in_keys)
			continue;
		if (is_request(line, "SS", &args)) {
			const char *lb = strchr(args, '['), *rb = lb ? strchr(lb, ']') : NULL;
			section[0] = 0;
			if (lb && rb && (size_t)(rb - lb - 1) < sizeof section) {
				memcpy(section, lb + 1, (size_t)(rb - lb - 1));
				section[rb - lb - 1] = 0;
			} else {
				report_add(r, "tfgb.ini.5:%d: .SS in KEYS names no [section]", lineno);
			}
			cur = NULL;
			continue;
		}
		if (is_request(line, "RS", NULL)) {
			depth++;
			continue;
		}
		if (is_request(line, "RE", NULL)) {
			if (depth > 0)
				depth--;
			continue;
		}
		if (is_request(line, "TP", NULL)) {
			after_tp = depth == 0;
			continue;
		}
		if (tp && is_request(line, "B", &args)) {
			if (n == max) {
				report_add(r, "tfgb.ini.5:%d: more than %d entries", lineno, max);
				return n;
			}
			if (!section[0])
				report_add(r, "tfgb.ini.5:%d: key entry outside a [section] heading", lineno);
			cur = &out[n++];
			memset(cur, 0, sizeof *cur);
			snprintf(cur->section, sizeof cur->section, "%s", section);
			first_arg(args, cur->name, sizeof cur->name);
			cur->line = lineno;
			continue;
		}
		if (!strncmp(line, "Range:", 6)) {
			if (!cur) {
				report_add(r, "tfgb.ini.5:%d: Range line outside a key entry", lineno);
				continue;
			}
			if (cur->nrange++ == 0)
				snprintf(cur->range, sizeof cur->range, "%s", line);
		}
	}
	return n;
}

/* The line an entry for key d must end with. */
static void expected_line(const struct opt_def *d, const struct job *defaults, char *buf,
                          size_t len)
{
	char range[256], *def = NULL;
	size_t dlen = 0;
	FILE *f = open_memstream(&def, &dlen);

	ck_assert_msg(f != NULL, "out of memory");
	opt_format(d, (const char *)defaults + d->off, f);
	ck_assert_int_eq(fclose(f), 0);
	opt_format_range(d, range, sizeof range);
	snprintf(buf, len, "Range: %s. Default: %s.", range, *def ? def : "empty");
	free(def);
}

/* Compares the KEYS section of a tfgb.ini(5) source with job_keys[]. */
static void compare_keys(const char *text, struct doc_report *r)
{
	static struct doc_entry entries[DOC_MAX_ENTRIES];
	char want[DOC_LINE_MAX];
	struct job defaults;
	int n, last = -1;

	ck_assert_int_eq(job_init(&defaults), 0);
	n = parse_keys(text, entries, DOC_MAX_ENTRIES, r);
	if (n == 0)
		report_add(r, "no key entries (.TP then .B key) under .SH KEYS");

	/* every key of the table: one entry with the right Range line */
	for (size_t i = 0; job_keys[i].name; i++) {
		const struct opt_def *d = &job_keys[i];
		int found = 0;

		expected_line(d, &defaults, want, sizeof want);
		for (int e = 0; e < n; e++) {
			if (strcmp(entries[e].section, d->section) || strcmp(entries[e].name, d->name))
				continue;
			if (found++)
				report_add(r, "%s.%s is documented twice (line %d)", d->section, d->name,
				           entries[e].line);
			else if (entries[e].nrange != 1)
				report_add(r, "%s.%s (line %d) has %d Range lines; want one: %s",
				           d->section, d->name, entries[e].line, entries[e].nrange, want);
			else if (strcmp(entries[e].range, want))
				report_add(r, "%s.%s (line %d) says '%s'; the code says '%s'", d->section,
				           d->name, entries[e].line, entries[e].range, want);
		}
		if (!found)
			report_add(r, "%s.%s has no entry; add one ending with: %s", d->section,
			           d->name, want);
	}

	/* every entry: a key of the table, in table order */
	for (int e = 0; e < n; e++) {
		const struct opt_def *d = job_key_find(entries[e].section, entries[e].name);
		int idx = d ? (int)(d - job_keys) : -1;

		if (!d || strcmp(d->section, entries[e].section) || strcmp(d->name, entries[e].name)) {
			report_add(r, "line %d documents [%s] %s, which src/job/job.c does not have",
			           entries[e].line, entries[e].section, entries[e].name);
			continue;
		}
		if (idx < last)
			report_add(r, "%s.%s (line %d) is out of the order of src/job/job.c",
			           d->section, d->name, entries[e].line);
		last = idx;
	}
	job_free(&defaults);
}

/* A copy of text with the first `from` replaced by `to`. */
static char *replace_once(const char *text, const char *from, const char *to)
{
	const char *at = strstr(text, from);
	size_t head, flen = strlen(from), tlen = strlen(to);
	char *out;

	ck_assert_msg(at != NULL, "'%s' not found in the page", from);
	head = (size_t)(at - text);
	out = malloc(strlen(text) - flen + tlen + 1);
	ck_assert_ptr_nonnull(out);
	memcpy(out, text, head);
	memcpy(out + head, to, tlen);
	strcpy(out + head + tlen, at + flen);
	return out;
}

/* Problems in `bad` beyond those of the page it was made from, so that the
 * error tests hold even while the page itself is out of date. */
static int extra_problems(const char *page, const char *bad)
{
	struct doc_report r0 = {0}, r1 = {0};

	compare_keys(page, &r0);
	compare_keys(bad, &r1);
	return r1.n - r0.n;
}

/* 1 if the page has a line ".B name ...", ".BR name ..." or ".BI name ...". */
static int has_bold_entry(const char *text, const char *name)
{
	static const char *const reqs[] = {"B", "BR", "BI", NULL};
	char line[DOC_LINE_MAX], word[DOC_NAME_MAX];
	const char *p = text, *args;

	while (next_line(&p, line, sizeof line))
		for (int i = 0; reqs[i]; i++)
			if (is_request(line, reqs[i], &args)) {
				first_arg(args, word, sizeof word);
				if (!strcmp(word, name))
					return 1;
			}
	return 0;
}

/* 1 if the page has the heading `.SH NAME` (quoted or not). */
static int has_heading(const char *text, const char *name)
{
	char line[DOC_LINE_MAX], word[DOC_LINE_MAX];
	const char *p = text, *args;

	while (next_line(&p, line, sizeof line))
		if (is_request(line, "SH", &args)) {
			if (*args == '"')
				first_arg(args, word, sizeof word);
			else
				snprintf(word, sizeof word, "%s", args);
			if (!strcmp(word, name))
				return 1;
		}
	return 0;
}

/* 1 if the page's .TH line carries @VERSION@, which make install replaces. */
static int th_has_version(const char *text)
{
	char line[DOC_LINE_MAX];
	const char *p = text;

	while (next_line(&p, line, sizeof line))
		if (is_request(line, "TH", NULL))
			return strstr(line, "@VERSION@") != NULL;
	return 0;
}

/* The tags (0 to 9) of the ".TP" entries under the page's EXIT STATUS
 * heading, as a bit mask: bit n for status n.  A tag is the line after .TP,
 * plain or as the argument of .B/.I/.BR/.IR. */
static unsigned exit_status_tags(const char *text)
{
	static const char *const reqs[] = {"B", "I", "BR", "IR", "RB", "RI", NULL};
	char line[DOC_LINE_MAX], word[DOC_LINE_MAX];
	const char *p = text, *args;
	unsigned mask = 0;
	int in_exit = 0, after_tp = 0;

	while (next_line(&p, line, sizeof line)) {
		int tp = after_tp;

		after_tp = 0;
		if (is_request(line, "SH", &args)) {
			first_arg(args, word, sizeof word);
			/* unquoted: the whole argument */
			if (*args != '"')
				snprintf(word, sizeof word, "%s", args);
			in_exit = !strcmp(word, "EXIT STATUS");
			continue;
		}
		if (!in_exit)
			continue;
		if (is_request(line, "TP", NULL)) {
			after_tp = 1;
			continue;
		}
		if (!tp)
			continue;
		snprintf(word, sizeof word, "%s", line);
		for (int i = 0; line[0] == '.' && reqs[i]; i++)
			if (is_request(line, reqs[i], &args)) {
				first_arg(args, word, sizeof word);
				break;
			}
		if (word[0] >= '0' && word[0] <= '9' && word[1] == 0)
			mask |= 1u << (word[0] - '0');
	}
	return mask;
}

/* 1 if the page's SEE ALSO section names `page` as ".BR page (1)". */
static int see_also_names(const char *text, const char *page)
{
	char line[DOC_LINE_MAX], word[DOC_LINE_MAX];
	const char *p = text, *args;
	int in_see = 0;

	while (next_line(&p, line, sizeof line)) {
		if (is_request(line, "SH", &args)) {
			snprintf(word, sizeof word, "%s", args);
			in_see = !strcmp(word, "SEE ALSO") || !strcmp(word, "\"SEE ALSO\"");
			continue;
		}
		if (in_see && is_request(line, "BR", &args)) {
			first_arg(args, word, sizeof word);
			if (!strcmp(word, page))
				return 1;
		}
	}
	return 0;
}

/* Calls fn(path) for every man/tfgb-*.1; returns how many there are. */
static int for_each_command_page(void (*fn)(const char *path, void *arg), void *arg)
{
	DIR *dir = opendir(DOC_MAN_DIR);
	struct dirent *de;
	int n = 0;

	ck_assert_msg(dir != NULL, "cannot open %s", DOC_MAN_DIR);
	while ((de = readdir(dir))) {
		size_t len = strlen(de->d_name);
		char path[4096];

		if (strncmp(de->d_name, "tfgb-", 5) || len < 8 || strcmp(de->d_name + len - 2, ".1"))
			continue;
		snprintf(path, sizeof path, "%s/%s", DOC_MAN_DIR, de->d_name);
		fn(path, arg);
		n++;
	}
	closedir(dir);
	return n;
}

static void check_page(const char *path, const char *const *headings)
{
	char *text = slurp(path);

	ck_assert_msg(th_has_version(text), "%s: its .TH line should carry @VERSION@", path);
	for (int i = 0; headings[i]; i++)
		ck_assert_msg(has_heading(text, headings[i]), "%s has no .SH %s", path, headings[i]);
	free(text);
}

/* ---- core: tfgb.ini(5) against the key table ---- */

START_TEST(test_doc_ini5_matches_key_table)
{
	char *text = slurp(DOC_INI5);
	struct doc_report r = {0};

	compare_keys(text, &r);
	ck_assert_msg(r.n == 0, "man/tfgb.ini.5 disagrees with src/job/job.c (%d):\n%s", r.n, r.text);
	free(text);
}
END_TEST

START_TEST(test_doc_ini5_documents_every_key_once)
{
	static struct doc_entry entries[DOC_MAX_ENTRIES];
	char *text = slurp(DOC_INI5);
	struct doc_report r = {0};
	int n = parse_keys(text, entries, DOC_MAX_ENTRIES, &r);

	ck_assert_int_eq(r.n, 0);
	ck_assert_int_eq(n, (int)job_key_count());
	free(text);
}
END_TEST

START_TEST(test_doc_tfgb1_lists_every_command)
{
	char *text = slurp(DOC_TFGB1);

	for (int i = 0; doc_commands[i]; i++)
		ck_assert_msg(has_bold_entry(text, doc_commands[i]),
		              "man/tfgb.1 has no entry (.B %s) for command '%s'", doc_commands[i],
		              doc_commands[i]);
	free(text);
}
END_TEST

START_TEST(test_doc_genpayload1_exists)
{
	char *text = slurp(DOC_GENPAYLOAD1);

	ck_assert_msg(strstr(text, "\\-\\-ini") != NULL,
	              "man/tfgb-genpayload.1 does not describe --ini");
	free(text);
}
END_TEST

/* The launcher variables src/host/cluster.c reads (its launchers[] table,
 * cluster_slurm_batch_step() and
 * cluster_run_id()); tfgb-throughput(1) names each under ENVIRONMENT. */
static const char *const doc_throughput_env[] = {
	"SLURM_PROCID", "SLURM_NTASKS", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
	"PMIX_RANK", "PMI_RANK", "PMI_SIZE", "SLURM_JOB_ID", "SLURM_STEP_ID",
	"OMPI_MCA_ess_base_jobid", "PMIX_NAMESPACE", "TFGB_RUN_ID", "SLURM_LOCALID",
	"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "PMIX_LOCAL_RANK", "SLURM_STEPID", NULL,
};

START_TEST(test_doc_throughput1_exists)
{
	char *text = slurp(DOC_THROUGHPUT1);

	ck_assert_msg(strstr(text, "\\-\\-task") != NULL,
	              "man/tfgb-throughput.1 does not describe --task");
	ck_assert_msg(has_heading(text, "ENVIRONMENT"), "man/tfgb-throughput.1 has no ENVIRONMENT");
	for (int i = 0; doc_throughput_env[i]; i++)
		ck_assert_msg(strstr(text, doc_throughput_env[i]) != NULL,
		              "man/tfgb-throughput.1 does not name %s", doc_throughput_env[i]);
	free(text);
}
END_TEST

/* ---- pages: the sections every page carries ---- */

START_TEST(test_doc_pages_have_sections)
{
	static const char *const sect5[] = {
		"NAME", "DESCRIPTION", "KEYS", "EXAMPLES", "SEE ALSO", NULL,
	};

	check_page(DOC_TFGB1, doc_sect1);
	for (int i = 0; doc_command_pages[i]; i++)
		check_page(doc_command_pages[i], doc_sect1);
	check_page(DOC_INI5, sect5);
}
END_TEST

static void check_exit_status(const char *path, void *arg)
{
	char *text = slurp(path);
	unsigned mask = exit_status_tags(text);

	(void)arg;
	ck_assert_msg((mask & DOC_EXIT_CODES) == DOC_EXIT_CODES,
	              "%s: EXIT STATUS should list 0, 1 and 2 as .TP entries (has%s%s%s)", path,
	              mask & 1 ? " 0" : "", mask & 2 ? " 1" : "", mask & 4 ? " 2" : "");
	free(text);
}

START_TEST(test_doc_command_pages_list_exit_statuses)
{
	for (int i = 0; doc_command_pages[i]; i++) {
		char *text = slurp(doc_command_pages[i]); /* fails if missing */
		free(text);
	}
	ck_assert_int_ge(for_each_command_page(check_exit_status, NULL), 5);
	check_exit_status(DOC_TFGB1, NULL);
}
END_TEST

static void check_page_sections(const char *path, void *arg)
{
	(void)arg;
	check_page(path, doc_sect1);
}

static void check_in_see_also(const char *path, void *arg)
{
	const char *tfgb1 = arg, *base = strrchr(path, '/');
	char page[DOC_NAME_MAX];

	base = base ? base + 1 : path;
	snprintf(page, sizeof page, "%.*s", (int)(strlen(base) - 2), base);
	ck_assert_msg(see_also_names(tfgb1, page), "man/tfgb.1's SEE ALSO does not name %s(1)",
	              page);
}

START_TEST(test_doc_command_pages_are_linked)
{
	char *text = slurp(DOC_TFGB1);

	for_each_command_page(check_page_sections, NULL);
	for_each_command_page(check_in_see_also, text);
	free(text);
}
END_TEST

/* The sections the Syntax paragraph of a tfgb.ini(5) source lists, one
 * ".B [name]" or ".BR [name] ," line each, joined by ", " into buf. */
static void syntax_sections(const char *text, char *buf, size_t len)
{
	const char *p = strstr(text, "\n.SS Syntax\n"), *end = p ? strstr(p + 1, "\n.PP\n") : NULL;
	size_t o = 0;

	buf[0] = 0;
	for (; p && p < end && (p = strstr(p + 1, "\n.B")) && p < end;) {
		const char *lb = strchr(p, '['), *rb = lb ? strchr(lb, ']') : NULL;
		if (!lb || !rb || lb[1] == ' ' || strchr(p + 1, '\n') < rb || o >= len)
			continue;
		o += (size_t)snprintf(buf + o, len - o, "%s%.*s", o ? ", " : "", (int)(rb - lb + 1), lb);
	}
}

/* The Syntax paragraph names every section of the job model, in order:
 * the list comes from job_section_names(), the registry's. */
START_TEST(test_doc_ini5_lists_every_section)
{
	char *text = slurp(DOC_INI5), got[512], want[512] = "";
	size_t o = 0;

	for (const char *const *s = job_section_names(); *s; s++)
		o += (size_t)snprintf(want + o, sizeof want - o, "%s[%s]", o ? ", " : "", *s);
	syntax_sections(text, got, sizeof got);
	ck_assert_str_eq(got, want);
	free(text);
}
END_TEST

/* ---- errors: the comparison catches drift (on in-memory copies) ---- */

START_TEST(test_doc_missing_key_is_caught)
{
	char *text = slurp(DOC_INI5);
	char *bad = replace_once(text, "\n.B workers\n", "\n.B wrokers\n");

	/* workers undocumented, and wrokers unknown to the table */
	ck_assert_int_eq(extra_problems(text, bad), 2);
	free(bad);
	free(text);
}
END_TEST

START_TEST(test_doc_extra_key_is_caught)
{
	char *text = slurp(DOC_INI5);
	char *bad = replace_once(text, "\n.SS \"The [server] section\"\n",
	                         "\n.SS \"The [server] section\"\n.TP\n.B backlog\n"
	                         "Range: [1, 4096]. Default: 128.\n");

	ck_assert_int_eq(extra_problems(text, bad), 1);
	free(bad);
	free(text);
}
END_TEST

START_TEST(test_doc_wrong_default_is_caught)
{
	char *text = slurp(DOC_INI5);
	char *bad = replace_once(text, "Default: 10s.", "Default: 11s.");

	ck_assert_int_eq(extra_problems(text, bad), 1);
	free(bad);
	free(text);
}
END_TEST

START_TEST(test_doc_wrong_range_is_caught)
{
	char *text = slurp(DOC_INI5);
	char *bad = replace_once(text, "Range: [1B, 1KiB).", "Range: [1B, 1KiB].");

	ck_assert_int_eq(extra_problems(text, bad), 1);
	free(bad);
	free(text);
}
END_TEST

START_TEST(test_doc_missing_exit_status_is_caught)
{
	char *text = slurp(DOC_LATENCY1);
	char *bad = replace_once(text, "\n.TP\n2\n", "\n.TP\n3\n");
	char *quoted = replace_once(text, "\n.SH EXIT STATUS\n", "\n.SH \"EXIT STATUS\"\n");

	ck_assert_uint_eq(exit_status_tags(text) & DOC_EXIT_CODES, DOC_EXIT_CODES);
	ck_assert_uint_eq(exit_status_tags(bad) & DOC_EXIT_CODES, 0x3u);
	ck_assert_uint_eq(exit_status_tags(quoted) & DOC_EXIT_CODES, DOC_EXIT_CODES);
	free(quoted);
	free(bad);
	free(text);
}
END_TEST

START_TEST(test_doc_misplaced_key_is_caught)
{
	char *text = slurp(DOC_INI5);
	/* the same entry under another section: missing there, unknown here */
	char *bad = replace_once(text, "\n.SS \"The [cluster] section\"\n",
	                         "\n.SS \"The [cluster] section\"\n.TP\n.B threads\n"
	                         "Range: [0, 256]. Default: 0.\n");

	ck_assert_int_eq(extra_problems(text, bad), 1);
	free(bad);
	free(text);
}
END_TEST

/* ---- files: the default job and the examples parse ---- */

START_TEST(test_doc_conf_equals_defaults)
{
	struct job defaults, conf;
	struct err err;
	char *want, *got;

	ck_assert_int_eq(job_init(&defaults), 0);
	ck_assert_int_eq(job_init(&conf), 0);
	ck_assert_msg(job_load_file(&conf, DOC_CONF, &err) == 0, "%s", err.msg);
	ck_assert_msg(job_validate(&conf, &err) == 0, "%s", err.msg);
	for (size_t i = 0; job_keys[i].name; i++)
		ck_assert_msg(conf.origin[i].file != NULL, "conf/tfgb.ini does not set %s.%s",
		              job_keys[i].section, job_keys[i].name);
	want = job_ini_string(&defaults);
	got = job_ini_string(&conf);
	ck_assert_ptr_nonnull(want);
	ck_assert_ptr_nonnull(got);
	ck_assert_str_eq(got, want);
	free(want);
	free(got);
	job_free(&conf);
	job_free(&defaults);
}
END_TEST

START_TEST(test_doc_examples_parse)
{
	DIR *dir = opendir(DOC_EXAMPLES);
	struct dirent *de;
	int figures = 0;

	ck_assert_msg(dir != NULL, "cannot open %s", DOC_EXAMPLES);
	while ((de = readdir(dir))) {
		size_t len = strlen(de->d_name);
		char path[4096];
		struct job j;
		struct err err;
		int fig;

		if (len < 5 || strcmp(de->d_name + len - 4, ".ini"))
			continue;
		snprintf(path, sizeof path, "%s/%s", DOC_EXAMPLES, de->d_name);
		ck_assert_int_eq(job_init(&j), 0);
		ck_assert_msg(job_load_file(&j, path, &err) == 0, "%s", err.msg);
		ck_assert_msg(job_validate(&j, &err) == 0, "%s", err.msg);
		job_free(&j);
		if (sscanf(de->d_name, "fig%2d", &fig) == 1 && fig >= 7 && fig <= 14)
			figures |= 1 << fig;
	}
	closedir(dir);
	for (int fig = 7; fig <= 14; fig++)
		ck_assert_msg(figures & (1 << fig), "examples/ has no fig%02d-*.ini", fig);
}
END_TEST

Suite *make_doc_suite(void)
{
	Suite *s = suite_create("doc");
	TCase *tc_core = tcase_create("core");
	TCase *tc_pages = tcase_create("pages");
	TCase *tc_errors = tcase_create("errors");
	TCase *tc_files = tcase_create("files");

	tcase_add_test(tc_core, test_doc_ini5_matches_key_table);
	tcase_add_test(tc_core, test_doc_ini5_documents_every_key_once);
	tcase_add_test(tc_core, test_doc_ini5_lists_every_section);
	tcase_add_test(tc_core, test_doc_tfgb1_lists_every_command);
	tcase_add_test(tc_core, test_doc_genpayload1_exists);
	tcase_add_test(tc_core, test_doc_throughput1_exists);
	suite_add_tcase(s, tc_core);

	tcase_add_test(tc_pages, test_doc_pages_have_sections);
	tcase_add_test(tc_pages, test_doc_command_pages_list_exit_statuses);
	tcase_add_test(tc_pages, test_doc_command_pages_are_linked);
	suite_add_tcase(s, tc_pages);

	tcase_add_test(tc_errors, test_doc_missing_key_is_caught);
	tcase_add_test(tc_errors, test_doc_extra_key_is_caught);
	tcase_add_test(tc_errors, test_doc_wrong_default_is_caught);
	tcase_add_test(tc_errors, test_doc_wrong_range_is_caught);
	tcase_add_test(tc_errors, test_doc_misplaced_key_is_caught);
	tcase_add_test(tc_errors, test_doc_missing_exit_status_is_caught);
	suite_add_tcase(s, tc_errors);

	tcase_add_test(tc_files, test_doc_conf_equals_defaults);
	tcase_add_test(tc_files, test_doc_examples_parse);
	suite_add_tcase(s, tc_files);
	return s;
}
