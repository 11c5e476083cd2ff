#!/bin/sh
# Bucket Job of the log store on Google Cloud Storage (`monitoring:objectStore: gcs`): Cloud Storage's JSON API with
# the pod's Workload Identity token from the GKE metadata server. buckets.get, and buckets.insert when the bucket is
# missing (404), up to ATTEMPTS tries. Exit 0 when the bucket exists. Needs sh, curl and sed.
#
# Environment:
#   GCS_BUCKET             bucket to ensure
#   GCS_LOCATION           Cloud Storage location to create it in, e.g. europe-west1, eu
#   ATTEMPTS               default 5 (spec limit "bucket job attempts")
#   RETRY_DELAY_SECONDS    pause between attempts, default 10
#   GCE_METADATA_HOST      metadata server, default 169.254.169.254 (as Google's client libraries read it)
#   GCS_ENDPOINT           default https://storage.googleapis.com
set -u

: "${GCS_BUCKET:?GCS_BUCKET is required}"
: "${GCS_LOCATION:?GCS_LOCATION is required}"
attempts="${ATTEMPTS:-5}"
delay="${RETRY_DELAY_SECONDS:-10}"
metadata="http://${GCE_METADATA_HOST:-169.254.169.254}/computeMetadata/v1"
api="${GCS_ENDPOINT:-https://storage.googleapis.com}/storage/v1"
body="$(mktemp)"
auth="$(mktemp)"
trap 'rm -f "$body" "$auth"' EXIT

# One HTTP call: prints the status code (000 when nothing answered), keeps the response in $body. The token goes to
# curl in a config file, never on a command line.
call() {
  curl -sS --connect-timeout 5 --max-time 10 -o "$body" -w '%{http_code}' -K "$auth" "$@"
}
metadata_get() {
  curl -sS --connect-timeout 5 --max-time 10 -f -H 'Metadata-Flavor: Google' "$metadata/$1"
}
# The error's message from a JSON API answer, on one line.
reason() {
  tr -d '\n' < "$body" | sed -n 's/.*"message" *: *"\([^"]*\)".*/\1/p' | head -c 300
}

attempt() {
  token="$(metadata_get instance/service-accounts/default/token | sed -n 's/.*"access_token" *: *"\([^"]*\)".*/\1/p')"
  if [ -z "$token" ]; then
    echo "no token from the metadata server at $metadata (GKE Workload Identity off for this node pool?)" >&2
    return 1
  fi
  printf 'header = "Authorization: Bearer %s"\n' "$token" > "$auth"
  status="$(call "$api/b/$GCS_BUCKET")"
  case "$status" in
    200) echo "bucket $GCS_BUCKET exists (attempt $i/$attempts): nothing to do"; return 0 ;;
    404) ;;
    403) echo "403 on buckets.get: the service account lacks storage.buckets.get, or another project owns $GCS_BUCKET: $(reason)" >&2; return 1 ;;
    000) echo "no answer from $api" >&2; return 1 ;;
    *) echo "buckets.get answered $status: $(reason)" >&2; return 1 ;;
  esac
  project="$(metadata_get project/project-id)" || { echo "no project id from the metadata server" >&2; return 1; }
  # Uniform bucket-level access (IAM only, no object ACLs) and no public access.
  status="$(call -X POST -H 'Content-Type: application/json' \
    --data "{\"name\":\"$GCS_BUCKET\",\"location\":\"$GCS_LOCATION\",\"iamConfiguration\":{\"uniformBucketLevelAccess\":{\"enabled\":true},\"publicAccessPrevention\":\"enforced\"}}" \
    "$api/b?project=$project")"
  case "$status" in
    200) echo "bucket $GCS_BUCKET created in $GCS_LOCATION, project $project (attempt $i/$attempts)"; return 0 ;;
    409) echo "409 on buckets.insert: the name $GCS_BUCKET is taken (bucket names are global): $(reason)" >&2; return 1 ;;
    *) echo "buckets.insert answered $status: $(reason)" >&2; return 1 ;;
  esac
}

i=1
while [ "$i" -le "$attempts" ]; do
  if attempt; then exit 0; fi
  echo "attempt $i/$attempts failed: Cloud Storage or the metadata server not reachable, or the service account lacks storage.buckets.get/create" >&2
  i=$((i + 1))
  if [ "$i" -le "$attempts" ]; then sleep "$delay"; fi
done
echo "giving up on bucket $GCS_BUCKET after $attempts attempts" >&2
exit 1
