/* check_main.c - runs every Check suite that is linked in. */
#include <stdlib.h>

#include "check_tfgb.h"
#include "transport.h"

int main(void)
{
	SRunner *sr = srunner_create(NULL);
	int failed;

	if (tr_registry_init() < 0)
		return EXIT_FAILURE;

#define TFGB_ADD_SUITE(name) srunner_add_suite(sr, make_##name##_suite());
	TFGB_SUITES(TFGB_ADD_SUITE)

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
