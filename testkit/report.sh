# shellcheck shell=bash
# The one reporter of the suites whose checks are shell steps (k6, e2e, reliability's start,
# compose's live run): TAP lines, as prove reads them. Sourced, never run.
#
#   report NAME RC      records one check: "ok N - NAME" when RC is 0, else "not ok N - NAME"
#   report_end          prints the plan (1..N) and "# N passed, M failed"; returns 1 if any failed

REPORT_RUN=0 REPORT_FAILED=0

report() {
  REPORT_RUN=$((REPORT_RUN + 1))
  if [[ $2 == 0 ]]; then
    echo "ok $REPORT_RUN - $1"
  else
    echo "not ok $REPORT_RUN - $1"
    REPORT_FAILED=$((REPORT_FAILED + 1))
  fi
}

report_end() {
  echo "1..$REPORT_RUN"
  echo "# $((REPORT_RUN - REPORT_FAILED)) passed, $REPORT_FAILED failed"
  ((REPORT_FAILED == 0))
}
