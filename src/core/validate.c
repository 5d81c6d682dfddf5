/* validate.c - the checks of a job that span modules (validate.h). */
#include "validate.h"

#include <stdio.h>

#include "limit.h"
#include "payload.h"
#include "tls.h"

/* [payload] dtype: in the serialized modes every buffer holds whole
 * elements.  Checked on the layout itself, so that a category no buffer
 * uses is no error. */
static int check_dtype(const struct job *j, struct err *err)
{
	unsigned el = job_dtype_size(j->dtype);
	char where[JOB_NAME_MAX + 16];
	struct payload p;
	int rc = 0;

	if (el == 1 || j->mode == MODE_NONSERIALIZED) /* raw bytes declare no type */
		return 0;
	if (payload_layout(j, &p) < 0) {
		err_set(err, "out of memory checking payload.dtype");
		return -1;
	}
	job_key_where(j, "payload", "dtype", where, sizeof where);
	for (size_t i = 0; i < p.n && !rc; i++)
		if (p.buf[i].len % el)
			rc = job_key_err(j, err, "payload",
			                 j->scheme == SCHEME_CUSTOM ? "iovec" : job_cat_name(p.buf[i].cat),
			                 "buffer %zu is %llu bytes, not a whole number of %u-byte "
			                 "elements of payload.dtype = %s (%s)", i,
			                 (unsigned long long)p.buf[i].len, el, job_dtype_name(j->dtype),
			                 where);
	payload_free(&p);
	return rc;
}

int job_validate(struct job *j, struct err *err)
{
	if (job_check_keys(j, err) < 0 || check_dtype(j, err) < 0 || tls_check(j, err) < 0)
		return -1;
	return limit_check_job(j, err);
}
