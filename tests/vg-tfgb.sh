#!/bin/sh
# tests/vg-tfgb.sh - tfgb under valgrind memcheck, for tests/valgrind.sh:
# the tests run it as $TFGB, and tfgb runs it as TFGB_EXEC for the serve and
# worker processes it starts.  One log per process in $TFGB_VG_LOG.
exec valgrind --log-file="$TFGB_VG_LOG/vg.%p" --error-exitcode=99 \
	--leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite \
	--num-callers=30 --suppressions="$TFGB_VG_SUPP" "$TFGB_VG_BIN" "$@"
