/* tls.c - checking and reading the TLS files of a job. */
#include "tls.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The values of [job] transport that run over TLS, bit i for value i
 * (tls_transport_allow). */
static unsigned tls_transports;

void tls_transport_allow(int transport)
{
	if (transport >= 0 && transport < 32)
		tls_transports |= 1u << transport;
}

/* "grpc", or "grpc or x": the transports TLS is supported with. */
static void allowed_text(char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = 0;
	for (int i = 0; i < 32 && job_transport_names()[i] && o < len; i++)
		if (tls_transports & 1u << i)
			o += (size_t)snprintf(buf + o, len - o, "%s%s", o ? " or " : "",
			                      job_transport_name(i));
}

void tls_free(struct job_tls *t)
{
	free(t->cert);
	free(t->key);
	free(t->ca);
	t->cert = t->key = t->ca = NULL;
}

/* 1 when fd is a regular file, else 0 with why set. */
static int regular(int fd, struct err *why)
{
	struct stat st;

	if (fstat(fd, &st) < 0)
		err_set(why, "cannot read it: %s", strerror(errno));
	else if (S_ISDIR(st.st_mode))
		err_set(why, "cannot read it: %s", strerror(EISDIR));
	else if (!S_ISREG(st.st_mode))
		err_set(why, "cannot read it: not a regular file");
	else
		return 1;
	return 0;
}

/* Reads a whole PEM file into *out (NUL-terminated).  0, or -1 with why
 * set (the message around it names the path).  Only a regular file: a FIFO
 * or a device could block the job check or never end. */
static int read_pem(const char *path, char **out, struct err *why)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	char *text = NULL;
	FILE *f;
	size_t n;

	if (fd < 0) {
		err_set(why, "cannot open it: %s", strerror(errno));
		return -1;
	}
	if (!regular(fd, why)) {
		close(fd);
		return -1;
	}
	if (!(f = fdopen(fd, "r")) || !(text = malloc(TLS_PEM_MAX + 1))) {
		err_set(why, "out of memory reading it");
		if (f)
			fclose(f);
		else
			close(fd);
		return -1;
	}
	n = fread(text, 1, TLS_PEM_MAX + 1, f);
	if (ferror(f)) {
		err_set(why, "cannot read it: %s", strerror(errno));
	} else if (n > TLS_PEM_MAX) {
		err_set(why, "the file is over 1MiB; is it a PEM file?");
	} else {
		char *fit = realloc(text, n + 1); /* kept for the whole run */
		fclose(f);
		*out = fit ? fit : text;
		(*out)[n] = 0;
		return 0;
	}
	fclose(f);
	free(text);
	return -1;
}

/* Whether text holds a PEM block whose label ends with `label`
 * ("CERTIFICATE"; "PRIVATE KEY" also matches "RSA PRIVATE KEY"). */
static int has_block(const char *text, const char *label)
{
	size_t ll = strlen(label);

	for (const char *p = strstr(text, "-----BEGIN "); p; p = strstr(p + 1, "-----BEGIN ")) {
		const char *e = strstr(p + 11, "-----");
		if (e && (size_t)(e - p - 11) >= ll && !memcmp(e - ll, label, ll) &&
		    memchr(p, '\n', (size_t)(e - p)) == NULL)
			return 1;
	}
	return 0;
}

/* Reads key `name` (path) when set and checks that it holds a `label`
 * block.  0, or -1 with err. */
static int load(struct job *j, const char *name, const char *path, const char *label,
                char **out, struct err *err)
{
	struct err why;

	if (!*path)
		return 0;
	if (read_pem(path, out, &why) < 0)
		return job_key_err(j, err, "server", name, "%s", why.msg);
	if (strlen(*out) == 0 || !has_block(*out, label))
		return job_key_err(j, err, "server", name, "the file holds no PEM %s "
		                   "(-----BEGIN %s-----)", label, label);
	return 0;
}

int tls_check(struct job *j, struct err *err)
{
	static const char *const names[] = {"tls_cert", "tls_key", "tls_ca"};
	const char *paths[] = {j->tls_cert, j->tls_key, j->tls_ca};

	char allowed[128];

	tls_free(&j->tls);
	for (int i = 0; i < 3; i++)
		if (*paths[i] && !(j->transport >= 0 && j->transport < 32 &&
		                   tls_transports & 1u << j->transport)) {
			allowed_text(allowed, sizeof allowed);
			return job_key_err(j, err, "server", names[i],
			                   "TLS is supported only with transport = %s (transport is %s)",
			                   allowed, job_transport_name(j->transport));
		}
	if (*j->tls_cert && !*j->tls_key)
		return job_key_err(j, err, "server", "tls_cert",
		                   "needs server.tls_key, the certificate's private key");
	if (*j->tls_key && !*j->tls_cert)
		return job_key_err(j, err, "server", "tls_key",
		                   "needs server.tls_cert, the certificate it belongs to");
	if (load(j, "tls_cert", j->tls_cert, "CERTIFICATE", &j->tls.cert, err) < 0 ||
	    load(j, "tls_key", j->tls_key, "PRIVATE KEY", &j->tls.key, err) < 0 ||
	    load(j, "tls_ca", j->tls_ca, "CERTIFICATE", &j->tls.ca, err) < 0) {
		tls_free(&j->tls);
		return -1;
	}
	return 0;
}
