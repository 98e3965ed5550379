#!/usr/bin/env bash
# Smoke test of a built svc image: runs it all-in-one (`docker run IMAGE`, the image's own entrypoint and embedded
# PostgreSQL) on the host's network, waits for /healthz 200, then runs an agent on the built-in `demo:echo` model
# and reads its stream to the end, which must be a `result`. The container is removed afterwards, pass or fail.
#
#   deploy/image-smoke.sh [IMAGE]      default svc:slim; SMOKE_PORT (default 18080) is the port it listens on
set -euo pipefail
IMAGE="${1:-svc:slim}"
PORT="${SMOKE_PORT:-18080}"
DOCKER="${DOCKER:-docker}"
KEY="ao_smoke_$(head -c 18 /dev/urandom | od -An -tx1 | tr -d ' \n')"
NAME="svc-smoke-$$"
BASE="http://127.0.0.1:$PORT"

cleanup() { "$DOCKER" rm -f -v "$NAME" >/dev/null 2>&1 || true; }
trap cleanup EXIT

"$DOCKER" run -d --name "$NAME" --network host -e PORT="$PORT" -e SVC_BOOTSTRAP_TOKEN="$KEY" \
  "$IMAGE" >/dev/null
for _ in $(seq 1 180); do
  [ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/healthz" || true)" = 200 ] && break
  [ "$("$DOCKER" inspect -f '{{.State.Running}}' "$NAME")" = true ] || break
  sleep 1
done
if [ "$(curl -s -o /dev/null -w '%{http_code}' "$BASE/healthz" || true)" != 200 ]; then
  echo "$IMAGE: /healthz never answered 200" >&2
  "$DOCKER" logs --tail 40 "$NAME" >&2 || true
  exit 1
fi
echo "$IMAGE: /healthz 200"

AUTH="Authorization: Bearer $KEY"
curl -sf "$BASE/api/profiles" -H "$AUTH" -H 'content-type: application/json' -d '{"name":"smoke","runtime":"general","model":"demo:echo"}' >/dev/null
RUN="$(curl -sf "$BASE/api/runs" -H "$AUTH" -H 'content-type: application/json' -d '{"profile":"smoke","prompt":"hello from the smoke test"}')"
RUN_ID="$(echo "$RUN" | sed 's/.*"runId":"\([^"]*\)".*/\1/')"
LAST="$(curl -sN --max-time 60 "$BASE/api/runs/$RUN_ID/stream" -H "$AUTH" | grep '^data:' | tail -n 1)"
case "$LAST" in
  *'"type":"result"'*) echo "$IMAGE: demo:echo run $RUN_ID ended with result" ;;
  *) echo "$IMAGE: run $RUN_ID did not end with result: $LAST" >&2; "$DOCKER" logs --tail 40 "$NAME" >&2 || true; exit 1 ;;
esac
