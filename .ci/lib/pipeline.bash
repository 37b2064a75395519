# shellcheck shell=bash
# The pipeline's bookkeeping (sourced by .ci/test): every stage named and
# timed, lanes of stages run side by side, and a table at the end.
#
#   pipeline_init DIR          keeps its records in DIR (made if missing):
#                              stages.tsv and one log per lane
#   stage NAME CMD [ARG...]    runs CMD; prints "::: NAME" before and
#                              "::: NAME: ok in S s" (or FAILED, with the
#                              exit status) after, and records the stage.
#                              Returns CMD's exit status. Inside a lane the
#                              two marker lines also go to the terminal, so
#                              a reader sees what runs while the lane's
#                              output waits in its log
#   lane NAME FUNCTION         runs FUNCTION (a shell function calling
#                              stage) in the background, its output into
#                              DIR/lane-NAME.log; "nice" before FUNCTION
#                              runs it at the lowest priority
#   lanes_wait                 waits for every lane and prints each lane's
#                              log whole as it ends; returns 1 if a lane did
#   pipeline_failed            true when a stage recorded so far failed
#   pipeline_summary           prints the table (stage, lane, start, seconds,
#                              result) and the wall time; returns 1 if a
#                              stage failed
#
# Times are whole seconds of wall time; "start" is counted from
# pipeline_init, so lanes that overlap show it.

PIPELINE_DIR=
PIPELINE_T0=
PIPELINE_LANE=main
declare -A PIPELINE_LANE_OF_PID=()

pipeline_init() {
  PIPELINE_DIR=$1
  mkdir -p "$PIPELINE_DIR"
  : >"$PIPELINE_DIR/stages.tsv"
  PIPELINE_T0=$(date +%s)
  # fd 3: the terminal, for the marker lines of stages inside lanes.
  exec 3>&1
}

stage() {
  local name=$1 t0 t1 rc result
  shift
  t0=$(date +%s)
  stage_say "::: $name"
  set +e
  "$@"
  rc=$?
  set -e
  t1=$(date +%s)
  if [ "$rc" -eq 0 ]; then result=ok; else result="FAILED (exit $rc)"; fi
  printf '%s\t%s\t%s\t%s\t%s\n' "$name" "$PIPELINE_LANE" $((t0 - PIPELINE_T0)) $((t1 - t0)) "$result" \
    >>"$PIPELINE_DIR/stages.tsv"
  stage_say "::: $name: $result in $((t1 - t0)) s"
  return "$rc"
}

# stage_say LINE: LINE to the output, and to the terminal too inside a lane.
stage_say() {
  echo "$1"
  [ "$PIPELINE_LANE" = main ] || echo "[$PIPELINE_LANE] $1" >&3
}

lane() {
  local name=$1 low=
  shift
  if [ "$1" = nice ]; then low=1; shift; fi
  local fn=$1
  echo "::: lane $name started${low:+ (at the lowest priority)}"
  (
    PIPELINE_LANE=$name
    if [ -n "$low" ]; then renice -n 19 -p "$BASHPID" >/dev/null; fi
    "$fn"
  ) >"$PIPELINE_DIR/lane-$name.log" 2>&1 &
  PIPELINE_LANE_OF_PID[$!]=$name
}

lanes_wait() {
  local failed=0 pid name rc
  while [ ${#PIPELINE_LANE_OF_PID[@]} -gt 0 ]; do
    set +e
    wait -n -p pid "${!PIPELINE_LANE_OF_PID[@]}"
    rc=$?
    set -e
    name=${PIPELINE_LANE_OF_PID[$pid]}
    unset "PIPELINE_LANE_OF_PID[$pid]"
    echo
    echo "::::::::: lane $name: $([ "$rc" -eq 0 ] && echo ok || echo "FAILED (exit $rc)"); its log:"
    cat "$PIPELINE_DIR/lane-$name.log"
    echo "::::::::: end of lane $name"
    [ "$rc" -eq 0 ] || failed=1
  done
  return "$failed"
}

pipeline_failed() {
  grep -q $'\tFAILED' "$PIPELINE_DIR/stages.tsv"
}

pipeline_summary() {
  local wall=$(( $(date +%s) - PIPELINE_T0 ))
  echo
  echo "== pipeline summary (seconds of wall time; start counted from the pipeline's start)"
  {
    printf 'stage\tlane\tstart\tseconds\tresult\n'
    cat "$PIPELINE_DIR/stages.tsv"
  } | column -t -s $'\t'
  echo "wall time: $wall s ($((wall / 60)) min $((wall % 60)) s)"
  ! pipeline_failed
}
